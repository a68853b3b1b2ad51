"""Task 6.2: learned positions counted as one table for the whole model: the source and
the target sides each have their own (src_pos, tgt_pos)."""


def parameter_count(config):
    c = config
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(c)
    attention, ff, norm = _attention_parameters(D), _feed_forward_parameters(D, F), _layer_norm_parameters(D)
    out = {
        "src_embed": V_src * D,
        "tgt_embed": 0 if c["share_embeddings"] else V_tgt * D,
        "positions": c["max_len"] * D if c["positional"] == "learned" else 0,  # the mistake: one table
        "encoder_layers": L_enc * (attention + ff + 2 * norm),
        "encoder_norm": norm,
        "decoder_layers": L_dec * (2 * attention + ff + 3 * norm),
        "decoder_norm": norm,
        "W_U": 0 if c["tie_output"] else D * V_tgt,
    }
    out["total"] = sum(out.values())
    return out
