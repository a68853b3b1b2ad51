"""Task 2.2: attention_forward writes its own softmax inline, exp(scores) / sum exp(scores),
without subtracting each row's maximum ("the scores are scaled by 1/sqrt(Dh), they stay
small"): right for ordinary scores, inf / inf = NaN as soon as a score passes about 709."""
import math

import numpy as np


def attention_forward(Q, K, V):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    e = np.exp(scores)  # no max subtracted: overflows for large scores
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
