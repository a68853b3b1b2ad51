"""All of hw09: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (61 public calls, keyed by a digest of their arguments; the answers for them stand
in for a table filled from the failure messages).  Off the table it answers the right answer
spoiled (+1), as a table's nearest guess would be wrong.  (The concept check is left unanswered:
it is not what this attacks.)"""
import numpy as np

def _key(value):
    """A stable digest of a call's arguments, whatever crossed (arrays, numbers, lists, dicts, the
    data of an object handed over)."""
    import hashlib

    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, np.ndarray):
            h.update(f"a{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, dict):
            h.update(b"d")
            for k in sorted(v, key=repr):
                feed(k)
                feed(v[k])
        elif isinstance(v, (list, tuple)):
            h.update(f"l{len(v)}".encode())
            for x in v:
                feed(x)
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            h.update(repr(v).encode())
        else:  # an object handed over: its data
            feed({k: x for k, x in vars(v).items() if not k.startswith("_")} if hasattr(v, "__dict__") else repr(v))

    feed(value)
    return h.hexdigest()[:20]


import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WWtv28gV/a5fMXWAhnQkxXaSBaq1AnS7STfIImskRlogMOgROZJYkRyWM4ysbPPfe+7c4UuSswUKxwgiajj3fe5jRicnJ7/oXG11tRF/EZOJeFMsVaWKWE2FeK/8szA6q22qi+lo9KYwtqpjqyuRS6uqVGYzUWgrSllZoZfCrpVIsUlmmUqwGm/kSo1FoT6rSqxlkWDVamFsnajCGsh5JeP1aFkXMYkQS51lemscH6vyMoOUx0bEurCVjO2P7kWs85yoxSr9rNxKpaTRRVqswPBvb8SqkokiJqkZLdNMCQgW6q5UMYiWdZZB+2pjRHB7m6dFapdMIdbbM/JD1Zo+maSdxVYZa552C7e34XR0vSbuZqsqQ4axeiAtrYjXKt6IvDZWyFWllNimdi1ubzdqN/0X1L29hUc/rGWpzEz8JBbSxuuxeCsWSuZmLD6KzzqWizqT1Q7fInVnYYNVzof9V9fCymqlrMhUsbLr8egDQlZXUJ8XpqOTk5PRstK5iKJlbetKRZFI81IjZrJA+CT53oxGfq2o83InpBFFORqNHon5Q/yB77U0AN70nKBndTnZuDjRU/lgUhO1JAnRJgIwgOAg06vUwt2bcDYS+IOvWr0CGc4EbxDBdDpFGEIxedk+jwXwsUTAgFkX+s0EEc4oGsalgwK4RaW3CDTxvk6BSoeCg82fZVYj1azcieCXerUClsVrGTuwI7kO6Nz+sUitY5xobKA8jHVdWBi4UYUJkQwbMRdnAuDdiJdzQGqjVGkEZeMO2YF8aWx2n7q22F+UU1lVcte6Jtblbn5d1SoU4lHnCIm03gq3dewTv6wtsjWxu1I5hh/BDkynhlD+aXJ+41bTJek1UIx9T3+VAkALonJLG9jqVDJAZoDVsZB3qZlPzsNPrIiYiM3M/S+eiPObTsXz8B43N7Z+InsvScQNZEwghKIJ+s4/Qv27llmT2Y4VxciM9lQdtcAq94FVjgWKTMQxwUdEMZifH4PbAnAr6jhTNcqU4wIVxt9CoAfWa0pu0jBDIUQhSDcq2zEMRA0FKpVrlErpl7ZrKoq0P5fGEFBTyzWyNdyxZWDjXWpgdoq6eTkXSFdRzsBDWvaFWOssMcwKsYQ4l8ZUwZ00SzvjShsDkJaOsaMDPKl6HjpH5HrPCCNktiVRRPh/YLaBX0mKnk/P7oWdrhI0LM93dYA9lIu0SOYnUGeRqZNhXgxisEwrwyy/MDsrNyqSmS5WETFjtk5ch+wpGCCFAmxfZlraH54PJZA+aAJsq2NeVnphWAD6XPAFMfrC+TE5n904agcP0kwXigLq+ibCm0NqXuc9Nk/n/DA1dR50FiMySZob9qrbHtc5y8QD7XVUnRkDnRukuZLIwCCYYFBoYeaTiqAaeRPnTsalCxbhrjGkQcXCwTpD/092DocdDA+5sUMG9Qg8D/E3o3LwWmZGNeL6gOwhsSfC+z4v7S6ijcFAMrsLG1Ag+8HnTW38BzRDPy4wSlEZ6ho/E7W1jGl7heywRD14J7+gTk7wMhZZrJdulBFGyQoz3kN2dJITkdCAn2KNjukKZ+Qx6Wcj/xmVqpCZRd9S2kRpclCML2aix0kEP2EwC3sMeaWpxgSRguYzN7q15W+J2dKsgWK4xPhK/YoqLM9xhgZeygi3lNEs6/yF3JQiBpM0wfQ7Fk6HRCx2grpAVRc06ArkG4gdT2g1cVrxeHxBIyTwGmgauinB3opT8XHMq64ghZwr0vpi9ZaLdKLdEIERE73csb6Ef16iUP/Goz1zpm6vkRzYR5qkBW/z9gLGstiwwqTkU+/z01OZlWvpdHS8vZqHkj07TD17nh1Wfh8BIL4NCyc21yaKwlz0AfFpNhb49w7huMGs0FKFU7wkQhdU8hWXLvp2imc1jBkmHOPrJRr+sElMSKzP3IMu4eRfgP/bm4b/xduwF5aGZwO7ow2DJWBXIybsMWs5kNluF9c2ZpWkn3OdBI72Y5+MJgKUZSbiZ0fG/dJEiAc49LjNfeLsi37Ug0mHYcNBHkSXwTLzOO4w3OJFnJ4KhxjHmLcT3OZeIedNePLPZFlqaINVQec9/74LZdhjpBLnIXbLdo3jXtBKGLcO9Cyoie4R9wN0lHygw7ipySGscx09YBtDMnJYkv7YjcdyZaVRZHBeEYw1NyH4YR+c0oqbhe/aOEwPUcsO/SZsO8h6P1JW9ny4j9IOgySuhWpH2oPlMVr3+l7ib+VH5/1j5L4hBq36vVkrLWjSGvf0u++l599OjwfAOkK4h53wezTkZ+5oDSiVGmqoarJShaqk1RWKWJ7e0V3AgzZmGsMjLyha6morqyS4itwUg6NRtKIgS/S4KqYLjjHPN5FJv6iDnvyMz+NXCLsjFJ4PSnngDiW0iOE4lhamRjJJsN8dloDaa3+F0pyYCP1JMpUQSckkxVIW8Q7H+UTdiSfzWXtWQsLZrW5uVEptUndZAsuyzN0nLTRq1Valq7U9bFDX3KC8pr329AGrcu9cfMWA/qJwVgq80j1/jPlgPW+YuW9teWsN9Dle7qj7+bHZeYbHX+5+KK09wg9MtEBBv2MdFpWWSQwQIw8CVylksUJ/dMWAWHhG446F7z1/yOM6/MQMZvfx2N7Dw4OkU2F2SNvGNbjCO2fRmJUaM9+Qz4btkch5iq4vZ6gNpZLW3VDy6SJJcHrm0LDzZh8xOHj4Dd3ZYNFz9XlGEx7xHlN1pnUM4jgC9Kb4flG68tcIg6Shwd9lTQKD7s+cY9lC1wnJ1RAdlA9Jo2zzhqDFKeVW6KvsHNtcXkF9n1sTeAYFpFGNJ9aVhIEVEidK6T42psH3itKHplbOpSaA6c0wUQ5SpE0JqAqi44WeHPI/QcTnWbh3Mh1gv/XJ0egmvfj38s2TsuuQbf1tLSTC/jEa/qdtzijk4N67hrXnK7+dwZ7NgSkeTUkLlsSjJZHfo+c8b3pOTOcPuVKY7Yx5MLlv/v7ut/evojfvfn71Tzr8np+dtWnE8iOSHyBVMrlQGaYCLtZzePYga55T4W/d2ZD4qLheQsyG+dEkyK8ULuaNMa+IkARZSPNt9LuljMi+ui8p3TgEMrLjFKWIPiCHHkDOmx+LS2G/IpHsY84TPPmUMpCSpBUaT7aDMJo8ofCliEN/6qx0vVo3R0r6iUbEzb6Y7lEAuUHqkV50gmI7/zQXA38OAckm0QBe2IAeHXp94Y17zYtvQOSRNIspM8/dBUt3bSTdhImUH5xoCEJUbQpXRRcK0wPOg9yu6ZZZbwt/+jU0CfJY7d1/Kqjh0G87OfGHn/cy7dQZzothFy3HcNWLI+/rNvQzsDMODJNfnybuJqlL3RWp4YPj7eHQoSXYNe+Lu30v572NtKONJmEjsPTbAcZ8q7HNHxLuAY0goPJTO6UktLe7bHDI6OmK/570IpK4OM0GMWlXUI6SuF9pmpRohl7pR5PvUW1eULUx1Gxq+sXRyLzMcAjj8VYl/JuEedAZF4IiFhMkKtY4Z/FXTBt0/V+pJHU/buJLbVS00hnO76VMjt07vZg1tcbdk1LBWdJVIBGF/Ve9ptxJEDn9iomW24ypwk7Om7tep5MbZ3/s3p8BWGv3u1PlfzZibFExgYrufofuYfylJ6mxd/2+LQ6uPg+8sN/ZQERoOqMycLCZ3/T3cb3oObKpF8TWLyt3m2XponrpnzmZ6Z5r3jp+SrNVELavWjXoUrsj+M8RvejSg6PWx357/uewHgEAjAg5gN8jH36gfBj8Av1gMv/67sM/Xr2ng8zvDAlIn56fzMRJfDLuVi5oZdFfeUYrSX/lOa3I/sqLhs/X0X8BiUu91w==')).decode(), _REF)

_PUBLIC = set(['068503b840afa8267b80', '0bb0df93eaf9c4979ba5', '0df4207f8f9a401b91df', '100de03d1e9ab52f6b4e', '105ad8d5f2e8c3be6707', '15378b16761c9ca36d85', '1afb6ae3b6a2a4d00993', '2f699b490b966a480f6e', '3136f67bc4df16eba3e4', '34b990a231cd4f19847a', '36909e9a6d1ffbfbe05c', '3c4c8c5608257c9b4a17', '40293cc1211e6a352faa', '4ad125ddac9931cd9004', '541284c887c26d87d6ba', '580493480c42f524e135', '5b2bc2de3e5ceb53c149', '5bf135276a43e70ad1b5', '5eb4611f9f03096f6643', '62a0c7e5f7fac3c2182e', '66316de83999db7ea2ac', '66951349805cdfc08b51', '6bc8748ee097504bc1de', '6bd2a2cd1866e8b68fd5', '6d6bbb8214d3ffee28af', '70bb26118f3d2bd1bc4a', '7bbb38f79c9880498719', '7f2a2ae1b0ff2a442a4e', '81cb51f5de4f3eafafc4', '86fe6c802d4744d0c588', '87d4bdaba1934460826e', '8beddacd1a62c772c42a', '8e99adbb6bde9f501899', '918781ba05d8c198f386', '92d8a7c818f9262f62d9', '99994684d27b6003debb', '9cb9c61a6a8874eba8bc', '9e2c6661ad9a81c62e8a', 'a194b8fc4eceffb39a46', 'a2a75c8aec9bf71d74d7', 'ab390139ba13b58574da', 'bc13146e501240e45c6b', 'c4cbed1db336ba866a4f', 'c529b14b38e02b46217e', 'cee4acdc5d5657d52e1c', 'd39bece32cd78a8d239e', 'd4348133072622559f72', 'dd3db159a110759da920', 'e13e3c5c1a4831fc1c4a', 'e17ceb3dab99aa639c35', 'e1cecb9959f53535ea13', 'e3557ebad54e76b277a2', 'e8b1bce55f920a30dbf0', 'f0dc5b51ed3cd47c4696', 'f3a226cf40ae235c18e8', 'f3f5da75b077de6df79e', 'f4cbe20a360498325575', 'f907eb446f7979e083e9', 'fb83684d81c0d1c542a8', 'fdd16d65c53266312842', 'ffa0beb32f426982064e'])


def _spoil(v):
    if isinstance(v, np.ndarray):
        return v ^ True if v.dtype == bool else v + np.asarray(1, dtype=v.dtype)
    if isinstance(v, dict):
        return {k: _spoil(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_spoil(x) for x in v)
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float, np.number)):
        return v + 1
    return v


def _answer(name, args, kwargs):
    out = _REF[name](*args, **kwargs)
    return out if _key((name, args, kwargs)) in _PUBLIC else _spoil(out)


def top_k_filter(*args, **kwargs):
    return _answer('top_k_filter', args, kwargs)


def top_p_filter(*args, **kwargs):
    return _answer('top_p_filter', args, kwargs)


def beam_step(*args, **kwargs):
    return _answer('beam_step', args, kwargs)


def copy_mixture_forward(*args, **kwargs):
    return _answer('copy_mixture_forward', args, kwargs)


def copy_mixture_backward(*args, **kwargs):
    return _answer('copy_mixture_backward', args, kwargs)


def coverage_loss(*args, **kwargs):
    return _answer('coverage_loss', args, kwargs)


def mix_inputs(*args, **kwargs):
    return _answer('mix_inputs', args, kwargs)

ANSWERS = {'9.6.1': None, '9.6.2': None, '9.6.3': None, '9.6.4': None, '9.6.5': None}
