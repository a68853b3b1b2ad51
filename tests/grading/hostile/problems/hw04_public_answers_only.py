"""All of hw04: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (41 public calls, keyed by a digest of their arguments; the answers for them stand
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
exec(_zlib.decompress(_b64.b64decode('eNrNWV1v20YWfdevuFAeIjUUHTvZh1XgwmodwK2zNlx5nRpBlh6RI4kVRcocSrKy6H/fc+/wW3a26TbBBoElDmfu3M8zZ6663e5ZstTbJF3QaxoM6Mc0MWagskzHWZjEQ/otCeMwnlE215RtEzKZ8hfGJfpFT3WqY1+TSaI1T3Y7nZ9ik6VrP0tSWqpMp6GKhhQnGa1UmlEyFTEhJqko0gFG/YWaaYdivdEpzVUcYDTjXdYBNOB93ip/3pmuY5+3oGkSRcnWWHX0chVhl+eG/CTOUuVnb+SFnyyXvJpm4UbLSABVNkqUJPrxJ5qlKtAsJTSdaRhpws6kH1bax6rpOoqgfrow1Lu7W8L+bGpX0Hz7kt2UlrYPBmFlcqZNZg6qgbu7vtu5nrN0s9WpYcusfli6ysifa39By7XJSM1SrWkbZnO6u1vonfubSeK7O7h0PFcrbYb0A01U5s8dGsPh6xR7RzqeZRi4pkylM52VA6cUeMsk0JFDZzTXKjAYm9MxXhzQmdvpdrudaZosyfOm62ydas+jcLlKECIVI1riKNPp5GOI5Lx8iNfL1Y6UoXjV6XQCPSWzisLMk216D9ixP+wQ/mGT3g9QDlv3afA98cOZfZ73h+IHWUMmhGMnO/upogTJdurQMtnYVMDEMKVkG5N6CI3LurP4XDSMenANu0hGUw1zYgylWgZzDc545gFs77tIk9isEqN7Lx06cujQoVd9omdUmzrfVzi3danh6MLWpqHl1GKtWD7MMx7pbTQXQM1bdVuK1U/Z86jabSvpO9n/KWNEoSJoyTRbqofep8oIpH/vEw0Q7gf61EemmPWSWoMJlylbFClOWgRkyIgwiXRpjIYJ8cotFn5yeRueeTyA0gutV0G4NMfX6Vr3+3UjNbbULjZ9ajZU/8dofO7djN798y12GRzqv7Ox27nKyKS+t1RmQfMkQlIphpwgYOTq2Qp2+a1xKwmFKzxBu6B35dC5QzdOKapyzVUzGTBRAOOmGB7nw6USPD62jrdJ3lo/qg2M+0AJ2YmhwviKkTFIssEqTQLgCJVozPnzThsgAx1ZrOBQ5GhQmFvNeSXJJ5JFqdBQEmtKky2tEEb9oICfAN9JmqjA54CW4bVKs438dL8GfGoG44uEfLU2KhKJbuEf+ZTkvbLJ+2Fw+FEGjZ8gSfkFndC5a7ZqpR606XF0B0ecZYwurrlPs14td6tiOimeT+elS2uua26Sf3lRBuLD0IHOsS7+Dj8WOxzK/zEKlB0Hj5+/vR3TJEr8hQ4cnDNwELyxE+N3ss2Id8jrxu7U0hfqaZxW4uEeu1rW9rmQBPsPKwePkds7I2Lnynh5DI9LxetV06fvqZb4Bwi+3baPCBVhtPkQJ6gmRCeXlyULHbuuW6o/AkRU+7W9w38/ukiEHTBl5Ab8KSZCBM4XQ590mtBWh7N5hiOFz3VVeMSalidhvaxHCOENZ3zbVSfN6nkMcp/R8df4B7nXXBCv3UPmPHl6kxyJli34OD1TR2IkVbBR0bo+A2c/z/hqCjIu+UzFvLL4PaTkVqVB71fv3qFfvcXGYVallkZ8tg9ahYlDTL6vDgC71iJUeTbf1t8/Dk5Xf9pL9gxM4mhH4GtIy+0c7KnEpopV4njVmcuZCqi6pgdUCQMVg9EbPB/jGS8U+FMY+2ALYFEFdVRIt/t1mGomfk1cWmGhdZS1g6usRlnYOSe0+tB97913PwI78HXCX5nK7ONRzXLiA0Vknu/JhIdzoYtK6GJP6LgSmjur4Ioi9+YzcjeV3M0Tci28WP7H1f/0Sbdnp7OPsreQUOc/8rdfqJNU6vDXioOcSqWf1mmgJSI1jLiFft+i3I+43NvpitvCap3hBGBWLgkXqd1Xru082B7r4lk9emceRms1vVfJR9RTOK9kXrN+OZptLlJaUxwQbLJYlhf0hcaJgfeBXiEpmBvUk3uYH3/yyLzCZHqFeK2N3Jv0sllk7QqwSp7k1tTqIH/eK4Zx655Qy+Cb/yp705L92YLIc459ljPANtKyqb0HLyvKpAjJkxiLyEwQGSyR/awhu/LJEd5VoAZYfChsTs0U3xXtlRC8gUkI9svDc8l4ya9ivbVEgsEPnPA3XFJ1YG+67VxWFletuOfM2N4jyMmaD2pL3Co6aGVm9fjjRJ9zrCdYEGZGR1MYncg1mTdnXlPe4uWWnJ9JzVw4Q7zOcx6Y08D7VgjZu40I3rciiOd+RU+GjXAetlLlcA/svBrY3X8O7GpLk0fhjXV42eKN1eZ8v9u/xDp8PQ5tNeUOqide0jA8aRleA8/Tb0KBXjEmsqrc4QhRAXhIk/Vsbsui6gV9VUD0wJE95FfzWg3eiQPeujt28ss0X0uFbFqAiuB/zlkmywBImoTwfmFLv7yW7nUG+AbyUN1W+tXN82V5M7RU12Np3NoIdpVuD2S1O/XCuM+vymdUm2gcvMexh7flGK72/7rGTIdNWPKBI8wFZcSGf4Gm18igYNd4j8dqgiSQ3fpCTt+LQocnAG8C9iXcMrhlevhF/BK3zKBGH8Xy0BeYCFrEM2gxz+J+ad1cBs3UrsN5/TjwSnFOO7wmpnUcMKpGYSyFJ58oulRLq+WzFPBZvTQtDNteA+eRdBP4feEUALAO/gru+FdQxf8/Wnj5OC2sE8DH2wN5KPIwDIVfXsIMYCIsABLKhIDlI8Eqmon0/4PsMmBRx80yvkQa3uYVIquwKVflrb3PBrd4uLSrJ3Z1iUzVuly8hf5mLILLp2NfM7ZYKrdjK41DkYvE2H6r5E+1RgLOldG+sJNiq0ZyXNeEXrdv5eNHDXmsKVJ2OZievKGflZ8AlWPggpr1RpCJVSP4mfkEShcfxaXvJaks3yFvywjD6TFSMGNCdSaRbWFtc2JjWxl9ISpB3gASSUxu9bDsi0kDIyc4Fh2Csm/EbZEeAjCQv9/RqP+5PuRe16ftk1rT6xxmHlDZ3nphqRf+9dg/RVuOr7T8owgOrJZmxbdWn8zOuqpNOAGyfHGHRaScV1Iey5Or/zlFStTM8RJgKQV+L43U6p2AGFBQXi76ToVz1cuNvNwUDliims/5z82yBUPBFQQ0Bs7bAzdNlHKqk6n21W7Eih/zfjW4b+HQkBM04N8pareoYjW0P2ZNa0iP5S9E7wq4K4ljK1EWTnVQcf3Rxak8WL5f5wv/lgc59Vjd7lC0duRpsbGPONNrs97LrAY6ygqY2ed1E/u+wj8eb6xf7K9n2gBDcwGLpgAZh4kvab3ihih4ZszFOSy7iOEslnTG0sZOmyd2uil22jR3ummrmrAH8GFnyxM+7JzfvwXPlp9XG7/8fbU9Rxfj929/GSPlbFJ0sbt7CJO7flf8Hzfa+MP6zwhAo0XMWQwuxVe8N7Zx1/yRoZJ6xFInVmqtYQD8l1Y6d6MD+2utUUtNeY9Dfr1NVsVVsuimllJfsVRlpUpvQ1qK9t7/dF/Dse2JgH/8sbrwRb6S+pqlBlaq+mNN+sLs/MpuKmF/qxkevDsIrHKhqa4o01wJccRzXBHnuJ13fu/8BzRY8bk=')).decode(), _REF)

_PUBLIC = set(['028baa76c3667f15f3e3', '05ba8d84a286ded2751f', '08e4e47786dfe173583d', '08f95a7f882820b11b5e', '0ac7ac65e999ef580e5d', '0c6d1f77fdd4b0996b1b', '15a8a51da8e36606d504', '15d7a10a91c9d08a9e29', '1b2731e445b2b33d914b', '1e7b7040f10c7d92465a', '2b7f7a100e5ee8987eeb', '3b39c7294ac648f50e95', '3dd705e0ee0eb898b8d6', '48b4267378d3fc25d4ed', '4b44bc9afdfe6a29c032', '509a289a752cb63c4e11', '5b9fa8a4547007fa3ff0', '619d241b67c033f9b2a2', '6b50547042425da3c6e4', '6def544c30c69f124317', '6eda61fed2cbbc425ff1', '725859729d886436737b', '7fb69de2d285cdca1b0f', '8c58f389c8dc3b2e7906', '91adad0288fba13be54a', '988616d23e4169305a21', 'a132f32e56f2843fba3c', 'a5156454d8053572b636', 'aae35938ca0ffc65e330', 'b009893994c4532fb70b', 'b7b86b86fe732ea2c6c9', 'bec08d5dac2d4b4edf5d', 'c271099c63918cb5f94b', 'c744e52c4dbc80a1c5d8', 'dcc500920435cef8e0df', 'e050cace879cd99decc8', 'e4cbbe19d2446c0efe72', 'e59e0b95f65a372294f1', 'edd2dc87ab2bd6fbeb11', 'efaae47ecaaa70b69609', 'f7f719c638a58a6251f1'])


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


def cross_attention_forward(*args, **kwargs):
    return _answer('cross_attention_forward', args, kwargs)


def encoder_keys_values(*args, **kwargs):
    return _answer('encoder_keys_values', args, kwargs)


def cross_attention_step(*args, **kwargs):
    return _answer('cross_attention_step', args, kwargs)


def cross_attention_backward(*args, **kwargs):
    return _answer('cross_attention_backward', args, kwargs)

ANSWERS = {'4.4.1': None, '4.4.2': None, '4.4.3': None, '4.4.4': None, '4.4.5': None}
