"""All of hw05: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WVtv20YWftevOKs8mLQlWVKTPihw0W0ddwMEhjfx1g9BKo/EkciYt5JDW3KQ/77fOcOrZDsBCkdAYnIu5/qdywz7/f5/kkjfJdkNvaLhkC59TYswWd6MiN7rlc50vNSUJ2FhgiQe9Xpv49xkxdIkGUXK6CxQ4YzixFCqMkPJigwoBFikwlB7GF3eqLUeUKxvdUa+ij2MmoRyU3g6Njn4vFFLv7cq4iWzoFUShsldLnSMjtIQXA5yWiaxydTSvJaJZRJFvJvWwa2WEQ+i3CoRkuj3t7TOlKeZSpD3VkGoCZxJb1K9xK5VEYYQP7vJybm+joI4MCu7g/y7MRsiq3UfDoNGZaNzkx83A9fX7qjHNlNxfqeznDWz8mFramjp6+UNRUVuSK0zrekuMD5dX9/o7ehznsTX1zDpB1+lOp/Rb7RQZukP6JLSJA9Yl3xAp+TNo8TT4YDOhPZKa2+4SrI7lXmg5xn/NbFxtxSqLWysWEMYEmt7oWLOmwB0nNFoBGqQt9/v91ZZEtF8vipMken5nIIoTeA/FcOVYsW81yvH4Ga/fomLKN2SyilOe735h/++v5xP6UTWjPK/M+NMR2O3N397/mc5efEW05PRmI67i+jQvqcBlutshVVxOrrVbNXgXjsyifEBJWYL85x8xPQqTJT5+eUnl+gFnRfRxRaIgiwJMYWCMdTr9Ty9onmcZJEKg1w7mwHpNHdnPcIPum9qU9DwF3I2c1+ZemhAWW688nXiujMxec42yU2wzBnhGnilLLljIwds67t4xDZl+lEBRTajSKvYYbufDCcDutE69YIoP7nMCi2yV/Qp4ahgFqfwq2JnwFUcTvWEYEJo36oMxB1nQ0PwcenwkKbu97NaBCrX3oy84DYA0BdbOhWyonDlIxhZPMS8jsRuHRoY4ODm/SxbliTG0tAQPaZGNKFqjVl5JC+ieaiVF8RrRzXusLRj64x4UFm8iKwJSmTbfQJlcuxYFSPiEhnRG4V8od3aG6VYagSzcpA5bCI1kuePw8kndwQ+1nhAba/3gk6e4we6lypHhh1NOMe+4zA9Bz4lJzGCFsiSHM7PJgA7QLIDh8W8TB4cGWsVRWpAC22UhMnJRA9fNc6pxWaPUTdytq2g2QJAQgqer0FwTAKlPFhH6q9pBacjYVa7SMJvQHMQ2I/ZBnunbtuhFSsbu5ZiCbNGy8qojrcdUKPqU0ouoKS37eYHb9PS07OcndMBvzBbeUZSLZX5DBGRHlB5RLZ5ADRL3lfbnEMvQ4ILwUGCDkndqHnwGbSwKinWPucPZyiTxywAACKEq2mxZbWi4mD/fpYdKH4fCtRGD/VGcZ0iT6ZnVkD+QaETG/SHrJ2YEA7jNGLfoHdp2cP2cGVv17W03tRpcMU0EUlS/sbk5H6wMhyuGxRAFa81p2hU4njtWsgjZ2bGT9ZJrELeI3SFqJMvgYCHtg6oSHkt42JUua4NoTKPPY2iQZ3LZOsLKmNh1oFwB1diMztz0s1igEplE+EBJNjVAoy9xTuLLJMTEiqW/i7cW+JVq/dSLBDDNhXtqyZKytSm97i37cOTtaPGS/1rULGLiCcJPRrF3qYKqDKWfkQGnnIGltqlUcYK4C8vFkPJGgNKMz18dy72RHUxeH7WjAzOwridkK+QjHfSss3ZAZz4RPaa1in6NzSQrRxdvQ5o5fguwODTr3TF4C6TllV6RhIBG0ysnHfnzob9JtPWEOU8z8gSzHeCMFi15JzV4PGx57sKj0VJLbt0PpmKOcUggHJSVMe1h/Y63dYsSjSxWE6tm5CzrRv2R5hNVZ4jmxSxSQokaJtX70uVoVR7Y1cORDHQ20buvkb3j2iEjUHeEr2sUrXnd4vUP3B/Vbza/v/S9zb9AfW9K/l/If8LdfsOBv2vdS0+ld617o6e8msrM/klLNzXDYRajvinUGjq1hWDt9PKod5dgpG33RktEy2du5h1zutaftoluPhWjpZVvs3R0AfMdsBhq3ID1laRnduRnRTXsUHjfH+nQxEx3p0fNK0hId1uujUcQh01jCrAB3ysDgz6Y5ygaKmyLADssdbDOQXwt2XVwl+HuX7Qpw/Exes6Adw3xvlW/DQC33+fIRAF9982BJYIHrvY2DyIjftHsPE0EO4fAILY/J5tft+gYd/kRy08ANXoXkitTHmaY3XbmUQCdCalkIMUT1c2UPG0aIJ1VhuvDNqZteLXH1Eyf6pKZufmIdaGr42etUDO1dI4UBp/ysud1rlR5lyZPMCDW9radhpnSIbv9bv/UWLtjqPh0tAfbzDCDd6FH2DLqFW8GhbQh/qZDot+Exo8igJLv9DYHamcbyQcNfL4rwBlzKhkTI8HfDlS3ihxH3GxvUyyVmKojqQQIokH+PeIAOuuABCYJRiPXnH7xWf1I+JrE8h0TOVVi+s+KFsFO7Q6v5+e1RRTodi9qTnk87/epM7QMmIplRDhUypQjhM3IhTCHDykEMZlErLxK3PA1jRLvALGz4pQz9iIWOEegHe1EutsSChUSPpThYV+k2VJ5qz6jVFm5eUdqv8BO+eAPXvAVjpAvkgMfWnW/iv72nfLSsuYLSHbrjmpylSUP4ysGvbfcehlEG7oaj7h3DefuHicyuO0BleKZZadvPrlYdfu/JXSj31s73/CLjwu+LEjVtM9n3W6Z7/aO2328mO72d43wW6/8X12eOBc3HQWkFjSUvmXBbLv01ZrsWOEU77MPKl1tz2HzCipKA+aZc8Svsg9T7Mg0pVJ1dPG2znwSZtSecyel67kQrPbZ5w91Wec7fcZZ3V5YTN88yRYdxiVP8tG4xHB/RJ3qtzOJgONw5YxnthdGbjGbKX25NESqnaMsddendXt1Vmt9mRPbVXZy21OphC+8XVb7e5RsVsmsXYmEle4mwnDCn0yN60wKHPTH1IoX3KhrK/un/foGMRFngSeCuc1QydSG1gbVaX8YrAXyi+Rf+tFwGp5n46k/RGHi2nwCR4BZcegqEzG+P3lTIPjU66t5YqjCa9ZJrmTq6h102rs/T0iHM1lSxCuQifNzb37cQbYJLG2wVyvQ+Ks1SD5NjG2ZO+SedAhPR4030OmDzFg6gOaWQbAxFIHoXN6jOpoG4FbHUP+sIjAaWoLDwiHnEBqtfnzBMqs5X5cm7Mrc4swWEJq/Xeh4yW6QPR6qQoyoX1hpddRarbOvocsyi/YLOPZbPrJrmYfiFDCsi1ys3zSLGd3yHIen1W06fiYpvZTSeJ5FQF7vc7iHeSNzO1Yu/gRoSIfGztfyZ6N57/PP1y9ef8BpvpiwwHcR5wz+nwc5uNFdR8/s592KiTCQO2vMiqEmxsKnFn6nqWwf2/Ed70r+YRomlu5QWuQvzYG8gkTnSO3iwFfEEjVanj8xDyWlgd/OUwK08TJjIEWFfZz3RCORNHLAhWbZv9L3q/s/v2DivI8ORiit9PhiuVofUZsiLxqCcEN9IEz5mukyTHCj1tseTfqBiBF6ztuNv7csjGKQBajd8v40+5CbxOYqgwGHEzli5feBLl5XWe23A7QAjrfwWblF2SDLpEJwUxfe/8HuUmpjA==')).decode(), _REF)


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


def layernorm_forward(*args, **kwargs):
    return _zero(_REF['layernorm_forward'](*args, **kwargs))


def layernorm_backward(*args, **kwargs):
    return _zero(_REF['layernorm_backward'](*args, **kwargs))


def sublayer_forward(*args, **kwargs):
    return _zero(_REF['sublayer_forward'](*args, **kwargs))


def sublayer_backward(*args, **kwargs):
    return _zero(_REF['sublayer_backward'](*args, **kwargs))


def feedforward_forward(*args, **kwargs):
    return _zero(_REF['feedforward_forward'](*args, **kwargs))


def feedforward_backward(*args, **kwargs):
    return _zero(_REF['feedforward_backward'](*args, **kwargs))


def sinusoidal_positions(*args, **kwargs):
    return _zero(_REF['sinusoidal_positions'](*args, **kwargs))

ANSWERS = {'5.5.1': None, '5.5.2': None, '5.5.3': None, '5.5.4': None, '5.5.5': None, '5.5.6': None}
