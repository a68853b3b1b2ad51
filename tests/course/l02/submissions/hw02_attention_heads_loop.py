"""Task 2.2: right values, but a Python loop over the heads in attention_forward ("each head
is its own attention, so attend head by head"), where every head goes at once through the
batched matrix product."""
import math

import numpy as np


def attention_forward(Q, K, V):
    H = Q.shape[1]
    outs, weights = [], []
    for h in range(H):
        scores = Q[:, h] @ K[:, h].swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, T, S)
        A_h = softmax(scores)
        outs.append(A_h @ V[:, h])
        weights.append(A_h)
    return np.stack(outs, axis=1), np.stack(weights, axis=1)
