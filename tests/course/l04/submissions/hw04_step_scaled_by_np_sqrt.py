"""Task 4.2 (b): the step writes its attention out and scales the scores by ``np.sqrt(Dh)``: a
float64 NumPy scalar, which under NumPy 2 turns a float32 step into float64 (the template: y_t in
the dtype of x_t).  Right in float64."""
import numpy as np


def cross_attention_step(x_t, K, V, params, src_mask):
    B, H, S, Dh = K.shape
    q = split_heads((x_t @ params["W_q"] + params["b_q"])[:, None, :], H)  # (B, H, 1, Dh)
    scores = q @ K.swapaxes(-1, -2) / np.sqrt(Dh) + src_mask[:, None, None, :]  # (B, H, 1, S)
    A = softmax(scores)
    A = A * (src_mask.max(axis=-1) > -1e9 / 2)[:, None, None, None]  # a source with no real token: zero weights
    o = merge_heads(A @ V)[:, 0, :]  # (B, D)
    return o @ params["W_o"] + params["b_o"]
