"""Task 3.2: the mask is applied after the softmax, as a 0/1 factor: the rows no longer sum to 1, and
the future leaks in through the softmax's denominator."""
import math

MASK_VALUE = -1e9


def masked_attention_forward(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, H, T, S)
    A = softmax(scores)
    if mask is not None:
        A = A * (mask > MASK_VALUE / 2)  # keep = 1 where allowed: zero the blocked weights
    return A @ V, A
