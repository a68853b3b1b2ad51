"""All of hw09: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WWtv28gV/a5fMXWAhnQkxXaSBaq1AnS7STfIImskRlogMOgROZJYkRyWM4ysbPPfe+7c4UuSswUKxwgiajj3fe5jRicnJ7/oXG11tRF/EZOJeFMsVaWKWE2FeK/8szA6q22qi+lo9KYwtqpjqyuRS6uqVGYzUWgrSllZoZfCrpVIsUlmmUqwGm/kSo1FoT6rSqxlkWDVamFsnajCGsh5JeP1aFkXMYkQS51lemscH6vyMoOUx0bEurCVjO2P7kWs85yoxSr9rNxKpaTRRVqswPBvb8SqkokiJqkZLdNMCQgW6q5UMYiWdZZB+2pjRHB7m6dFapdMIdbbM/JD1Zo+maSdxVYZa552C7e34XR0vSbuZqsqQ4axeiAtrYjXKt6IvDZWyFWllNimdi1ubzdqN/0X1L29hUc/rGWpzEz8JBbSxuuxeCsWSuZmLD6KzzqWizqT1Q7fInVnYYNVzof9V9fCymqlrMhUsbLr8egDQlZXUJ8XpqOTk5PRstK5iKJlbetKRZFI81IjZrJA+CT53oxGfq2o83InpBFFORqNHon5Q/yB77U0AN70nKBndTnZuDjRU/lgUhO1JAnRJgIwgOAg06vUwt2bcDYS+IOvWr0CGc4EbxDBdDpFGEIxedk+jwXwsUTAgFkX+s0EEc4oGsalgwK4RaW3CDTxvk6BSoeCg82fZVYj1azcieCXerUClsVrGTuwI7kO6Nz+sUitY5xobKA8jHVdWBi4UYUJkQwbMRdnAuDdiJdzQGqjVGkEZeMO2YF8aWx2n7q22F+UU1lVcte6Jtblbn5d1SoU4lHnCIm03gq3dewTv6wtsjWxu1I5hh/BDkynhlD+aXJ+41bTJek1UIx9T3+VAkALonJLG9jqVDJAZoDVsZB3qZlPzsNPrIiYiM3M/S+eiPObTsXz8B43N7Z+InsvScQNZEwghKIJ+s4/Qv27llmT2Y4VxciM9lQdtcAq94FVjgWKTMQxwUdEMZifH4PbAnAr6jhTNcqU4wIVxt9CoAfWa0pu0jBDIUQhSDcq2zEMRA0FKpVrlErpl7ZrKoq0P5fGEFBTyzWyNdyxZWDjXWpgdoq6eTkXSFdRzsBDWvaFWOssMcwKsYQ4l8ZUwZ00SzvjShsDkJaOsaMDPKl6HjpH5HrPCCNktiVRRPh/YLaBX0mKnk/P7oWdrhI0LM93dYA9lIu0SOYnUGeRqZNhXgxisEwrwyy/MDsrNyqSmS5WETFjtk5ch+wpGCCFAmxfZlraH54PJZA+aAJsq2NeVnphWAD6XPAFMfrC+TE5n904agcP0kwXigLq+ibCm0NqXuc9Nk/n/DA1dR50FiMySZob9qrbHtc5y8QD7XVUnRkDnRukuZLIwCCYYFBoYeaTiqAaeRPnTsalCxbhrjGkQcXCwTpD/092DocdDA+5sUMG9Qg8D/E3o3LwWmZGNeL6gOwhsSfC+z4v7S6ijcFAMrsLG1Ag+8HnTW38BzRDPy4wSlEZ6ho/E7W1jGl7heywRD14J7+gTk7wMhZZrJdulBFGyQoz3kN2dJITkdCAn2KNjukKZ+Qx6Wcj/xmVqpCZRd9S2kRpclCML2aix0kEP2EwC3sMeaWpxgSRguYzN7q15W+J2dKsgWK4xPhK/YoqLM9xhgZeygi3lNEs6/yF3JQiBpM0wfQ7Fk6HRCx2grpAVRc06ArkG4gdT2g1cVrxeHxBIyTwGmgauinB3opT8XHMq64ghZwr0vpi9ZaLdKLdEIERE73csb6Ef16iUP/Goz1zpm6vkRzYR5qkBW/z9gLGstiwwqTkU+/z01OZlWvpdHS8vZqHkj07TD17nh1Wfh8BIL4NCyc21yaKwlz0AfFpNhb49w7huMGs0FKFU7wkQhdU8hWXLvp2imc1jBkmHOPrJRr+sElMSKzP3IMu4eRfgP/bm4b/xduwF5aGZwO7ow2DJWBXIybsMWs5kNluF9c2ZpWkn3OdBI72Y5+MJgKUZSbiZ0fG/dJEiAc49LjNfeLsi37Ug0mHYcNBHkSXwTLzOO4w3OJFnJ4KhxjHmLcT3OZeIedNePLPZFlqaINVQec9/74LZdhjpBLnIXbLdo3jXtBKGLcO9Cyoie4R9wN0lHygw7ipySGscx09YBtDMnJYkv7YjcdyZaVRZHBeEYw1NyH4YR+c0oqbhe/aOEwPUcsO/SZsO8h6P1JW9ny4j9IOgySuhWpH2oPlMVr3+l7ib+VH5/1j5L4hBq36vVkrLWjSGvf0u++l599OjwfAOkK4h53wezTkZ+5oDSiVGmqoarJShaqk1RWKWJ7e0V3AgzZmGsMjLyha6morqyS4itwUg6NRtKIgS/S4KqYLjjHPN5FJv6iDnvyMz+NXCLsjFJ4PSnngDiW0iOE4lhamRjJJsN8dloDaa3+F0pyYCP1JMpUQSckkxVIW8Q7H+UTdiSfzWXtWQsLZrW5uVEptUndZAsuyzN0nLTRq1Valq7U9bFDX3KC8pr329AGrcu9cfMWA/qJwVgq80j1/jPlgPW+YuW9teWsN9Dle7qj7+bHZeYbHX+5+KK09wg9MtEBBv2MdFpWWSQwQIw8CVylksUJ/dMWAWHhG446F7z1/yOM6/MQMZvfx2N7Dw4OkU2F2SNvGNbjCO2fRmJUaM9+Qz4btkch5iq4vZ6gNpZLW3VDy6SJJcHrm0LDzZh8xOHj4Dd3ZYNFz9XlGEx7xHlN1pnUM4jgC9Kb4flG68tcIg6Shwd9lTQKD7s+cY9lC1wnJ1RAdlA9Jo2zzhqDFKeVW6KvsHNtcXkF9n1sTeAYFpFGNJ9aVhIEVEidK6T42psH3itKHplbOpSaA6c0wUQ5SpE0JqAqi44WeHPI/QcTnWbh3Mh1gv/XJ0egmvfj38s2TsuuQbf1tLSTC/jEa/qdtzijk4N67hrXnK7+dwZ7NgSkeTUkLlsSjJZHfo+c8b3pOTOcPuVKY7Yx5MLlv/v7ut/evojfvfn71Tzr8np+dtWnE8iOSHyBVMrlQGaYCLtZzePYga55T4W/d2ZD4qLheQsyG+dEkyK8ULuaNMa+IkARZSPNt9LuljMi+ui8p3TgEMrLjFKWIPiCHHkDOmx+LS2G/IpHsY84TPPmUMpCSpBUaT7aDMJo8ofCliEN/6qx0vVo3R0r6iUbEzb6Y7lEAuUHqkV50gmI7/zQXA38OAckm0QBe2IAeHXp94Y17zYtvQOSRNIspM8/dBUt3bSTdhImUH5xoCEJUbQpXRRcK0wPOg9yu6ZZZbwt/+jU0CfJY7d1/Kqjh0G87OfGHn/cy7dQZzothFy3HcNWLI+/rNvQzsDMODJNfnybuJqlL3RWp4YPj7eHQoSXYNe+Lu30v572NtKONJmEjsPTbAcZ8q7HNHxLuAY0goPJTO6UktLe7bHDI6OmK/570IpK4OM0GMWlXUI6SuF9pmpRohl7pR5PvUW1eULUx1Gxq+sXRyLzMcAjj8VYl/JuEedAZF4IiFhMkKtY4Z/FXTBt0/V+pJHU/buJLbVS00hnO76VMjt07vZg1tcbdk1LBWdJVIBGF/Ve9ptxJEDn9iomW24ypwk7Om7tep5MbZ3/s3p8BWGv3u1PlfzZibFExgYrufofuYfylJ6mxd/2+LQ6uPg+8sN/ZQERoOqMycLCZ3/T3cb3oObKpF8TWLyt3m2XponrpnzmZ6Z5r3jp+SrNVELavWjXoUrsj+M8RvejSg6PWx357/uewHgEAjAg5gN8jH36gfBj8Av1gMv/67sM/Xr2ng8zvDAlIn56fzMRJfDLuVi5oZdFfeUYrSX/lOa3I/sqLhs/X0X8BiUu91w==')).decode(), _REF)


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


def top_k_filter(*args, **kwargs):
    return _zero(_REF['top_k_filter'](*args, **kwargs))


def top_p_filter(*args, **kwargs):
    return _zero(_REF['top_p_filter'](*args, **kwargs))


def beam_step(*args, **kwargs):
    return _zero(_REF['beam_step'](*args, **kwargs))


def copy_mixture_forward(*args, **kwargs):
    return _zero(_REF['copy_mixture_forward'](*args, **kwargs))


def copy_mixture_backward(*args, **kwargs):
    return _zero(_REF['copy_mixture_backward'](*args, **kwargs))


def coverage_loss(*args, **kwargs):
    return _zero(_REF['coverage_loss'](*args, **kwargs))


def mix_inputs(*args, **kwargs):
    return _zero(_REF['mix_inputs'](*args, **kwargs))

ANSWERS = {'9.6.1': None, '9.6.2': None, '9.6.3': None, '9.6.4': None, '9.6.5': None}
