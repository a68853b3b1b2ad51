"""Task 3.2: a fully masked row is found from the sum of its mask entries: "every one of the S
entries is MASK_VALUE, so the row adds up to S * MASK_VALUE or less" (<=, since the docstring
warns that two masks added hold -2e9).  On a left-padded batch it is right: the live rows hold
-1e9 only.  But a causal mask added to a right-padded key mask doubles the blocked future keys
of the real queries to -2e9, and a real query near the start of a short row, with one key
open, then adds up below S * MASK_VALUE: its weights are zeroed although it has a key to see."""
import math

import numpy as np

MASK_VALUE = -1e9


def masked_attention_forward(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    if mask is not None:
        scores = scores + mask
    A = softmax(scores)
    if mask is not None:
        S = K.shape[2]
        row_dead = mask.sum(axis=-1, keepdims=True) <= S * MASK_VALUE  # "all S entries blocked"
        A = A * ~row_dead
    return A @ V, A
