"""Task 4.1: a softmax written as exp(z) / sum exp(z), without subtracting each row's maximum.
The empty source's 0/0 = NaN was "fixed" with np.nan_to_num, which gives it the all-zero weights
the contract asks for, so every ordinary problem is right.  But exp overflows for a score above
~709 (inf / inf = NaN, then zeroed), and a large score is ordinary: a key bias b_k shifts every
score of a query by q . b_k, which the softmax must ignore."""
import math

import numpy as np


def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    p = params
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1]) + src_mask[:, None, None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(scores)
        A = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))  # the empty source: 0/0 -> 0
    return merge_heads(A @ V) @ p["W_o"] + p["b_o"], A
