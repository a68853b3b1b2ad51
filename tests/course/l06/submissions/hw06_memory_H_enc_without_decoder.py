"""Task 6.3: H_enc added to the decoder's bytes whatever the number of decoder blocks ("it is
counted once for the whole decoder", read as "always once"): H_enc is kept as the
cross-attentions' x_kv, so a model with no decoder blocks (n_decoder_layers = 0) has no
cross-attention and keeps no H_enc in the decoder."""
import numpy as np


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = np.dtype(config["dtype"]).itemsize
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    H_enc = B * S * D  # the mistake: counted even when no decoder block reads it (L_dec = 0)
    decoder = (ID_BYTES * B * T
               + q * L_dec * (_self_attention_numbers(B, T, D, H) + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * (H_enc + final_norm_T))
    head = q * B * T * D
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
