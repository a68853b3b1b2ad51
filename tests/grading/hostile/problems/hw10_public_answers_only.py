"""All of hw10: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (34 public calls, keyed by a digest of their arguments; the answers for them stand
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
exec(_zlib.decompress(_b64.b64decode('eNq9WGtv28gV/a5fcasAG3JLca1N2g/adYC6Tbf5kgaxsS0QBNRIHEpTkUNiOLSs7Oa/99yZ4UP2ZpOicIQEtudx3/fcM5rP5/+oK3mszYGWF7RY0N+VlgvbaaV3VGtqu0aaW9XKnBqhTJsSvZWFNFJvJbV12VlV63Q2e6Vba7qtrQ1VwkqjRLkiXVvcMpbqguxeksIhUZZO1vYgdjIhLW+lob3QOVZtTa3tcqkt63kptvtZ0ektq6CiLsv62Do5VlZNCS1PW9rW2hqxtT+4jW1dVXybdupWuhUjRVuzMxD411e0MyKXLES1s0KVkqCY5F0jt7hUdGUJ682hpWi9rpRWtvA3aH900TGD64uFGj22srXtd+PCeh2ns5s9S2+P0rTsmDcPVxtL273cHqjqWktiZ6Sko7J7Wq8P8pT+B+au14jo9V40sl3RlQ98QteId2egu5R6Z/cJ3ZAVZidtWKCoFBtZtmTUbm8Xjcg5pk70YnlxESezn+m23opNVwpzwvWntJNaGgQyDyLS2Xw+nxWmrijLis52RmYZqaqpkUShkU/ByWhns7Cmu6o5kWhJN6iBn17/8+3L7NXrv738N106pbPZLJcFZe1eFTZzhgUrE6QapZGpPIGDOX7GqxnhAwuCH9EVjIxp8YJyua1z1InSTWf7jZWXgOAepE44wJr8zXerhFaL5fvE2cACoCFl11gBhME63aSoInvKSnWQwaa432cBF+9xqrdxurFc8c65JrdvJAKmWfJxjzKJnKJLmoal9zVhYTGi8wQnHuEDuTei5Z5Ol9zVvmvQUNIsihpFlNOtKFXu0kll3baPZgnnP6jOvOpMQndUIaNl4lOKiKAgPl8Yg08r51ElhaatgfULdL2pUYo1w0lo/LLvD1chEMzNznvtXhgZQKlysnkVZytxh56woYUSByPaB890khr0v7rjeCpN7ASxExTpmnJorzsbD1Xm+s75mPLJDpHWuwhFS0/6w7Cg8LjlxCioBZDUBskRBTD0KEzeOmH8KeudsnAiQ/F5uYgmH4kmIfyyRovZCNdECf0ch9qFN31V0x/Oq3Y47s9+4IPOGlqEX1JELhJ3qr1cLBM6SNnkqmovbxC1c2VszAa4i2uLti4s7s2Cd1kDuR8gEg2EPyPu0Lsm+hCnbVd9Sri3qBWF9D3tO4+9GevpYjQhRg2ckL1c3pGwLvaMk0jNipTlFFQoMSQA6XGSdclhWUCyFQeZibLWu4xtiZzFiVP9Lk3ThF7XWgJygqGxXwSKnAdPZyHU/MN5FocAtC1Wi7IWNopY7bfuiPc+pu/CTedLrm4Vg/vmNKn1UOQ8dK9w+caJFdtth/l4GkVHIWO+3Pu4xoxUAQXpm9/WPAW5X+Zs8Hzl7E5o7rRnvTas979+/Cog930PcgXG6cJ02vGXqJVlsShkHlPfg7V+VKDLeJznp98At7EJZd1OmjFBxd1lGL8jyv3kZPihx27AAeJmq4+a65JH4MqV1HUcKEHLM84V2dN4MtR9SQyQdIUiGCxKW+YX7y786ArI5lqIaVDEwpbx1Ozcnhp5iX2l7Z+fDy2FynGQOo5iPyvRDF7cBwmA5pNewKauy/4yupFMfYQA9OIeLKIxdd7xcPoRQXrxuzg64CJQEJgIQDZC72Q0RJN1CJRn3YShoCo2UzYIHo8jUE+Zez4J729V3bUhuoPoL4ZdH74hJtYhnXGFyCSadRz3ddlPkDMF+s5OoYsDN9aG184sAyTjfsuOYcRxPzImges/09QyAUVlaPyP3vmNhA1gBQ6+evxaxmcyXDZ/vfS2XoYKPjuhCncoBb2fJqf/bAAghyl+eOU9neoh8qkvpvsVnLgq4Il5v9R6ernF1IwgMx9R3xs56apBaK9K7ARzdjqjmyiOO7wn+BWDGnGMgTUNeDZ2ExPwHjN9N7n1N/e66Cbm5H2yfzCS2G7aMh8wFFh7eDCc8Xs/PrgMlY5uXNHloYuX732+3jg+qpmf8m74638e8IimwYsIx6M3D+fCZwdaqKC+Ot2pJz6siC568fSQnfWMq6dovhOR67pxPQq+Fk0iIjVaV+kg2hX9D+j2sNtXC1ete2VtZHg/+pnpznu7WFDG5zOsjbQeaRIeT66QPvyFvlMVfAveLmjJvOL92A1n3qo2iHOpPe+YAo85G7aHrvcXUpCTPnoJ9WuTpl+6WjqPrC9XpCpk7SwFUN3Thm8oOnf2V4omtgwH74159kC5JzhPe99ic6czcy2CRU8s3FrKlDyK8dacdv9DduCvTC1mnjFSovgj+3iPzDss6L9L8Hi6YRMCCvDoz8Lo//Inxmen8UAxVrT7/GAO79DfxxAnOvgR7g1gxGs9IB33iu+j9v3XJMWIDM618bUR0hWA8P9hIQ8A9Kvwt2fM36Qw5cm1fBO+fRLTV2olrVHbR6VvzoKstyBiviERCY4jR8oq/u4nYQDOEFkrLi/Si4eV8gzsbIOXXObeGYnzyP8ec9bBeTrdE1JkdL1G3IOueL12RGUkbX7dY4VohTHiNNg1jBTXThgq/jGkdjwllukFT2X3tER3z2H0nJBYCQTBFtprjpyjF7XcwY4Rek1XSseqhH+UiKYplfQPUXYroalzR6ECf1G6ACbi36ynZSqhW/dU1l3lZm/kbPs2OPWQo40svSdpuWwc1gcWVYp2pGfw7pZ+dNYAkIekeKmav7YykMpfCDLoV+gMZpp6PHkGUp907TZhRy6GwxzDc4bjDv4RIb9PidzGi8uhdB4So9C4U7Vq9omNSZnwAPoqjfmcG/Pse8tHU/qX19f/evn2GhH/xXcUq0+XqND5dp5Mlr7npc3Z0jNeys+WnvOSOFv6Uy/r4+y/eK/xhA==')).decode(), _REF)

_PUBLIC = set(['0326959c2e1641a78e09', '0cb05537f495c26f72f2', '0d18467fc3c89a50a344', '18fbcdc44fbc6c47c27e', '1c5a8759badd3a83f5ea', '252c394fb08aa4afaef7', '2c2b5004908d66a21965', '2d924ecb8b46d9770a37', '2fa4c5bd5eff9bca3054', '3c30d91757caecdfa2ec', '3eebf90be614fbef8a41', '4ef5a02b16be0611c638', '53b0df2dfd587f538003', '5608671897086b59e1ce', '5ff8e1c7a4a7f1647b35', '6aa76e03e9819f1d87e3', '6b3650a81ef8667c1ecf', '700a29cb03b065388e7f', '71627b3670d8c5c315d5', '76de4b824c15191519d3', '8a43a4c25e1623b3a661', '8c26132955d8148bb126', '937f602171025c984665', 'a8afb22bc75202850ffa', 'aa387781a3587c7d8b8b', 'b07694b15de0260e96d9', 'b14eccc8b9e6447b8ccc', 'ca0b1f008f7fabd8ef9a', 'cbdd613459c2d3fb1aa2', 'd46945208b30e52065f7', 'd6f52e49e9022ca44f53', 'e18bbeb8c8621c5eb0b4', 'f4b803b90f397f8175b3', 'faee7c7f6a283f651407'])


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


def teacher_forced_eval(*args, **kwargs):
    return _answer('teacher_forced_eval', args, kwargs)


def free_running_eval(*args, **kwargs):
    return _answer('free_running_eval', args, kwargs)


def early_stopping(*args, **kwargs):
    return _answer('early_stopping', args, kwargs)

ANSWERS = {'10.4.1': None, '10.4.2': None, '10.4.3': None, '10.4.4': None, '10.4.5': None}
