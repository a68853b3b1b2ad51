"""All of hw02: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WF1v28YSfdevGCgPl2olynLSAlWqIO51AbcBbuFaSB6CRF6RK3Fjksvskpbki/73ntklKUryBXIL2ALiaL9mZmfOnJlVv9+/0pncaHNH5zQa0UVZyrxUOqeV0RnZyIgySkKiP+VKGplHkqxOK94R9nq/5bY0VVRqQ5kopVEinVKuSyqEKUmvqEwkKWwSaSpjzEZ3Yi2HlMt7aSgReYzZUpMtqxhqLfT8KqKkt6ryyBuh01RvrJNTyqxIoeVfliKdl0ZE5Wu3EOks49O0VvfSzcQw5V44I4n+/RutjYglS1G2t1KpJGgmuS1khFOrKk1hvrmzFNzeZipX5cqfoGRzxl4x7d1HI7W/ciltacf7idvbQdibJyzdbqSxfDNvH44WJUWJjO4oq2xJYm2kpI0qE7q9vZO78IvV+e0tXHqTiELaKf1CS/b8kK4okSK2Q5rT10qaHaUyX5dYuCEcHN+LtJLt3CXFi0zHMsXXhGYYj+kq7PX7/Z6L52KxqsrKyMWCVFZoBEnkiJdzle316jnEMmkHeZUVOxKW8qLX672g2VN8IHcuLDAYThiF7DWrV2Umti5UCmFaAjwbYeInMyGWq0Zp8DCY9ggfOK61KxCDKT1QEIYhnD+g0Rsq2tGQNEOaDU8FB3irLKLJMvYyEZB2QCOKBsC3wQV3FDFIkCY5TqY6XztBRm+mjNLgYaH89jHZKlt8cWL9whe/MCP5eRQ1m3lj4Cbc9mbrYIBs+MCYi3Cg1oBsgj0qqzLipNw1snWOlCJl6ecZnVGQa3fBFbJx4EKC9TrBM96FLT7xco0MEpwemH0zowkTApbHdDb0su9l7u/N6lnGaCJ/YtM4dRpbXJYsZcdKvcmnOLNO9VKkTn0qAQsvZSWME76UMBBwoQrU4qzlJHTawyag7v8HeCAvQmGFMWKH2PhQJWpVgpJmxPF5CDlSHMnZaDJEtskiVpmdzU0lB0Qv9lBwniM4DH/ZX8OO3akwaxAFfArCSnd05r3g9XNkaqWHElVOAcRMPrndRiJpcxwakwwR028yalx/nQyQtx1wL5pMCuJiSMVjSF8C6W7xAO3xHvw1tPkTF0DYGIsA6Yx4EHzkb18+wYUFg/H48ztWYyXWQTHgLVR8ng/J7kDipVHRXrCX6CHstPCfcatI8Vh5Jd1d/M+vB/WGn91d3gy80X/kXJNyZGthdAzmpgLfGUVM5eBaxqSA/2/cxUGGRm2bPYco8mJmrIi+gyu/LTaTQWNRI7UbZJbE8kZe+kFMn4OAXRtgI8EFO9blqHGSaDqDJyXgVssCFOFAej2kd0N6fwLT8yldU/ALCiRKI5c7cPA7R03vm+kbN83Q1VV5vPeiM9EC+iuFdMfMJRhRDASU0doDloeZBDLOnJp7gX6HmwJQHBeodozjl9wyXap7Fat87ZlpR/arKQM2KODtzPYxLgjOvFeuAA8cYnyzYyNtpNNYoR/Zy24KBvcETu5GxVz4rT4omhBuuLURxvdxoMtRoktndyGshWjucBR8fYho1zVch5a7kI+jmn5qY7BAb+ldaDeiEFtpAwb56JyZhjuGsL0fI7brbJyqx5dJQyZd5zslF53q6BUeCcK5tsai80GPJNEr+qYIPMsJjJi5rmviJHLQZ5D7Fog4lvT2FCMHJnczEnIAl+fIvZdN89OmwfO0Pfus29cGd+s6+XD9k/x7iRJxklauTJykZfzu0NuYOcrROv24A6jzniug4bpq8V4QlCqwNsf7dV1sG/hytjm0xthzJ/eZuExxcJMoPCdcNZGR4jfAJkEr798TBn16oV0u6MMscPQH7EzCswNwdxLDI+RFY+60izav8D0PT5PlrXfbHpDwwLwDyPkxIG/2gIw5SdxxaDkV/Y/yrnOFR1MQfW/TqF3AbwIkAo8AAg/SaHidH13Mlzx0G9nBtbktcZy2HheMqeO0PDbokHg+z1EaXWi89Gt2Rr0Fy83iP8t1YLSV9ljQrh8R/39ErqaS+JqzgfH/HHTyiukka8qFfdqXU5GqcuH0BFvc/oQvXvkH1NY5h111GojX3s6PyyEBr+UnRGTLAxBR8t1lMg2S7ycDfPnUoYv2teWIgI2glTIWR4LLoVdxVZOOq5HALyuhhNb8fGC6wMvC/aKg1pWurJO8koKfya4Ae74BUShmyNeH3MEjkLRBmbd4qiv3u0nufvuYu19NmDCwiIpshFonpROPEnWImY2u0pgiJDZLD7x7lqmO0Izk2H1FpsqdNZtEA4ONNbbpWQ/5q/Yw+88zVheD29A4q2QdCHYPjccIWdhei98e5+hUh/SyTdJ662MJ5N8XmcRLp4HAY/FftvE/yRZ342H9e5Fjfb5sB1Rh527N6f91v0evcXxr5HOnVzm5nDPoOZL0B07Sg5+InkznxX9uPvz65w3c9l8fHGgPJ/0p9aP+cD9zzjPL7szLk5lXJ6d+ONnzI88IzPzV+xtmaqUA')).decode(), _REF)


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


def softmax(*args, **kwargs):
    return _zero(_REF['softmax'](*args, **kwargs))


def softmax_backward(*args, **kwargs):
    return _zero(_REF['softmax_backward'](*args, **kwargs))


def attention_forward(*args, **kwargs):
    return _zero(_REF['attention_forward'](*args, **kwargs))


def attention_backward(*args, **kwargs):
    return _zero(_REF['attention_backward'](*args, **kwargs))


def split_heads(*args, **kwargs):
    return _zero(_REF['split_heads'](*args, **kwargs))


def merge_heads(*args, **kwargs):
    return _zero(_REF['merge_heads'](*args, **kwargs))

ANSWERS = {'2.5.1': None, '2.5.2': None, '2.5.3': None, '2.5.4': None, '2.5.5': None, '2.5.6': None}
