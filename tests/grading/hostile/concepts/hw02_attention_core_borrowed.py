"""Task 2.2: the whole attention core from minitf (scaled_dot_product_attention, which every
decoding step calls too), the weights read from its cache."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def attention_forward(Q, K, V):
    out, cache = _lib("attention").scaled_dot_product_attention(Q, K, V)
    return out, cache.A
