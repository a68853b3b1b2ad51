"""Tasks 3.1, 3.2 and 3.3: calls minitf's own causal_mask and scaled_dot_product_attention (found in
the source: no credit), and reaches its softmax_backward by a computed name, which no source scan
sees (the run-time guard does: no credit)."""
import importlib
import math

import numpy as np

import minitf.attention
from minitf.masks import causal_mask as _minitf_causal_mask


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    return _minitf_causal_mask(T, S, offset, dtype)


def masked_attention_forward(Q, K, V, mask=None):
    out, cache = minitf.attention.scaled_dot_product_attention(Q, K, V, mask)
    return out, cache.A


def masked_attention_backward(dout, Q, K, V, A):
    softmax_backward = getattr(importlib.import_module("minitf.layers." + "softmax"), "softmax_" + "backward")
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dscores = softmax_backward(dout @ V.swapaxes(-1, -2), A)
    return (dscores @ K) * scale, (dscores.swapaxes(-1, -2) @ Q) * scale, A.swapaxes(-1, -2) @ dout
