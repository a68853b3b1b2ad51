"""Task 4.2 (a): the keys and values projected by hand, split into heads by minitf's
split_heads (a decoding step's helper)."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def encoder_keys_values(H_enc, params, H):
    split = _lib("attention").split_heads
    return split(H_enc @ params["W_k"] + params["b_k"], H), split(H_enc @ params["W_v"] + params["b_v"], H)
