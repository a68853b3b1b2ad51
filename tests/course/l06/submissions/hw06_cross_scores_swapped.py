"""Task 6.1: the cross-attention scores written (B, H, S, T), "source by target" -- the
encoder's positions as rows.  The rows are the T decoder queries, the columns the S
encoder keys: (B, H, T, S)."""


def shapes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, _, _ = _letters(config)
    return {
        "src_ids": (B, S), "src_mask": (B, 1, 1, S), "src_embed": (B, S, D),
        "enc_self_q": (B, H, S, Dh), "enc_self_scores": (B, H, S, S), "enc_ff_hidden": (B, S, F),
        "enc_out": (B, S, D), "tgt_ids": (B, T), "causal_mask": (T, T), "tgt_embed": (B, T, D),
        "dec_self_scores": (B, H, T, T), "cross_q": (B, H, T, Dh), "cross_k": (B, H, S, Dh),
        "cross_scores": (B, H, S, T),  # the mistake: source x target
        "cross_merged": (B, T, D), "dec_ff_hidden": (B, T, F), "dec_out": (B, T, D),
        "W_U": (D, V_tgt), "logits": (B, T, V_tgt),
    }
