"""Task 6.1: the logits (and W_U) sized by the source vocabulary: "the vocabulary" taken
from src_vocab_size.  The decoder predicts target tokens: V_tgt."""


def shapes(config, B, S, T):
    D, H, Dh, F, V_src, V_tgt, _, _ = _letters(config)
    return {
        "src_ids": (B, S), "src_mask": (B, 1, 1, S), "src_embed": (B, S, D),
        "enc_self_q": (B, H, S, Dh), "enc_self_scores": (B, H, S, S), "enc_ff_hidden": (B, S, F),
        "enc_out": (B, S, D), "tgt_ids": (B, T), "causal_mask": (T, T), "tgt_embed": (B, T, D),
        "dec_self_scores": (B, H, T, T), "cross_q": (B, H, T, Dh), "cross_k": (B, H, S, Dh),
        "cross_scores": (B, H, T, S), "cross_merged": (B, T, D), "dec_ff_hidden": (B, T, F),
        "dec_out": (B, T, D), "W_U": (D, V_src), "logits": (B, T, V_src),
    }
