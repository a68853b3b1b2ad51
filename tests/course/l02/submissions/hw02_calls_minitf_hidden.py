"""Task 2.3: reaches minitf's own attention backward by a computed name no source scan sees
(importlib and getattr).  The run-time guard catches it: no credit."""
import importlib

import numpy as np


def attention_backward(dout, Q, K, V, A):
    attention = importlib.import_module("minitf." + "attention")
    backward = getattr(attention, "scaled_dot_product_attention_" + "backward")
    cache = attention.AttentionCache(np.asarray(Q), np.asarray(K), np.asarray(V), np.asarray(A))
    g = backward(dout, cache)
    return g.dQ, g.dK, g.dV
