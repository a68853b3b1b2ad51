"""Task 1.5: padding not masked: the mask is never added to the scores, so padded source positions
(whose encoder states are whatever the encoder computed there) get a share of the weight."""
import numpy as np


def _additive(s, H_enc, params, mask):
    p = params
    u = np.tanh((s @ p["W_a"])[:, None, :] + H_enc @ p["U_a"])
    e = u @ p["v"]  # (B, S) the scores; the padding "was handled by the encoder"
    a = softmax(e)
    context = (a[:, None, :] @ H_enc)[:, 0]
    return context, a, u
