"""All of hw05: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (58 public calls, keyed by a digest of their arguments; the answers for them stand
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
exec(_zlib.decompress(_b64.b64decode('eNq9WVtv20YWftevOKs8mLQlWVKTPihw0W0ddwMEhjfx1g9BKo/EkciYt5JDW3KQ/77fOcOrZDsBCkdAYnIu5/qdywz7/f5/kkjfJdkNvaLhkC59TYswWd6MiN7rlc50vNSUJ2FhgiQe9Xpv49xkxdIkGUXK6CxQ4YzixFCqMkPJigwoBFikwlB7GF3eqLUeUKxvdUa+ij2MmoRyU3g6Njn4vFFLv7cq4iWzoFUShsldLnSMjtIQXA5yWiaxydTSvJaJZRJFvJvWwa2WEQ+i3CoRkuj3t7TOlKeZSpD3VkGoCZxJb1K9xK5VEYYQP7vJybm+joI4MCu7g/y7MRsiq3UfDoNGZaNzkx83A9fX7qjHNlNxfqeznDWz8mFramjp6+UNRUVuSK0zrekuMD5dX9/o7ehznsTX1zDpB1+lOp/Rb7RQZukP6JLSJA9Yl3xAp+TNo8TT4YDOhPZKa2+4SrI7lXmg5xn/NbFxtxSqLWysWEMYEmt7oWLOmwB0nNFoBGqQt9/v91ZZEtF8vipMken5nIIoTeA/FcOVYsW81yvH4Ga/fomLKN2SyilOe735h/++v5xP6UTWjPK/M+NMR2O3N397/mc5efEW05PRmI67i+jQvqcBlutshVVxOrrVbNXgXjsyifEBJWYL85x8xPQqTJT5+eUnl+gFnRfRxRaIgiwJMYWCMdTr9Ty9onmcZJEKg1w7mwHpNHdnPcIPum9qU9DwF3I2c1+ZemhAWW688nXiujMxec42yU2wzBnhGnilLLljIwds67t4xDZl+lEBRTajSKvYYbufDCcDutE69YIoP7nMCi2yV/Qp4ahgFqfwq2JnwFUcTvWEYEJo36oMxB1nQ0PwcenwkKbu97NaBCrX3oy84DYA0BdbOhWyonDlIxhZPMS8jsRuHRoY4ODm/SxbliTG0tAQPaZGNKFqjVl5JC+ieaiVF8RrRzXusLRj64x4UFm8iKwJSmTbfQJlcuxYFSPiEhnRG4V8od3aG6VYagSzcpA5bCI1kuePw8kndwQ+1nhAba/3gk6e4we6lypHhh1NOMe+4zA9Bz4lJzGCFsiSHM7PJgA7QLIDh8W8TB4cGWsVRWpAC22UhMnJRA9fNc6pxWaPUTdytq2g2QJAQgqer0FwTAKlPFhH6q9pBacjYVa7SMJvQHMQ2I/ZBnunbtuhFSsbu5ZiCbNGy8qojrcdUKPqU0ouoKS37eYHb9PS07OcndMBvzBbeUZSLZX5DBGRHlB5RLZ5ADRL3lfbnEMvQ4ILwUGCDkndqHnwGbSwKinWPucPZyiTxywAACKEq2mxZbWi4mD/fpYdKH4fCtRGD/VGcZ0iT6ZnVkD+QaETG/SHrJ2YEA7jNGLfoHdp2cP2cGVv17W03tRpcMU0EUlS/sbk5H6wMhyuGxRAFa81p2hU4njtWsgjZ2bGT9ZJrELeI3SFqJMvgYCHtg6oSHkt42JUua4NoTKPPY2iQZ3LZOsLKmNh1oFwB1diMztz0s1igEplE+EBJNjVAoy9xTuLLJMTEiqW/i7cW+JVq/dSLBDDNhXtqyZKytSm97i37cOTtaPGS/1rULGLiCcJPRrF3qYKqDKWfkQGnnIGltqlUcYK4C8vFkPJGgNKMz18dy72RHUxeH7WjAzOwridkK+QjHfSss3ZAZz4RPaa1in6NzSQrRxdvQ5o5fguwODTr3TF4C6TllV6RhIBG0ysnHfnzob9JtPWEOU8z8gSzHeCMFi15JzV4PGx57sKj0VJLbt0PpmKOcUggHJSVMe1h/Y63dYsSjSxWE6tm5CzrRv2R5hNVZ4jmxSxSQokaJtX70uVoVR7Y1cORDHQ20buvkb3j2iEjUHeEr2sUrXnd4vUP3B/Vbza/v/S9zb9AfW9K/l/If8LdfsOBv2vdS0+ld617o6e8msrM/klLNzXDYRajvinUGjq1hWDt9PKod5dgpG33RktEy2du5h1zutaftoluPhWjpZVvs3R0AfMdsBhq3ID1laRnduRnRTXsUHjfH+nQxEx3p0fNK0hId1uujUcQh01jCrAB3ysDgz6Y5ygaKmyLADssdbDOQXwt2XVwl+HuX7Qpw/Exes6Adw3xvlW/DQC33+fIRAF9982BJYIHrvY2DyIjftHsPE0EO4fAILY/J5tft+gYd/kRy08ANXoXkitTHmaY3XbmUQCdCalkIMUT1c2UPG0aIJ1VhuvDNqZteLXH1Eyf6pKZufmIdaGr42etUDO1dI4UBp/ysud1rlR5lyZPMCDW9radhpnSIbv9bv/UWLtjqPh0tAfbzDCDd6FH2DLqFW8GhbQh/qZDot+Exo8igJLv9DYHamcbyQcNfL4rwBlzKhkTI8HfDlS3ihxH3GxvUyyVmKojqQQIokH+PeIAOuuABCYJRiPXnH7xWf1I+JrE8h0TOVVi+s+KFsFO7Q6v5+e1RRTodi9qTnk87/epM7QMmIplRDhUypQjhM3IhTCHDykEMZlErLxK3PA1jRLvALGz4pQz9iIWOEegHe1EutsSChUSPpThYV+k2VJ5qz6jVFm5eUdqv8BO+eAPXvAVjpAvkgMfWnW/iv72nfLSsuYLSHbrjmpylSUP4ysGvbfcehlEG7oaj7h3DefuHicyuO0BleKZZadvPrlYdfu/JXSj31s73/CLjwu+LEjVtM9n3W6Z7/aO2328mO72d43wW6/8X12eOBc3HQWkFjSUvmXBbLv01ZrsWOEU77MPKl1tz2HzCipKA+aZc8Svsg9T7Mg0pVJ1dPG2znwSZtSecyel67kQrPbZ5w91Wec7fcZZ3V5YTN88yRYdxiVP8tG4xHB/RJ3qtzOJgONw5YxnthdGbjGbKX25NESqnaMsddendXt1Vmt9mRPbVXZy21OphC+8XVb7e5RsVsmsXYmEle4mwnDCn0yN60wKHPTH1IoX3KhrK/un/foGMRFngSeCuc1QydSG1gbVaX8YrAXyi+Rf+tFwGp5n46k/RGHi2nwCR4BZcegqEzG+P3lTIPjU66t5YqjCa9ZJrmTq6h102rs/T0iHM1lSxCuQifNzb37cQbYJLG2wVyvQ+Ks1SD5NjG2ZO+SedAhPR4030OmDzFg6gOaWQbAxFIHoXN6jOpoG4FbHUP+sIjAaWoLDwiHnEBqtfnzBMqs5X5cm7Mrc4swWEJq/Xeh4yW6QPR6qQoyoX1hpddRarbOvocsyi/YLOPZbPrJrmYfiFDCsi1ys3zSLGd3yHIen1W06fiYpvZTSeJ5FQF7vc7iHeSNzO1Yu/gRoSIfGztfyZ6N57/PP1y9ef8BpvpiwwHcR5wz+nwc5uNFdR8/s592KiTCQO2vMiqEmxsKnFn6nqWwf2/Ed70r+YRomlu5QWuQvzYG8gkTnSO3iwFfEEjVanj8xDyWlgd/OUwK08TJjIEWFfZz3RCORNHLAhWbZv9L3q/s/v2DivI8ORiit9PhiuVofUZsiLxqCcEN9IEz5mukyTHCj1tseTfqBiBF6ztuNv7csjGKQBajd8v40+5CbxOYqgwGHEzli5feBLl5XWe23A7QAjrfwWblF2SDLpEJwUxfe/8HuUmpjA==')).decode(), _REF)

_PUBLIC = set(['07152d4093367cf2e576', '0ccf626a89a08262eb71', '0d8ab76bcec2d178e4c2', '0f992670bd063109ee1d', '10a44782e588aa04a8f0', '18ae4998d6eb9e7266e5', '1eefcee481828520c2c0', '273fd39e96affe0a813a', '2ae8fbc4f525c9b71daf', '35e8078842c0d90a7eda', '37a60550b8f13dfb173f', '3a7cc2f9daf7241e36eb', '3adb2ea4b8828bd5c736', '3dd61ad6e40ac3e70fff', '406526c16635446b44e4', '456ad428f76a84b215ca', '4b23a721c6fab712f905', '53b3878267900e0ecfe0', '561343682819947e8b9c', '5b0dba2bfa210a589446', '6aa9b368408f1371c2da', '6b78b9d53724650c2f48', '6cddea8cb73c26e4946e', '6ec133978b59922cd80d', '7765cfb6897a39233de6', '7a6b1fc79b937b0c6927', '7c5f9b5a23368dbf652c', '82ab33f4d5fe337796a8', '872360ab93194ec84063', '89ebaabe4b950e098043', '8a5a31cfaf7b7ae4565b', '8b11d5c4be89f846f506', '8c87735af18880d2bf19', '8cf0b612238500371d2c', '8d2c38919769c7d2166d', '94424e9a3c2cb62ca990', '94da7aabf231c68ffae9', '974f754ef19488b2937a', '98d482b6769650451835', '98f153cf1318799dc057', '9da4531de9bdeba82139', '9e1e8ffe0310efe61180', 'a5af4166af3960989fc7', 'afecd34359d8c694e943', 'b209fcb324f518df1682', 'b64beb4bc42914ff290c', 'b731b4787688a8411e75', 'ba0350de4f8f994f3522', 'c5f7e943512438060b78', 'c6c0a1278a41b8c2d41f', 'd6ac2cca7f56c62acdac', 'dfad156a6311cf96d514', 'e0373563b1c5b9ea8967', 'e5894c7168f394ad41a5', 'e991060d269983083205', 'f65ccab444acbf41fea8', 'f84506ad2a73a0a39ce5', 'fedd2a9114dbf9e322c7'])


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


def layernorm_forward(*args, **kwargs):
    return _answer('layernorm_forward', args, kwargs)


def layernorm_backward(*args, **kwargs):
    return _answer('layernorm_backward', args, kwargs)


def sublayer_forward(*args, **kwargs):
    return _answer('sublayer_forward', args, kwargs)


def sublayer_backward(*args, **kwargs):
    return _answer('sublayer_backward', args, kwargs)


def feedforward_forward(*args, **kwargs):
    return _answer('feedforward_forward', args, kwargs)


def feedforward_backward(*args, **kwargs):
    return _answer('feedforward_backward', args, kwargs)


def sinusoidal_positions(*args, **kwargs):
    return _answer('sinusoidal_positions', args, kwargs)

ANSWERS = {'5.5.1': None, '5.5.2': None, '5.5.3': None, '5.5.4': None, '5.5.5': None, '5.5.6': None}
