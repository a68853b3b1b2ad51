"""Task 3.2: fully masked rows are zeroed only when the mask is 4-D, (B, 1, ., S): the student
reasons that only a padding mask can block a whole row, and that a (T, S) mask is the causal
one, whose every row sees key 0.  But a (T, S) mask is any mask shared by the batch -- causal
plus the padding of a single left-padded sequence, say -- and its fully masked rows then get
the softmax's average over keys they must not see."""
import math

import numpy as np

MASK_VALUE = -1e9


def masked_attention_forward(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    if mask is not None:
        scores = scores + mask
    A = softmax(scores)
    if mask is not None and mask.ndim == 4:  # only a padding mask has fully masked rows?
        A = A * (mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2)
    return A @ V, A
