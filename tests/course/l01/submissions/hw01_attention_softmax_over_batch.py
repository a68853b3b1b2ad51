"""Task 1.5: the softmax over the wrong axis: axis 0 (the batch) of the (B, S) scores, so each
source position's weights sum to 1 over the examples instead of each row's over its positions."""
import numpy as np


def _additive(s, H_enc, params, mask):
    p = params
    u = np.tanh((s @ p["W_a"])[:, None, :] + H_enc @ p["U_a"])  # (B, S, A)
    e = u @ p["v"] + mask  # (B, S)
    e = np.exp(e - e.max(axis=0, keepdims=True))
    a = e / e.sum(axis=0, keepdims=True)  # normalised "over the scores" -- the first axis
    a = a * (mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2)
    context = (a[:, None, :] @ H_enc)[:, 0]
    return context, a, u
