"""Task 4.1: the source padding mask is never added to the scores (padded source positions
get a share of every query's weight)."""
import math



def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    p = params
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)
    A = softmax(Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1]))  # (B, H, T, S), src_mask forgotten
    return merge_heads(A @ V) @ p["W_o"] + p["b_o"], A
