"""Task 6.4: a tied head counted as free, "its weights are the embedding's": tying shares
the matrix, the product H_dec @ W_E^T is still made."""


def forward_flops(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    encoder = L_enc * (_attention_flops(B, S, S, D, H) + _feed_forward_flops(B, S, D, F))
    decoder = L_dec * (_attention_flops(B, T, T, D, H) + _attention_flops(B, T, S, D, H)
                       + _feed_forward_flops(B, T, D, F))
    head = 0 if config["tie_output"] else _matmul(B * T, D, V_tgt)  # the mistake
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
