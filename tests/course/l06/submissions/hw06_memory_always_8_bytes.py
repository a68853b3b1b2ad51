"""Task 6.3: every number counted as 8 bytes ("a float is 8 bytes", true in float64 only):
the activations have the model's dtype, 4 bytes each in float32."""
import numpy as np


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = 8  # the mistake: np.dtype(config["dtype"]).itemsize is 4 in float32
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    H_enc = B * S * D if L_dec else 0
    decoder = (ID_BYTES * B * T
               + q * L_dec * (_self_attention_numbers(B, T, D, H) + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * (H_enc + final_norm_T))
    head = q * B * T * D
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
