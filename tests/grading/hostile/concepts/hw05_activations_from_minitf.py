"""Task 5.3 (a): the feed-forward network with minitf's activations (relu_forward,
gelu_forward), reached by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def feedforward_forward(x, params, activation):
    act = _lib("layers.activations")
    a = x @ params["W_1"] + params["b_1"]
    h = (act.relu_forward if activation == "relu" else act.gelu_forward)(a)
    h = h[0] if isinstance(h, tuple) else h
    return h @ params["W_2"] + params["b_2"]
