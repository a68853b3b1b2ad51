"""Task 6.3: H_enc counted in every decoder block's cross-attention: all the blocks read one
array, which the cache holds once."""


def _cross_attention_numbers(B, T, S, D, H):
    return 4 * B * T * D + B * T + 2 * B * S * D + B * H * T * S + B * S * D  # the mistake: H_enc here too


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = np.dtype(config["dtype"]).itemsize
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    decoder = (ID_BYTES * B * T
               + q * L_dec * (_self_attention_numbers(B, T, D, H) + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * final_norm_T)
    head = q * B * T * D
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
