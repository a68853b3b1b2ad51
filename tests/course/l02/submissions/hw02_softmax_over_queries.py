"""Task 2.2: the softmax over the queries (axis -2) instead of the keys: each key's column
sums to 1, not each query's row."""
import math

import numpy as np


def attention_forward(Q, K, V):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))
    A = e / e.sum(axis=-2, keepdims=True)  # normalised over T
    return A @ V, A
