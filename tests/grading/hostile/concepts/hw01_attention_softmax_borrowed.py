"""Task 1.5 (a): the additive scores written out, the softmax over them taken from minitf's
attention (masked_softmax: the attention core's own, zero on a fully masked row) by a computed
name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def additive_attention_forward(s, H_enc, params, mask):
    u = np.tanh((s @ params["W_a"])[:, None, :] + H_enc @ params["U_a"])  # (B, S, A)
    a = _lib("attention").masked_softmax(u @ params["v"] + mask, mask)  # (B, S), zero on a fully masked row
    return (a[:, None, :] @ H_enc)[:, 0], a
