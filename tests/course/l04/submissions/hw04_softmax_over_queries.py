"""Task 4.1: the softmax taken over the queries (axis -2), so that each source position's
column sums to 1 instead of each decoder query's row."""
import math



def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    p = params
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1]) + src_mask[:, None, None, :]
    A = softmax(scores.swapaxes(-1, -2)).swapaxes(-1, -2)  # normalised over T, not over S
    A = A * (src_mask.max(axis=-1) > MASK_VALUE / 2)[:, None, None, None]
    return merge_heads(A @ V) @ p["W_o"] + p["b_o"], A
