"""Task 4.2: the step merges its heads by copying merge_heads' transpose onto a 3-d array:
(B, H, Dh) -> (B, Dh, H) -> (B, D), which interleaves the heads' columns."""
import math



def cross_attention_step(x_t, K, V, params, src_mask):
    B, D = x_t.shape
    H, Dh = K.shape[1], K.shape[3]
    q = (x_t @ params["W_q"] + params["b_q"]).reshape(B, H, 1, Dh)  # (B, H, 1, Dh)
    scores = q @ K.swapaxes(-1, -2) / math.sqrt(Dh) + src_mask[:, None, None, :]  # (B, H, 1, S)
    a = softmax(scores) * (src_mask.max(axis=-1) > MASK_VALUE / 2)[:, None, None, None]
    heads = (a @ V)[:, :, 0, :]  # (B, H, Dh)
    return heads.transpose(0, 2, 1).reshape(B, D) @ params["W_o"] + params["b_o"]  # "like merge_heads"
