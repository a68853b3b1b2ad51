"""All of hw02: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (74 public calls, keyed by a digest of their arguments; the answers for them stand
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
exec(_zlib.decompress(_b64.b64decode('eNq9WF1v28YSfdevGCgPl2olynLSAlWqIO51AbcBbuFaSB6CRF6RK3Fjksvskpbki/73ntklKUryBXIL2ALiaL9mZmfOnJlVv9+/0pncaHNH5zQa0UVZyrxUOqeV0RnZyIgySkKiP+VKGplHkqxOK94R9nq/5bY0VVRqQ5kopVEinVKuSyqEKUmvqEwkKWwSaSpjzEZ3Yi2HlMt7aSgReYzZUpMtqxhqLfT8KqKkt6ryyBuh01RvrJNTyqxIoeVfliKdl0ZE5Wu3EOks49O0VvfSzcQw5V44I4n+/RutjYglS1G2t1KpJGgmuS1khFOrKk1hvrmzFNzeZipX5cqfoGRzxl4x7d1HI7W/ciltacf7idvbQdibJyzdbqSxfDNvH44WJUWJjO4oq2xJYm2kpI0qE7q9vZO78IvV+e0tXHqTiELaKf1CS/b8kK4okSK2Q5rT10qaHaUyX5dYuCEcHN+LtJLt3CXFi0zHMsXXhGYYj+kq7PX7/Z6L52KxqsrKyMWCVFZoBEnkiJdzle316jnEMmkHeZUVOxKW8qLX672g2VN8IHcuLDAYThiF7DWrV2Umti5UCmFaAjwbYeInMyGWq0Zp8DCY9ggfOK61KxCDKT1QEIYhnD+g0Rsq2tGQNEOaDU8FB3irLKLJMvYyEZB2QCOKBsC3wQV3FDFIkCY5TqY6XztBRm+mjNLgYaH89jHZKlt8cWL9whe/MCP5eRQ1m3lj4Cbc9mbrYIBs+MCYi3Cg1oBsgj0qqzLipNw1snWOlCJl6ecZnVGQa3fBFbJx4EKC9TrBM96FLT7xco0MEpwemH0zowkTApbHdDb0su9l7u/N6lnGaCJ/YtM4dRpbXJYsZcdKvcmnOLNO9VKkTn0qAQsvZSWME76UMBBwoQrU4qzlJHTawyag7v8HeCAvQmGFMWKH2PhQJWpVgpJmxPF5CDlSHMnZaDJEtskiVpmdzU0lB0Qv9lBwniM4DH/ZX8OO3akwaxAFfArCSnd05r3g9XNkaqWHElVOAcRMPrndRiJpcxwakwwR028yalx/nQyQtx1wL5pMCuJiSMVjSF8C6W7xAO3xHvw1tPkTF0DYGIsA6Yx4EHzkb18+wYUFg/H48ztWYyXWQTHgLVR8ng/J7kDipVHRXrCX6CHstPCfcatI8Vh5Jd1d/M+vB/WGn91d3gy80X/kXJNyZGthdAzmpgLfGUVM5eBaxqSA/2/cxUGGRm2bPYco8mJmrIi+gyu/LTaTQWNRI7UbZJbE8kZe+kFMn4OAXRtgI8EFO9blqHGSaDqDJyXgVssCFOFAej2kd0N6fwLT8yldU/ALCiRKI5c7cPA7R03vm+kbN83Q1VV5vPeiM9EC+iuFdMfMJRhRDASU0doDloeZBDLOnJp7gX6HmwJQHBeodozjl9wyXap7Fat87ZlpR/arKQM2KODtzPYxLgjOvFeuAA8cYnyzYyNtpNNYoR/Zy24KBvcETu5GxVz4rT4omhBuuLURxvdxoMtRoktndyGshWjucBR8fYho1zVch5a7kI+jmn5qY7BAb+ldaDeiEFtpAwb56JyZhjuGsL0fI7brbJyqx5dJQyZd5zslF53q6BUeCcK5tsai80GPJNEr+qYIPMsJjJi5rmviJHLQZ5D7Fog4lvT2FCMHJnczEnIAl+fIvZdN89OmwfO0Pfus29cGd+s6+XD9k/x7iRJxklauTJykZfzu0NuYOcrROv24A6jzniug4bpq8V4QlCqwNsf7dV1sG/hytjm0xthzJ/eZuExxcJMoPCdcNZGR4jfAJkEr798TBn16oV0u6MMscPQH7EzCswNwdxLDI+RFY+60izav8D0PT5PlrXfbHpDwwLwDyPkxIG/2gIw5SdxxaDkV/Y/yrnOFR1MQfW/TqF3AbwIkAo8AAg/SaHidH13Mlzx0G9nBtbktcZy2HheMqeO0PDbokHg+z1EaXWi89Gt2Rr0Fy83iP8t1YLSV9ljQrh8R/39ErqaS+JqzgfH/HHTyiukka8qFfdqXU5GqcuH0BFvc/oQvXvkH1NY5h111GojX3s6PyyEBr+UnRGTLAxBR8t1lMg2S7ycDfPnUoYv2teWIgI2glTIWR4LLoVdxVZOOq5HALyuhhNb8fGC6wMvC/aKg1pWurJO8koKfya4Ae74BUShmyNeH3MEjkLRBmbd4qiv3u0nufvuYu19NmDCwiIpshFonpROPEnWImY2u0pgiJDZLD7x7lqmO0Izk2H1FpsqdNZtEA4ONNbbpWQ/5q/Yw+88zVheD29A4q2QdCHYPjccIWdhei98e5+hUh/SyTdJ662MJ5N8XmcRLp4HAY/FftvE/yRZ342H9e5Fjfb5sB1Rh527N6f91v0evcXxr5HOnVzm5nDPoOZL0B07Sg5+InkznxX9uPvz65w3c9l8fHGgPJ/0p9aP+cD9zzjPL7szLk5lXJ6d+ONnzI88IzPzV+xtmaqUA')).decode(), _REF)

_PUBLIC = set(['008dc43f65c179d9298f', '00b4c318e7f82ecabcc0', '0108cf50fa7249ec7e44', '02ca1c1a28545ef768aa', '02e10aa28ff7a2b1d122', '06d522852a5f8ebb60d5', '0ff684dc0f69a75b2475', '0ffcc69c98bbf5fc2033', '1039a2062cbedc97b551', '11a5c487d56b15f0fa4c', '15914b7fe681ef9a6157', '15e35d77b942e749e6b9', '194fdc46bca30a570adf', '1a444928effea9e48e83', '1f1f0a96372598ddd8fb', '1f9a65721d388e0200a6', '233b7197244b432490ca', '25c88d50d05b9125bff6', '293a7cda1e242bb3d6ba', '3213a24afe321b633f93', '33aa18b988345273a37b', '33aaf38938561ba5d93c', '358c56f48f7367ab5ac7', '36907de869970b982f3c', '36997903cc084105c28b', '3bf0c5ce705282578aae', '3d193d4ac9d66e4c6823', '4198450b016fe1b3bb13', '4351584672105af7e72b', '47a8cd56abe37265b35f', '4945bb6fd26edfd5c3c2', '5395bdcda96f0d8e0c59', '5c78403aa31426ec6c73', '5dc658038ca6e429051a', '5e99adcbb5dc6fabe6b3', '5fee7b04c240e5e062c2', '60820281bb116839be27', '62cc8530258ac32ddcbb', '6455685dd3c1504a4e44', '7009135fd14dc425521b', '75db85a83ac154e1be9d', '769b7ab0b2be49ef9a9a', '7af2306b70c33ab3d248', '820f62fd1a3e5dca3334', '8a83fda86caca8a4b238', '916e2fdf421dd8a09ff8', '99c23c49657ee1e1c808', '9c94ec748c2881d77372', '9dd0fc9bb46b7e2964dd', 'a233bff1e024f24d2a7f', 'a4d998401cbfd90a1b22', 'a8841b6caf568edf554e', 'a8d1ac5cb0c1247d053c', 'b2fd9aecfd706c81fd87', 'b38e468132984484e538', 'bcf3155ed425f6493da6', 'c53b7ae8c0f5413c0c88', 'c7414bdc48fb6752b830', 'd49db14a9e0bbeca0fda', 'd57f13a027019b548e43', 'd69ab25b83b0a064a359', 'd9a7f8bb617c2b761b4b', 'dff726bf7f577df3df28', 'e0cf07251221cf4798cf', 'e1c5b4003c1511400094', 'e587065f5d213d168e1d', 'e5a9da01fd0cedbbcb75', 'e848c3d4732cb280bc38', 'eb5b90610aacc0cbdbcb', 'ebad8598171aa1371efe', 'f0ce6881dbcf8c9a8d1d', 'f148e1d780b33a3fa25a', 'f1a31b04812ae4eafe47', 'f603f64634960fa4bd5c'])


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


def softmax(*args, **kwargs):
    return _answer('softmax', args, kwargs)


def softmax_backward(*args, **kwargs):
    return _answer('softmax_backward', args, kwargs)


def attention_forward(*args, **kwargs):
    return _answer('attention_forward', args, kwargs)


def attention_backward(*args, **kwargs):
    return _answer('attention_backward', args, kwargs)


def split_heads(*args, **kwargs):
    return _answer('split_heads', args, kwargs)


def merge_heads(*args, **kwargs):
    return _answer('merge_heads', args, kwargs)

ANSWERS = {'2.5.1': None, '2.5.2': None, '2.5.3': None, '2.5.4': None, '2.5.5': None, '2.5.6': None}
