"""All of hw06: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (40 public calls, keyed by a digest of their arguments; the answers for them stand
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
exec(_zlib.decompress(_b64.b64decode('eNq9Wm1z2zYS/q5fsaN+qBTTTmM7mTtlMlOntqtOdWka8+re9FIKoiCJFV9kkrKs6/S/37MLgC+SnORmLsnYFgkssIt9e3ahdLvdYZboTZYv6QUdH5O/0LRZZLEmnYbZVOfHUy2fJ0Tv9EznGNZUZPG6jLL0pNP5IS3KfB2WWU6JKnUeqXhAaVbSSuUlZTMqsWMEIhXHeorRcKnm2qNU3+ucFiqdYrTMqCjXU52WBfhcqXDRma3TkFnQLIvjbFPIPqVOVjG4fF1QmKVlrsLypUyEWZLwappH91pGIHJ0r0RIou9+oHmuppp3iYrOLML5wJn0w0qHWDVbxzHEz5cF9cbjJEqjcmZW0GLzDSsmr85+fBzVRy51URZP64HxuH/SYR2qtNjovOCTGfmwdFVSuNDhkpJ1UZKa5xq6jsoFjcdLvT35o8jS8RgqHekSiiwG9JomqgwXHt1A4+sczGOdzksM+FSqfK7LauCSpkECO8UeDWmh1bTA2IJeYeIpDT26xvxs5nV+CYo8lLP/EpTzUoS7z0I1WccqjzRWjQIcUyhGAWwvFJM4C6EbWFPDNrAVrHjS6Xa7nVmeJRQEs3W5znUQUJSsMthdpXAB0X7R6dixdJ2stqQKSledzs3w4u1V8ObiH1c3ELLXhVRBNC26Hsljooqle9bJRE/5BXIFhY5nwV3rrQizXBduaDYLFtEUruQGsnXZ9TrU/tfF2R2/UK0LFVcseaZiCQXsMgnzrCiMCOZxWT86qj12ZjrRsFm1b0tSHhBJqXsb/JM/4mwelUW333l78Q5q8q/eBXjya3VVQrYkXmVFJHq35+fYDWK1hUM1R9IsT/blFFltwDcWuRGzyEjY7/xwGbz+ly/2S1cn03K70j08RGn54rx/EiFWi+g/mugrBMFSpwR1k8o5GYDAQ5ZBIHMOYAcT10VUyy6dTmeqZxTEJg56CJ5ZNO8PRFo4Xe/SY5e+hNtfeyQe7Rl3tt7rGdfts8OOx2Y5Iov9lbcIIbEZlFfejUd+69oQ6r73+C0NJI6674Uq1/DwlCxreipRJWtmM7uAjSKxFPDB7SAbZ28wDXYsg+F/V8YQgh0rvIdSvqJXn+Mf9vXh+/Ti5BkjgES0TTdsMmQw44oDYnNtqViolSZkZjbcRm0/m1zsBMLMuYBHr5ELkf1qX3CSD2DoP1OV6IFZ8td47EFGhgxkLMDYLMOBpkCTfKNyxqGiQKrlXa7kVCrP1dbhlbUO4KlA7q1CyrMaaNFaQ5H/khT8NWVK2VeoAFT43AqluBMnQLxEORVYiCyrHiIGPQaNLI3d5oILkwx/TIYvKJJ1xoE5mxxX3L6GaXy6W2tO4MZ+TcHUXDFA4SBAmca8PeSJU2UVDI+EVoAfxMluWDaj48/Kh6uEPqAeG63vtack25q5Z/IDCk4VbLI829AKgusHBbhHrTDJMzUNFc6QuYRhdQn98Zs9e5uFSYmWP87UFKEBJYZgaGgWB4lsWm9SWnFtRJhocX5SafzgbHv/GgQqQa93ZWBcaB6DGQ85g3T24MyQ+c0dmvCGaV+mJStDcQUihmPCimo1LnplDbcZNBXq7yh0FygrXfm74lj4bBKw2lmix1x4d/Vyz2i8uvbuHeW0sLnJ1xqxjp0HGySdw8D9+NF3zejvmNHBe3MHY0bM1GQMrCC5tDFnaEz2ReQJMX1LoKqX2DKh2rixkDXoX7z7/sqvS7ytrPzrS6DJKaNJmK2Ro9I5twPwNU4cnxUvgiorBjXH3mUNGLfBnQcNLvnPPf/JoG8Y/rLvsglS8yRSBdyB19E5Xf5+Skf82ShahlU1YVPfOT1BWcC/R+bZVTEzrVEjGNhpycQu0hDrmZHjuo8NJvwmT7fBKZ6MfDx+ykLt8j61vK9Bwr8VbykepGx7RBtzlSRKDj7RpWIJGC4PM7CbVhsFYtu96sxZXxCZm8CBcQIgsjAaj7sleoO4K70OL3JoK10G8BtppAY3HIc1eOyA+wjCjPhYb3Aqjgpnn1OogA//dzHB9UvZ2mFgc2uRYgdC97mcNbjIVq/obzucnj03rIDeNwt0T/DyXCeAKNusmg6tVBNk1J5ptzjsy22DUrZGQLPqTegO6sRsSgEAf45cTOUmCgGGokxUMtxRtrH7QF37CVVyC9INmldq8Qg9I7H/MNUjoeV9xMe9x/1QuCEvYvc/D4O36Vfhfd5hLPqGopnU3jCANqNTqBcFM+m40LbL5fWcEYVqajUssIyeQwyEYnGTaon/XNes6m5qIEEATol6gL5SMOCgM9wdGbz6PZIbsrJWObbrGiG+qUob4wxc3BTRVLdgvlntD2wX/oR6LRedifc9EYvsVAl1gzaQ6Tb47G7OdsfmvNceg7OKgahMQubizeVuyOzvf5i7wTRnpzLSDIQrYKG1ECcu65aMWRHbhwOC611naFjpNrj63WdfrKtvRkVYzSKadaXfbHaBHahYJz0MndyreI0mot+qVTHxJVDwjFFww15lGl2EPQqteaY/Mw5KMVZHbLqGHhFzKBJGnqSGOmO/MXPioDvJt1hPjsVtUBbpFRog043QaFCnR3oIgIqoP2jkUDQvSlM78iD86CG4gzkeguW9I/PoZ49+REKi3hm5oQueHeKF15iayxb6mVu3i0wv4D2v8Tuy0GuezefQjo8cHJpi7qBSfFNKPqqXXbyw6hiayzIO5qZGIKxvxfHt8c2QDdqfq1f60VzGsT+bzRCUr1GGNvThS6GauTWHKg8+rt9QgW8TBT/fNMaHlu7mYHWy5ySNAqV1uJHdkO0UpQhmFCiVYVe5PlZhaW9fyZQXfBWJwZ7qmwOOsPehKuOQLZvj11bwmkEw2ZafcENwJvWIy5SNWy1+ZCeTmzRJHVypRCnJvq07AqBWIv089wqvqWeDGZkqjlJkfF4l16V8a9s3N9O1y2x0NF+U5g7MdfLS8fO2BXoQNc1xotDtYht/vgYe0g0qD+mJm7WSJ1O+FCXWUZhov/L55B7/0cKg0evfNS/8zMRvXXnrvm/f+50bHfKBZnGmyrNTD0WUe3txLtvNIsCmqQ1guMabDz67/nvj7bt6q4Z8Rb3qXtK6/+4l5xFO8KQG2A9kSpcRsOTRQLmxgdI/zKZ5OkNiorx5NCCjUbgpFlytIDjnmdpvsrUd+k4eGrTKwZbh9zXhP6YJWw18QBN+QxOflkUPXS23WD+qUf/DGu0ZBR61XMUScxzj4HetjOjabE8uOqaue3ZXVlVKGDgnauSGgVOnSxID4VGlimoN5HGKPxKSL9Jin7da7OvRT28/c1WRqDJZx73EIySftHEljyqAln36lnpLPGGGEkqhnFJyJcCNv/WKy2gVb4/VlL+dOgXFEjQi9SEoSPC75FrUYVXtcsgfKwNTaOZHy13g/ilt5N1BdbvDOGRqT2BU9oc23y/KlSIA6Y7vHSGXXCMxqakaZV42Bs3S0vA0Z2PxN2km5HKJetjlgS+kWBGXCzyPltW9ApejlmJkVDVaGurq9O4bu6c0lPdaTO50WSnOAoKHd3JwuRnYm1u6Obi/vfPIXlYXH2Z31Ow2YtxS2XLhiYBHrVHZcCHb/Uw/cimOI6UoUX5p2q0pcF1xOEYHi47alq2Sw27YOpMlaEhmh6/dSR9wuGceqo3b4NRya/P5WJlwjo6r/z+VCif/J1itEayGpgMef/MBWGoSNVJojQh1qj+ws99O84cpPpbeHxWpndV33E6StRCYO5AqZ5vbTiQT/ioeXRS351V3GDHs5fyfDb5UQmd/KnMVpUi3n+5QEziUfG9effmUZ9N1WNJ3UMGvdCtfM5WbDHVjuGwSFK7L5YLK9FPTX7Fm+h3dcgROb3mD330MgEW1mjPFg2OGZEVFqVcYPatHK6d1Ir36SJxUbXVb1XYR1Fax6zo57JVJPeE0fFaPfhGUfG5QsvE/MD4bz4s3N7dX726q+6wuuJ88w5m7of22XUZOeWTSHDnbGznfW/WcR1Rz5AWPIB11/ur8F38xP5I=')).decode(), _REF)

_PUBLIC = set(['0337feced30c4b69292b', '066b84fdb78bf8407ed9', '0b73557594809d862292', '1397dcf66f5f80707c37', '1501f46ccc06515b6275', '185ef359d25983dca318', '1c484f994965fd5d92f1', '2258cc264381b5517d2c', '23bc8a2d7c3cf3e30dd1', '2ee0552aaa1d2bcb0ec5', '332aca5a50d01f2caab6', '3603af351d09800b556c', '39bb3354bc3eb49ad487', '3a79b14b9e72d23b7a9a', '40d36c612023ddaf0c5a', '4720a11e7f988468de44', '61448f0968e48985cfd2', '69742eec6b1bd417c2ac', '6ba0cc7bcf1638f66f67', '6e3c55b679d2e41b0f6d', '7120669da50601266da5', '79bc6fbcf053d3710057', '87bf3c9e111f085a8085', '8b2616fdb2dde432c97c', '963a16e9215d6fc5b85f', '9ab921b461013b32781c', 'bd5a41a92f9d59f6876d', 'c01b4007b797089c23e9', 'c427e1d62a60345d031c', 'c4f8c386aba00bb30661', 'c7704b0871761d05ca19', 'd25860cd71dfcaaecb25', 'd9656b323db9a10b6025', 'e5d6d0813799639a8c62', 'e7fc453a8b72e34bd160', 'e8d9af14c8654c2a515c', 'ec0cc53fee7041294fe0', 'f1dfbfbfbf8ed2160e7a', 'f28620febfb66cfb980f', 'f7077c0766775f3de296'])


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


def shapes(*args, **kwargs):
    return _answer('shapes', args, kwargs)


def parameter_count(*args, **kwargs):
    return _answer('parameter_count', args, kwargs)


def activation_bytes(*args, **kwargs):
    return _answer('activation_bytes', args, kwargs)


def forward_flops(*args, **kwargs):
    return _answer('forward_flops', args, kwargs)


def training_flops(*args, **kwargs):
    return _answer('training_flops', args, kwargs)

ANSWERS = {'6.5.1': None, '6.5.2': None, '6.5.3': None, '6.5.4': None, '6.5.5': None, '6.5.6': None}
