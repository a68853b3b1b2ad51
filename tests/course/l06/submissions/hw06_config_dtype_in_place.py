"""Task 6.3: the config's dtype turned into a NumPy dtype in place, config["dtype"] =
np.dtype(config["dtype"]), to read its itemsize: the count is right, but the caller's
config now holds an np.dtype where it held the string "float32" (np.dtype("float32") ==
"float32" is True, so an equality check does not see it; json.dumps(config) fails)."""
import numpy as np


def activation_bytes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    config["dtype"] = np.dtype(config["dtype"])  # the mistake: writes into the caller's dict
    q = config["dtype"].itemsize
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
