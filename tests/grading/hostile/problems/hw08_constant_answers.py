"""All of hw08: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9Wm1z28YR/s5fsVVmYsAGYdF2Mi0deizXTp06dauIVTrjcSEQOJIIQYDGCyk69X/vs3t3eCGlxJ2OzLFF8nC7t7cvz+7t8eTk5HW+Vru8WNEfaTikaREmWZItxlSpMFqqguZ5EWGAvqZqqSjNy9In+knNVaGySFGZp3WV5Jk/GPyQlVVRR1Ve0DqsVJGE6ZiyvKJNWFSUz4VBgklhmqoYo9EqXCiPMrXFOsswizFa5VRWdayyitd5BRkG8zqLeAmIkqb5rhQ+lVpvUqxyr6Qoz6oijKqn8iDK12umpkWyVTISQ5RtKEIS/fkHWhRhrJhLUg7mSaoIK5O63qgIVPM6TSF+sSrJubpaQxnVXFPQcnfKOiqavQ+HSbvlSpVV+bAduLpy/cF0ydzLnSpK3pmWD6SbiqDcaEXruqwoXBRK0S6plnR1tVJ7/5cyz66uoNKLZbhR5Zhe0CysoqVHF1B4XWDtVGWLCgNTqsJioapm4CXFwTqPVerRa1qqMC4xtqQJHjyk197gkrZ5FM7qNCz2Hv0YxCqChiJQFDRL82hV+oOTk5PBvMjXFATzuqoLFQSUrDc5zBhmsKgosxwMzBisvWy+ZPV6s6ewpGwzwCtWcyo3aVIFIotzDbHc8YDwwirOC+wA8rk0fEb85bX+vnTHoiyhoTKB9md7/R6mObzxpUfrfKv9BROTgvJdRuF1UvosPLM3rLHza79kPcpoobCfDEOFkkEjwWue+RAKcn34UlZu8lI5px498mjk0WOX6CvqTF0eC2z2ulawht1rf6PNVEsrOx+bsEAMlIqjpKOt7l4s9W37uVHsw13SfVn/ts2IQAjkv7z9+0+vgh/evnz1Lyw3HJ2eMonEfzhTKUsZIn7jmIEBaybsDxzrgg8ef+CQSRCH5PxjPwWELBGoySLL4UsJAv2a9fUVTe7iBb7TsASg+SOGtHKZzCt4SpJt6gqxtFuGlcEF7fUJol7FdyaNRADLEBTJYlk5okIoCThYVEESe6xJvLfOYqUf98UU+QVH+9Ds0axO0ookYhsjIYyFn/6izSuGNvwC4Yd17TNPr1btN+KGV1eaUnCIzMvamipqXqf2w0i/+T5glqbDUUNlROi99sGp/TBqqfbBryD8pJ+IoTorbgoVJ8Dohu/xToi+E7U+axbo8H10C19jf2E7FfUBk7Wj45HOTpgguWzJHo8Ug/wRwqtglQr8v1dKQmEfgFtVqhTx0S4hjCva5XUaS5oTRQtGyyedIEg7BnA85LSI5GG8oWvFCVDVD8uwKMK9cSS3ATs8NZZv4SGvK02EdFntgzRZKUvXoICLYM7UjoTruONB7KIC5RjCe9GwfDcGvozfNwvy9/Fw9L5hORy5xxpmK1SwbpfLKTOxkcDkDdUpVFUyksDs2ySvOYGuVKblEwo90HCTrU6oC17MXAcXsxYcY4uiJAk1MSUwqwWyRQ6rJhlv+DuMPeviK5h/CcB6xIAlVUJYlyEXIuXqzlb929nFm+Dy7Md/vhKQV39iJc254lFjWRmlVZjRDB4a69IMdQbjDlcqrG2UP3Ma6jc4WZiZHKiFD5iFg5QikDKBD87TPKwePzoCukdj4nnsiLBExXUb08I7EKuotQg1EcEoE/pQq2JPlUcd2fWUkp5RZZDqzIirXSVCzimxC6ClrgfLfF6tw+sekxglImahCnSEwGXy03HHiYXzQmbBKXeKsdyuYaDZIoIHmZJoyRHDkOCJ4z8YffIEjYyFt7ITdkINaImECbatRTdg10cBE8shUv1COVOXI+htnikdeFAhwk6ryMqteZeHdEyEkNV0I1E967hPZVwfhKJiR1Tc1RoM5J+6wCM2sCNmdq0k0y+S4B9bbeq6g7E14dLfFh+bgLF+SPs7ze5rsVoQFRAiwLJFvgE65wuI4pFN993iZ9IFqaNweDwmTWxrskvXO07jjt5yfDjVNUHwPc4ksDKsCBxp3FgOGYbko+hLZx0cBbSuJjY8nI8QrE3hWIxRAqR64rs9g+vwI78/YI5U1utgKxH0Mdi6bZLWtA/xAeNM847/CpmdjKdMXZuB2mXc5lVAMORdLPPK2bvBtk3SawVoipNtoo9yihnwGSELeMOornJSEmK9/d/r+AaiTdPHoBO+mhbRlz89qm5LieZ1nVYJ6nOhATwhW8xQFBzkaq3efq6WMfezcrkIYVMr/WHSc51O1tYg0woY5XVWdTcCyqxy+KMP7TiuZr/XK+uY1sqyPnraKwqyPW3DFLkT/7ic0RoZG6TSTi8FBojznTbNV9oVLMIiT89S1BRlPZMjOmuUjVXkOzC4TtYwWrRkVCqb6oqdcqXURtCYQV8XkraMn1j9Ds0Hn52VT36TIZCMKeNkXU6mRa26J51L1xon2LCXG3ZD1gUGHa6RGP31uCsau4XrDWyzlNU9BJMqXKlADqkBkzuyIFLAO2C/QWuPDGNXD56+76i9F2KDTuxJ9nQcXum++IiWkYNH21vEkrjIuWQ1vswJxpOaR0ZfgHiqbRV3HZX3LqL2N6cl0Vvc+Fxmd7YWW4zrb+4GJdwy06oBVhj5p96Abnw1s7g8NIDeYEJvJ/cnJB7dqqSzXJOnjNt08pXeLVYYPbT4AfQ87Xh9NyH2gPdLZLknNstZ7AKM/ZJDFCXlepHXiyVJ9hmGVYXnjPQIfV2cqExOSXeaAXXqaxYPZmG02oVF7GAog66QXiI+sx7luifkhO4YE6jfCoqvgw/tEDi8RmKNZOSCR2yW41SAwo7XYjAulLRRcCQ7RxmUqFLOau3J2J6lywpWXhMW4djelwI6ALta6dKHQV1TybqSTuRTN4Hw+aTaQcmqWMMhONlaY7wRht2Ry36O2HAzZkKsHn+DuowZyJdMd35k0rlHbxCEHp1hqujP5znWZZt+kme/XvzmV0y+0PEiXaRzfUx8h3ObxW6jybHkiJye089BjjQ9C3IdZjmGYarntHl3gkcn7/1pJ35guufkvOy283RDSWh1K2/SawbGOXcDj/ZzKI0lPQP/S82NNWJYYswvd+EmvFalw2A9fHTMkiV7YdpdrIZ++86oJb7kRY6ZPbdLtVwvBKuf0419vUb1hxs565RX+lzialRm32Q/fCrl61/DKJ8lwHEpUcKFc8YIeUZn/8Y6nDpRe+BNy2zON6yd+4ibM8zkv/fp7PNyWE8DHVkbvuf05t9TrtA+FJXDu3wguZ+nO9LI4C98dOHWNhJ+Vrk9yR5OpEHsW3r98JwNaGY8R7wcSNOq9uKWdqtwedNyucls5/+3xc6txzoMSBwQHyQgPiCs6E3zUKMTP17J4xU/vrzh8VYem/JYQG7SaxnH564Nrw//U3jpJQ6YvWmYrYTZg/7jy+bxtrvWhW1Ld7HsspsBYwFOvaY585ssE6Ae5CrBgqTTZAauQmI8LU0qKG/KBTPOBT8+PER7ViQqRQmV/l0FSTNaPlMKcAakFcrkBs1krhQiV58FerR8c9TPmQLziC3xaq70t2GRoIBVXKNydqlTZc7q/XOEPX9AFGkucn+W6lJJt68kzoZISc50ibkcKSnW2S33qLv3SFfC8n4YRTUWDSt1v+Fd6vPag4nv9rJHY20ubGQEDksHuZbz4cdk8/sW4FfgadVxovncXN7zl0MbtOc/K6vmn8ztCBTB4hNOHsqOPegQW1+zXnbnZdY3UmaZC1Daci/Q3PTppuMi3OA9lPuuiu12lxXVvFAqKOqMZQm03zrmWq8sIm52d28QVF7KOxJLkKrsKLS+0WWWodRWExRZqEwVIR+EBE/u8XnLMvE6feq56XDr7rYtvqyudIyZ9u5Ty5SrUNPD3Uto4eBoZg75bC+zO4vAdfKd7uc2Pd9omScR13PTtpJFHOK0y9eoT3tFHY/QBh/aTcnxp195WR30jt9m0PTS2Vn1gCmRTt+3gOJRwDDLAvtaoIa6HxCNOOo6XG8McvBUSZiWhb7O1b3SQz4j+WdSM1QyT6612HxJ7cgMt+sFTaMVtf+3T1o27o0985iDT9h9VAh5nqkZzPI8tcQuFxqldvtluMWGijyuI6j2O/jcswZ7Aqm+pb3Y98G2IdJVnHFovSevKbKNchrJq+Z8LQdQdS23BLYDwN1PFK9+WCw6LYBW8gPHsi1VeyPTZ9l0RGJpjWoxUdDMk4WvrxA8O9u1ffJyCT2wftqroTVKEa93aDy0Hd//wzcz/HfeWQUYzk0/156NR60qHuAzX6IwHMt8GFRtWphla/5n0u5oYkChmcHIi0l+CN/pGEeOOzgNrbqgq+Wy1zy2BrnnNq3/Q4cyRcD1Ji/55wKoXksLV+aXC4dgdRNGcfo3l5tDvtzEdrn2YCwcGiw09zacLYsw2nPK5Z2btezlGqDa/62rM5HJ/5wLtKNmXO9yvGnb9NtubcvNnqz6u9L5pEIdTtYDYBUI0DbzEE68r01YAq6BIFGVylUcxm2Kcgc3B5cpXs0mm8tRYwn/6Nb0hnZWNQ9QVBcq4oawaV4exdnEqsWlr7WeWnXYOrpjufFNASl7l3OyNqvczCVrrfsWxye/lQ+P9nlrXpxM3Y4zW1iND0CVr8L5DHELnHKPbmRunWzY72CZRtqGr1yLNsMml4zec+O8P3ledNWtRfo95cJECIKmL9ha7LAraFfozm4XvHG2QYFfT4zbBtptAxt1J2OzvEcnPcN0JugVMQGx2MzH4VSPf/oSBd23XND1fm91Z2uevb34+dVPF1DwrxrWsLo/wr5PZicem64pjubd3wqU1Lv0b0kfMWmkSStxNbm4bn76gUDpVFlNxAjtY6YNDe3Br/hss729tdS9YXuH1nJ5wlxizUXfmBdqwb8aS0pVtNO+6Qhq4Z8Y/sc4c4VpDR8/xO+8pf62oyF9GWPPX53u9eDT4L+BZASy')).decode(), _REF)


def _zero(v):
    if isinstance(v, np.ndarray):
        return np.zeros_like(v)
    if isinstance(v, dict):
        return {k: _zero(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_zero(x) for x in v)
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, np.number)):
        return type(v)(0)
    return v


def shift_right(*args, **kwargs):
    return _zero(_REF['shift_right'](*args, **kwargs))


def causal_mask(*args, **kwargs):
    return _zero(_REF['causal_mask'](*args, **kwargs))


def masked_cross_entropy(*args, **kwargs):
    return _zero(_REF['masked_cross_entropy'](*args, **kwargs))


def cross_attention_backward(*args, **kwargs):
    return _zero(_REF['cross_attention_backward'](*args, **kwargs))


def encoder_output_gradient(*args, **kwargs):
    return _zero(_REF['encoder_output_gradient'](*args, **kwargs))


def free_running_decode(*args, **kwargs):
    return _zero(_REF['free_running_decode'](*args, **kwargs))


def exposure_bias(*args, **kwargs):
    return _zero(_REF['exposure_bias'](*args, **kwargs))

ANSWERS = {'8.6.1': None, '8.6.2': None, '8.6.3': None, '8.6.4': None, '8.6.5': None, '8.6.6': None}
