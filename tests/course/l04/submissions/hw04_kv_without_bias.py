"""Task 4.2: the cached keys and values leave out the biases b_k and b_v."""


def encoder_keys_values(H_enc, params, H):
    K = split_heads(H_enc @ params["W_k"], H)  # (B, H, S, Dh), b_k forgotten
    V = split_heads(H_enc @ params["W_v"], H)  # b_v forgotten
    return K, V
