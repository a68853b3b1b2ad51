"""All of hw04: every function answers zeros of the right type, shape and dtype (False for a
boolean array, 0 for a number, the same keys for a dict): the answer a student could shape from
the messages alone (the concept check left unanswered: it is not what this attacks).  (The shapes come from the reference,
embedded: a stand-in for shapes read off the messages.)"""
import numpy as np

import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNrNWV1v20YWfdevuFAeIjUUHTvZh1XgwmodwK2zNlx5nRpBlh6RI4kVRcocSrKy6H/fc+/wW3a26TbBBoElDmfu3M8zZ6663e5ZstTbJF3QaxoM6Mc0MWagskzHWZjEQ/otCeMwnlE215RtEzKZ8hfGJfpFT3WqY1+TSaI1T3Y7nZ9ik6VrP0tSWqpMp6GKhhQnGa1UmlEyFTEhJqko0gFG/YWaaYdivdEpzVUcYDTjXdYBNOB93ip/3pmuY5+3oGkSRcnWWHX0chVhl+eG/CTOUuVnb+SFnyyXvJpm4UbLSABVNkqUJPrxJ5qlKtAsJTSdaRhpws6kH1bax6rpOoqgfrow1Lu7W8L+bGpX0Hz7kt2UlrYPBmFlcqZNZg6qgbu7vtu5nrN0s9WpYcusfli6ysifa39By7XJSM1SrWkbZnO6u1vonfubSeK7O7h0PFcrbYb0A01U5s8dGsPh6xR7RzqeZRi4pkylM52VA6cUeMsk0JFDZzTXKjAYm9MxXhzQmdvpdrudaZosyfOm62ydas+jcLlKECIVI1riKNPp5GOI5Lx8iNfL1Y6UoXjV6XQCPSWzisLMk216D9ixP+wQ/mGT3g9QDlv3afA98cOZfZ73h+IHWUMmhGMnO/upogTJdurQMtnYVMDEMKVkG5N6CI3LurP4XDSMenANu0hGUw1zYgylWgZzDc545gFs77tIk9isEqN7Lx06cujQoVd9omdUmzrfVzi3danh6MLWpqHl1GKtWD7MMx7pbTQXQM1bdVuK1U/Z86jabSvpO9n/KWNEoSJoyTRbqofep8oIpH/vEw0Q7gf61EemmPWSWoMJlylbFClOWgRkyIgwiXRpjIYJ8cotFn5yeRueeTyA0gutV0G4NMfX6Vr3+3UjNbbULjZ9ajZU/8dofO7djN798y12GRzqv7Ox27nKyKS+t1RmQfMkQlIphpwgYOTq2Qp2+a1xKwmFKzxBu6B35dC5QzdOKapyzVUzGTBRAOOmGB7nw6USPD62jrdJ3lo/qg2M+0AJ2YmhwviKkTFIssEqTQLgCJVozPnzThsgAx1ZrOBQ5GhQmFvNeSXJJ5JFqdBQEmtKky2tEEb9oICfAN9JmqjA54CW4bVKs438dL8GfGoG44uEfLU2KhKJbuEf+ZTkvbLJ+2Fw+FEGjZ8gSfkFndC5a7ZqpR606XF0B0ecZYwurrlPs14td6tiOimeT+elS2uua26Sf3lRBuLD0IHOsS7+Dj8WOxzK/zEKlB0Hj5+/vR3TJEr8hQ4cnDNwELyxE+N3ss2Id8jrxu7U0hfqaZxW4uEeu1rW9rmQBPsPKwePkds7I2Lnynh5DI9LxetV06fvqZb4Bwi+3baPCBVhtPkQJ6gmRCeXlyULHbuuW6o/AkRU+7W9w38/ukiEHTBl5Ab8KSZCBM4XQ590mtBWh7N5hiOFz3VVeMSalidhvaxHCOENZ3zbVSfN6nkMcp/R8df4B7nXXBCv3UPmPHl6kxyJli34OD1TR2IkVbBR0bo+A2c/z/hqCjIu+UzFvLL4PaTkVqVB71fv3qFfvcXGYVallkZ8tg9ahYlDTL6vDgC71iJUeTbf1t8/Dk5Xf9pL9gxM4mhH4GtIy+0c7KnEpopV4njVmcuZCqi6pgdUCQMVg9EbPB/jGS8U+FMY+2ALYFEFdVRIt/t1mGomfk1cWmGhdZS1g6usRlnYOSe0+tB97913PwI78HXCX5nK7ONRzXLiA0Vknu/JhIdzoYtK6GJP6LgSmjur4Ioi9+YzcjeV3M0Tci28WP7H1f/0Sbdnp7OPsreQUOc/8rdfqJNU6vDXioOcSqWf1mmgJSI1jLiFft+i3I+43NvpitvCap3hBGBWLgkXqd1Xru082B7r4lk9emceRms1vVfJR9RTOK9kXrN+OZptLlJaUxwQbLJYlhf0hcaJgfeBXiEpmBvUk3uYH3/yyLzCZHqFeK2N3Jv0sllk7QqwSp7k1tTqIH/eK4Zx655Qy+Cb/yp705L92YLIc459ljPANtKyqb0HLyvKpAjJkxiLyEwQGSyR/awhu/LJEd5VoAZYfChsTs0U3xXtlRC8gUkI9svDc8l4ya9ivbVEgsEPnPA3XFJ1YG+67VxWFletuOfM2N4jyMmaD2pL3Co6aGVm9fjjRJ9zrCdYEGZGR1MYncg1mTdnXlPe4uWWnJ9JzVw4Q7zOcx6Y08D7VgjZu40I3rciiOd+RU+GjXAetlLlcA/svBrY3X8O7GpLk0fhjXV42eKN1eZ8v9u/xDp8PQ5tNeUOqide0jA8aRleA8/Tb0KBXjEmsqrc4QhRAXhIk/Vsbsui6gV9VUD0wJE95FfzWg3eiQPeujt28ss0X0uFbFqAiuB/zlkmywBImoTwfmFLv7yW7nUG+AbyUN1W+tXN82V5M7RU12Np3NoIdpVuD2S1O/XCuM+vymdUm2gcvMexh7flGK72/7rGTIdNWPKBI8wFZcSGf4Gm18igYNd4j8dqgiSQ3fpCTt+LQocnAG8C9iXcMrhlevhF/BK3zKBGH8Xy0BeYCFrEM2gxz+J+ad1cBs3UrsN5/TjwSnFOO7wmpnUcMKpGYSyFJ58oulRLq+WzFPBZvTQtDNteA+eRdBP4feEUALAO/gru+FdQxf8/Wnj5OC2sE8DH2wN5KPIwDIVfXsIMYCIsABLKhIDlI8Eqmon0/4PsMmBRx80yvkQa3uYVIquwKVflrb3PBrd4uLSrJ3Z1iUzVuly8hf5mLILLp2NfM7ZYKrdjK41DkYvE2H6r5E+1RgLOldG+sJNiq0ZyXNeEXrdv5eNHDXmsKVJ2OZievKGflZ8AlWPggpr1RpCJVSP4mfkEShcfxaXvJaks3yFvywjD6TFSMGNCdSaRbWFtc2JjWxl9ISpB3gASSUxu9bDsi0kDIyc4Fh2Csm/EbZEeAjCQv9/RqP+5PuRe16ftk1rT6xxmHlDZ3nphqRf+9dg/RVuOr7T8owgOrJZmxbdWn8zOuqpNOAGyfHGHRaScV1Iey5Or/zlFStTM8RJgKQV+L43U6p2AGFBQXi76ToVz1cuNvNwUDliims/5z82yBUPBFQQ0Bs7bAzdNlHKqk6n21W7Eih/zfjW4b+HQkBM04N8pareoYjW0P2ZNa0iP5S9E7wq4K4ljK1EWTnVQcf3Rxak8WL5f5wv/lgc59Vjd7lC0duRpsbGPONNrs97LrAY6ygqY2ed1E/u+wj8eb6xf7K9n2gBDcwGLpgAZh4kvab3ihih4ZszFOSy7iOEslnTG0sZOmyd2uil22jR3ummrmrAH8GFnyxM+7JzfvwXPlp9XG7/8fbU9Rxfj929/GSPlbFJ0sbt7CJO7flf8Hzfa+MP6zwhAo0XMWQwuxVe8N7Zx1/yRoZJ6xFInVmqtYQD8l1Y6d6MD+2utUUtNeY9Dfr1NVsVVsuimllJfsVRlpUpvQ1qK9t7/dF/Dse2JgH/8sbrwRb6S+pqlBlaq+mNN+sLs/MpuKmF/qxkevDsIrHKhqa4o01wJccRzXBHnuJ13fu/8BzRY8bk=')).decode(), _REF)


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


def cross_attention_forward(*args, **kwargs):
    return _zero(_REF['cross_attention_forward'](*args, **kwargs))


def encoder_keys_values(*args, **kwargs):
    return _zero(_REF['encoder_keys_values'](*args, **kwargs))


def cross_attention_step(*args, **kwargs):
    return _zero(_REF['cross_attention_step'](*args, **kwargs))


def cross_attention_backward(*args, **kwargs):
    return _zero(_REF['cross_attention_backward'](*args, **kwargs))

ANSWERS = {'4.4.1': None, '4.4.2': None, '4.4.3': None, '4.4.4': None, '4.4.5': None}
