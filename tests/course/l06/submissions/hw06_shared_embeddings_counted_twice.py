"""Task 6.2: the target table counted even when shared with the source's: with
share_embeddings there is one table, owned by src_embed."""


def parameter_count(config):
    c = config
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(c)
    attention, ff, norm = _attention_parameters(D), _feed_forward_parameters(D, F), _layer_norm_parameters(D)
    out = {
        "src_embed": V_src * D,
        "tgt_embed": V_tgt * D,  # the mistake: counted even when it is the source's table
        "positions": 2 * c["max_len"] * D if c["positional"] == "learned" else 0,
        "encoder_layers": L_enc * (attention + ff + 2 * norm),
        "encoder_norm": norm,
        "decoder_layers": L_dec * (2 * attention + ff + 3 * norm),
        "decoder_norm": norm,
        "W_U": 0 if c["tie_output"] else D * V_tgt,
    }
    out["total"] = sum(out.values())
    return out
