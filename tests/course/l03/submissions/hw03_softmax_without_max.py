"""Task 3.2: the softmax skips the subtraction of the row maximum (exp(scores) / sum exp(scores)),
and a fully masked row, whose exps are all 0, is caught by dividing only where the sum is
positive.  The student reasons that the mask's -1e9 already keeps exp from overflowing; on the
small random scores of a quick check it is right to 1e-16, but a score of a few hundred (sharp
attention, large activations) overflows exp to inf, and inf / inf is nan."""
import math

import numpy as np


def masked_attention_forward(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    if mask is not None:
        scores = scores + mask
    e = np.exp(scores)  # no max subtracted: exp(-1e9) = 0 at blocked keys, but exp(800) = inf
    total = e.sum(axis=-1, keepdims=True)
    A = np.divide(e, total, out=np.zeros_like(e), where=total > 0)  # a fully masked row: all exps 0 -> zeros
    return A @ V, A
