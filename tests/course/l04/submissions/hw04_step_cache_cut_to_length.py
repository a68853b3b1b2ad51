"""Task 4.2 (b): the step cuts the cached keys and values down to the real source, K[b, :, :L]
with L = the number of real tokens, instead of adding the mask ("why attend over padding at
all?"), one example at a time.  That takes the FIRST L positions to be the real ones: right when
padding sits at the end, wrong for a source padded at the start or in the middle (src_mask marks
padding wherever it is)."""
import math

import numpy as np


def cross_attention_step(x_t, K, V, params, src_mask):
    B, H, S, Dh = K.shape
    q = split_heads((x_t @ params["W_q"] + params["b_q"])[:, None, :], H)  # (B, H, 1, Dh)
    heads = np.zeros(q.shape, dtype=q.dtype)  # (B, H, 1, Dh): an empty source keeps zeros
    for b in range(B):
        L = int((src_mask[b] > MASK_VALUE / 2).sum())  # the real tokens... taken to come first
        if L == 0:
            continue
        a = softmax(q[b] @ K[b, :, :L].swapaxes(-1, -2) / math.sqrt(Dh))  # (H, 1, L)
        heads[b] = a @ V[b, :, :L]  # (H, 1, Dh)
    o = merge_heads(heads)[:, 0, :]  # (B, D)
    return o @ params["W_o"] + params["b_o"]
