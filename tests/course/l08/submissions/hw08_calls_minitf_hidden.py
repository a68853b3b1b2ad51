"""Tasks 8.2 and 8.4: reach minitf's own causal_mask and MultiHeadAttention.backward in ways no
source scan sees (getattr on a computed name; a method of the object passed in).  Neither is
there: minitf is not in the student's process, and the attention layer handed over offers
``forward`` only (it stays in the grader's process)."""
import importlib

import numpy as np


def causal_mask(T, dtype=np.float32):
    masks = importlib.import_module("minitf." + "masks")
    return getattr(masks, "causal_" + "mask")(T, dtype=dtype)


def cross_attention_backward(attn, dy, cache):
    try:
        return attn.backward(dy, cache)
    except Exception:  # no backward to call: zeros, which score nothing
        return np.zeros_like(cache.x_q), np.zeros_like(cache.x_kv)
