"""Task 1.5: the scores are made with ``v[:, None]`` and squeezed back with ``.squeeze()``: for a
batch of one, or a source of one position, the squeeze takes that axis away too."""
import numpy as np


def _additive(s, H_enc, params, mask):
    p = params
    u = np.tanh((s @ p["W_a"])[:, None, :] + H_enc @ p["U_a"])  # (B, S, A)
    e = (u @ p["v"][:, None]).squeeze()  # (B, S, 1) -> (B, S), or less when B = 1 or S = 1
    a = softmax(e + mask)
    a = a * (mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2)
    context = (a[:, None, :] @ H_enc)[:, 0]
    return context, a, u
