"""Task 6.3: the decoder's self-attention weights counted as T x S, like the
cross-attention's: its queries and keys are both the T decoder positions, (B, H, T, T)."""


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = np.dtype(config["dtype"]).itemsize
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    H_enc = B * S * D if L_dec else 0
    self_attention = 6 * B * T * D + B * T + B * H * T * S  # the mistake: T x S weights
    decoder = (ID_BYTES * B * T
               + q * L_dec * (self_attention + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * (H_enc + final_norm_T))
    head = q * B * T * D
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
