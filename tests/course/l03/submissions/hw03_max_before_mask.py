"""Task 3.2: the softmax is made stable with the maximum of the scores BEFORE the mask is added
(scores - scores.max() first, the mask after), and a fully masked row's 0 / 0 is cleared with
np.where.  When a blocked key holds the row's largest score -- a future key that matches the
query far better than the allowed ones -- the allowed keys' exps underflow to 0 and the row
comes out all zero (or nan) although it has keys to attend to."""
import math

import numpy as np

MASK_VALUE = -1e9


def masked_attention_forward(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stabilised over every key, blocked ones included
    if mask is not None:
        scores = scores + mask
    e = np.exp(scores)
    total = e.sum(axis=-1, keepdims=True)
    A = np.where(total > 0, e / np.where(total > 0, total, 1), 0)  # a fully masked row: 0 / 0 -> 0
    return A @ V, A
