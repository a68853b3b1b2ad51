"""Task 4.2: K and V split into heads by reshape(B, H, S, Dh) alone, without going through
(B, S, H, Dh) and a transpose (it cuts the positions, not the columns, into heads)."""


def encoder_keys_values(H_enc, params, H):
    B, S, D = H_enc.shape
    K = (H_enc @ params["W_k"] + params["b_k"]).reshape(B, H, S, D // H)
    V = (H_enc @ params["W_v"] + params["b_v"]).reshape(B, H, S, D // H)
    return K, V
