"""Task 6.3: a dropout mask counted for every dropout when config["dropout"] > 0 (the student
saw the config's dropout and that a training forward keeps its masks): the numbers asked for
are the model's in evaluation mode, where dropout does nothing and keeps no mask, whatever
the configured rate."""
import numpy as np


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = np.dtype(config["dtype"]).itemsize
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    H_enc = B * S * D if L_dec else 0
    decoder = (ID_BYTES * B * T
               + q * L_dec * (_self_attention_numbers(B, T, D, H) + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * (H_enc + final_norm_T))
    if config["dropout"] > 0:  # the mistake: masks of a training forward, in evaluation mode
        encoder += q * (B * S * D + L_enc * (2 * B * S * D + B * S * F))  # input, 2 residual branches, FFN hidden
        decoder += q * (B * T * D + L_dec * (3 * B * T * D + B * T * F))  # input, 3 residual branches, FFN hidden
    head = q * B * T * D
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
