"""Task 4.1: a causal mask in cross-attention, "so that the decoder cannot see the future"
(the source is not the future: Lesson 4, section 2)."""
import math

import numpy as np



def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    p = params
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)
    T, S = Q.shape[2], K.shape[2]
    causal = np.triu(np.full((T, S), MASK_VALUE, dtype=Q.dtype), k=1)  # (T, S): query t must not see s > t
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1]) + src_mask[:, None, None, :] + causal
    A = softmax(scores) * (src_mask.max(axis=-1) > MASK_VALUE / 2)[:, None, None, None]
    return merge_heads(A @ V) @ p["W_o"] + p["b_o"], A
