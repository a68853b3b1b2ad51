"""Task 6.4: the output projection counted V_src wide: the logits range over the target
vocabulary, (B T x D) @ (D x V_tgt)."""


def forward_flops(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    encoder = L_enc * (_attention_flops(B, S, S, D, H) + _feed_forward_flops(B, S, D, F))
    decoder = L_dec * (_attention_flops(B, T, T, D, H) + _attention_flops(B, T, S, D, H)
                       + _feed_forward_flops(B, T, D, F))
    head = _matmul(B * T, D, V_src)  # the mistake: the source vocabulary
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}
