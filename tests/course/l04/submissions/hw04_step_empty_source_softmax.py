"""Task 4.2 (b): the decoding step takes the softmax over the cached keys with the padding mask,
but forgets the forward's special case: a source with no real token gets a softmax over nothing
but padding (uniform weights) instead of all-zero weights, so its y_t is not b_o.  The student
copied the two lines of the attention into the step and left the empty-source line behind (the
step "only sees sources that were encoded")."""
import math


def cross_attention_step(x_t, K, V, params, src_mask):
    B, H, S, Dh = K.shape
    q = split_heads((x_t @ params["W_q"] + params["b_q"])[:, None, :], H)  # (B, H, 1, Dh)
    A = softmax(q @ K.swapaxes(-1, -2) / math.sqrt(Dh) + src_mask[:, None, None, :])  # (B, H, 1, S)
    o = merge_heads(A @ V)[:, 0, :]  # (B, D)
    return o @ params["W_o"] + params["b_o"]
