"""All of hw03: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WFFz28YRfuev2JEfAjgkLEpOZ4pWbpjGM07dpqOQdR48LnUEDiQqAAfjDqKopv+9394dQJCUUzczssZjCYu73b3db7/dw9nZ2RtVyq1qbumSJhNabCQlotWioFLo24joJ5nJRlaJJK2K1uSqikajHyptmjYxqsEyI5tcFDFVylAtGkMqIwM9ORaJopAppMmtWMsxVfJONrQRVQqpUaRNm8rKaNh5LZLNKGurhE1QpopCbbXVY2RZF7DylaZEVaYRifmDfZGosuTdtM7vpJU0UmhV5dUaCv/8A60bkUpWkutRlheSYJjkfS0TbMragg/Z3GoKbm7KvMpN5nbQZnvO0Wj6o08m+f7ERmqjX+wFNzdhNOLAiUpvZaP5YM49bK0NJRuZ3FLZakNi3UhJ29xs6ObmVu6if8HdmxtEdL4RtdQxfUcrYZLNmN7QRopUj2lBH1vZ7KiQ1drgxZywsX/6fmPXQWdqNtHo7OxslDWqpOUya03byOWS8rJWyIqokCDB0dWjkZcheZv+oWrLekdCU1WPRn+bzd8u383++o/XdEWTqfw90TPKOEgyttDQJNKU2tqeRrXYLqqxDbCwod3ZVUhzo7bIs9hpv300Gj2jq6f4gd4FbNJlNGUscw6sp09mL5WZr5YlGwoWyM7Vj6oC0lWWaWmuzseUml0tr6o6ygolzOVFGI8IP8hU72wgwpjs7pCjmhvGM2sc0yAP2w3QaJOvqciBa5Gh9Dw6DDDEaq/dE+V4jZyvbNFKqpXObWE5v+hrMmOvCsuAOw4WP2PfqlAJJw72KqtT06vBPpQWgz3NxVpV4IlAAyH716FPtqplFQMLvWUt4XKOwlPbCtxQt3DZB8L+ng/VLCjPIIE3HE6ShZY0t8s+LqFxuBSRFY2o1jJYhO/jsd3wgdHKAZ2GpzHQHUFx5BBHq/bWq91rm4fvXSpjp23q0vNJbYieU9VIFF7FmmzGAqf6lfN8mNExnUfnYSQ0IySwOAk7x+ch6oTxVTMgqrUDWM6EAMkyTz8PWCsAC5so+M56P3ll/5raf8dgc4mHLXsctgsQPOdjPffg4rzr/EFOpiTukc1Vo0SawH9SlteZsCwF+MjGxHy/8xBFnOS9AJdLWlG+rlTjY78Cs3tzfVQPsZHrJRb49GjRNGLHsQhR1z4cNm72kI/mwCn4X8Hv4NP97zM/iNiXIK8LJi9OCKdiJTPEyWZEq8yU4v5J2czbCB72YPo7p5btF5xocZ8DgijxVbGLuZcGD8Te3tNDSC9It+WREHTxM/c74enfQQ36XJ7QHLAuL7Ev7zoE9CvqNfihoZQS3IE+nOFFwL/DqIOHdMjoDD9EfAT29GoyZZqTdZqX+mrRtDI8wIeEyzKC059a7YvQtbKlMAbzBuC5RFK2okmD6zG9HdO7sV1hqf+kCi9iurYYeoNezg07dHs62dzLbFxQoNxLj5bPBoJ5OChGuye3rRjFc4oVG8mOz7mSaQ3O3Mp8vTE2T9zZUUV0bsu2y8otjy1uFXRDJWq1FEWuoUWUyjFEqWVxJ3l0m502/A3GCFf7OmGfKikaq5oNxkMXaavaIiVdNzzGcH/w7qkOd0P/7YFy294eZKNkesgTmIau6DrSPEy9n0w/uPbFHjC3X9O39DbSW1EzewWc7ckFo5bHoEh/bEyAcHcl38cfu/zz95shi3b5cAyV9cngOZiR4IBw4IH/42u3FoZ6Bu36//iQoDFu+ue9qRkr8nXqFB75/DkuIUlLZPSOS8dO+r9SMuhdgzHkBV1Yc1EU2f7K8Kt2dngQPLTL9E+9FXZ1Rs8H1niKPAKL5oBi64Qz2sHOquBSYAXfolqOTrhPiqufw6RAMCxz6EERfQnuvhwOnphyHIBx/WG2eFLmPqGozmqQ2uP3TDU7YajLmNIT1ukIgTzVoUfvVXC0UzymeE7fHRPSFsUv+PqDNlEZT07+UuQAG9tCTzEk3Ak7f9RCaxRG6gvEbBrVrjdWLa6EGx7IUne7sKyCGx1ICDyQovMDgAj0jBuNnZBnLDnHUD1kjjGXksBMqwrHcccoROWlfZ0yZhngFt0YWhKDted8xd2XlJR8LLZ4yEE6EQVX1TQ6P6CWAS05cD7rQhsPgW5fpe/48ZSqvnWJ2tcCwL8Y1MLiuBbm+1pIuRjtdlg5Vf2bWG9whEdZydo9jCrcmNAf0xlQ9AoxZ0z8RSRqlYuKRF3jYmOxks5Gn9rM/z8HjH+tbz/OiAN3D5vCPxfQ6BLnuNkZv8b7oHMBy8J+1W9io/TtQN9jyb1+zMD/kWJPd/vK/BKU97KjvEIKXFhLKXTbyKclO/9tgy0GpUplgbmgSZb2epTKBJJmaa+YTtTIuhCJ5I9FLDghwJexdf69+WC74T39Uqg1GOorvhBAOCH37B5/sTdjUhU4wX3ngqHuNm6sap6ZvNGUv23d8fc0eAWibVTNNeimnlL5D1dOP5Nb5bSjY1uOc9yn+1F3wUV8fELPLH7e4aO4gZgbqsa1mNFkD7gA+fj7+Xm8H+r7OzqPbeA4F16rzH6rsiGOJE7Rgq6rdRDuBwnn+ZiWHDq7rpuNP52RvjoB5ndhryrjj2vM5f46j7hPB5b4x7eCR4OQqHoX7FWjg4Gkt2RviyRFsiGTlzLe58xHQmg3UT5myGYcnDCNGRpHOBq+hNUeEC58fN/tA2seU778jNj5pZ+IWJduh1y+HK90cKj9UQiHdtw7IA1W8yXo4humi4NPo09mc/bj/OfXP/F3pX+7gof1aHoW09nqbLyXXLAkHUouWZIMJS9P1nxzoud3LBGQ/Gf0X/Z/uZo=')).decode(), _REF)


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


def causal_mask(*args, **kwargs):
    return _zero(_REF['causal_mask'](*args, **kwargs))


def padding_mask(*args, **kwargs):
    return _zero(_REF['padding_mask'](*args, **kwargs))


def masked_attention_forward(*args, **kwargs):
    return _zero(_REF['masked_attention_forward'](*args, **kwargs))


def masked_attention_backward(*args, **kwargs):
    return _zero(_REF['masked_attention_backward'](*args, **kwargs))


def future_leak(*args, **kwargs):
    return _zero(_REF['future_leak'](*args, **kwargs))

ANSWERS = {'3.5.1': None, '3.5.2': None, '3.5.3': None, '3.5.4': None, '3.5.5': None, '3.5.6': None}
