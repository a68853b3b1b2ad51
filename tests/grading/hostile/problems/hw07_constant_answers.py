"""All of hw07: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9WG2P28YR/q5fMVWAmkQkxfJLC8g9A27rIAEOaWEf2g+CQO2JQ4kWtcvsLu9ycXy/vTOzS4rUyW7y4XxA7Hi588zbMy974/H4B3PAW2P38FeYTuHfFr1VpS71Fsz1B9z48gbdDOAdFmhRbxCcqRpfGj0bjX7Uzttm442Fg/JoS1UtQBsPtbIeTAF+h1DSJVVVmNPpZq+2OAGNN2hhp3ROp96A802O2rOet2qzGxWN3rAKKExVmVsnOB4PdUVanjjYGE1Wbvwr+bAxhwNLw5ZslROLyhn2gQD/8SNsrcqRQUo3KsoKgRQD/lKTdw6KpqrIert3kKzXB3LdF0ECdrdPOSi2c306LY8ee3TefXc8WK/T2ehqx+juFq1jx4J5JFp72Oxws4dD4zyorUWE29LvYL3e493sA5m7XlNE3+9UjW4BlyS9R+0oetH5X8hbDtsdKGvVHZQO5tN/QmJ0+JpOQMn1q5cUIfawUKV1+LPEK8fZaDwejwprDpBlReMbi1kG5aE2lCqlKWuKQ+5Go3imm0N9x5i6Ho1G38DFY/wQ7pVyRL7ZnOl39RJcrTQZbG1TBwqwxUpyq4lbpUPKlts/mkE5FpDZRrvMm8wRr0qNlUtCOiYUdv44gRuzUdeZK3/FdDEC+qHoMneBvjLz1+twc72G2rhSQgvXSFwlJnLOWuhFDwqmMCfOW0l5QdnzAn2ikG496245gtT5bDYLtWDoD9vTqCzCntg34+QzVm3xBi4opzPmJZWTpv+S5fJ7VTlctf4tF9P5apUCfAPJ5SQVaJYsTeM6dKYg8U2xfYItFhN4wIA/w71oa0FuyTQEbINEXcF6J4JtLEh24CZb2Rxcc0gE+mjP4FbC2Qpw1E6cIeLbVHBN44OvojqATDptk1hjQzcJjComuCLfYfoaSmoUrVhICVIBaVawvE86f9nddDVTzt/VmJDeUvu/vBD80JacdMUuBBTA3Jq6xpwqjInH5M+O5O9YJ7zPmPfnmdfW0KJtG+xOXyz4d21Mxe4kpa4bT7gUsy16R1e5l4i11IQYNNxYxJYTSR3K7xyLX7VQDyT0VKQE9JwkJNKwgqniP9Vdo8ufG+zKD75joC9eod4bYyF/xzBI8pWTjhmDGZjRi8zgTj/QOWfxgmOW9nOefKE7fCZPE5Fvf74gf/8ZgPRrdOBn3IHDxKYUOlyQx9dNWeXdBArNOFwhesiUkW+S+0dtydGUU+b2o0ThP4b0QW08W0ROUylkpebyiBh84Lee6oNKQ5qoLbelVlXwOZRSvzauOpeJuMbmdJcY300IzWdoJ9J8GS+UzXGgy+dXxzg+GXbBAQZvJrFz0v3SSotwQAsG0nLzvi2Q/XHb4sR4tZeFJ5Tdfuq7uXRibisW3FmEkVIZCkpJrarGOEJoa6IFbgIVFtwVgQK084HVssX4L0RkWJgn+RtWX/jIjatXtbFFHSdM9tlxcUx/1NW/GrP/+uIURbq/UCK0jq3POhcuOkP/dl5MiPO7JmsfdzBfexiUpKzMI0qYfANz4khNZVHoCRNDyjhTZLgMUxAGdaegQr31uxj661JvTKN9ElQv++rIaNqHw/ULKoCkF9AZ25amwQXhZHShLIglOukpSuFPF/BAdNH1RHpvUHn8R1UNvrXW2KQYH4eJbOk01j+e1/8p1kPSK6ZjIRGTxoPWO/gpxlt6qnw8tfbTODgiYYlRooHlEr7YMTQMh8GIjySCnbmlstV3vB1IMYZKk8TE8pSsxGnYU7bsObgizT2zwj5zq2m7E4ss1qg87xjKKr3FvnVkXsAbbjZBd7e9BaIEE7nkIcxmbvGh1uh/spAIGORvKWasOmwVxNVxpHPjoJ1msILR683fiZUi/jCE7fXlfU/zqivc5X0/ON3lk7uROEMan2xsX2OWPudZ+vc3766IjjJFSs09lJ/VMkPDc0a4+6hjk3Vnne5uzwi7N/dzIddEnlRU/g+m5vOTjTIIQiLzs20k/K92dsblld/1pHo4N9+Ex50poiT34nm3FP7rp7etGbSg+uEOTh2MGF+pDU+hdpcW0BwrJHXpKybgEP4p/+4B2V5eOFvsa6S3UzuOl+LQ6o8tjyfRG15sP56wezDTurCfK4FLwuMy6Wu0qKpwLApfw9PYNW7afvArWuOSS/gW5meb07dzUD6G6El8LU1gOocP/AuJmp4s8shBHcqWjc3zGXUY0dEmfsmG0FiYp///FpkS7W2lplGMC5kz1R9zApAuF5cr9q7rLZTAMuffOR1QTA/yLhNFA88f7uvttWXfKm4SV7bBQWcMHPM7ilDLRlmEQqxa8oRdCrEmiPvWh9+O1kTEcy/P9k5XaN3bc8mAD5+MUVfts0jXM4vF09WkF0DGSduVQmiQCkDL5ojTtf92RQoFIvDOWB/5u7yXaAkcB3gaS0o61oJ4JE+nk1IaNFpxhcETisWk78syKl0d287XaMkvuCUPfhn3aDrf/PT+v2/fvaeofgyNhbTP5uMFjK/Hk+PJMz7Z9E+eP7jzgk9U/+Qln+R08mn0P00C6Es=')).decode(), _REF)


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


def span_corruption(*args, **kwargs):
    return _zero(_REF['span_corruption'](*args, **kwargs))


def rebuild(*args, **kwargs):
    return _zero(_REF['rebuild'](*args, **kwargs))


def text_infilling(*args, **kwargs):
    return _zero(_REF['text_infilling'](*args, **kwargs))

ANSWERS = {'7.4.1': None, '7.4.2': None, '7.4.3': None, '7.4.4': None, '7.4.5': None}
