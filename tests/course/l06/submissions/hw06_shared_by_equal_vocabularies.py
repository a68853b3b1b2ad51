"""Task 6.2: sharing decided by the vocabulary sizes, V_src == V_tgt, instead of the config's
share_embeddings flag (the config's comment says sharing "needs equal V", read backwards):
two vocabularies of the same size still have two tables unless share_embeddings is set."""


def parameter_count(config):
    c = config
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(c)
    attention, ff, norm = _attention_parameters(D), _feed_forward_parameters(D, F), _layer_norm_parameters(D)
    out = {
        "src_embed": V_src * D,
        "tgt_embed": 0 if V_src == V_tgt else V_tgt * D,  # the mistake: not c["share_embeddings"]
        "positions": 2 * c["max_len"] * D if c["positional"] == "learned" else 0,
        "encoder_layers": L_enc * (attention + ff + 2 * norm),
        "encoder_norm": norm,
        "decoder_layers": L_dec * (2 * attention + ff + 3 * norm),
        "decoder_norm": norm,
        "W_U": 0 if c["tie_output"] else D * V_tgt,
    }
    out["total"] = sum(out.values())
    return out
