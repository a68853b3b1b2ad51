"""Task 6.2: the output matrix counted whether tied or not: with tie_output, W_U is the
target embedding's W_E transposed, one array counted once."""


def parameter_count(config):
    c = config
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(c)
    attention, ff, norm = _attention_parameters(D), _feed_forward_parameters(D, F), _layer_norm_parameters(D)
    out = {
        "src_embed": V_src * D,
        "tgt_embed": 0 if c["share_embeddings"] else V_tgt * D,
        "positions": 2 * c["max_len"] * D if c["positional"] == "learned" else 0,
        "encoder_layers": L_enc * (attention + ff + 2 * norm),
        "encoder_norm": norm,
        "decoder_layers": L_dec * (2 * attention + ff + 3 * norm),
        "decoder_norm": norm,
        "W_U": D * V_tgt,  # the mistake: a D x V matrix, tied or not
    }
    out["total"] = sum(out.values())
    return out
