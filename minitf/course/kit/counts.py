"""Counting an encoder-decoder by formula: its parameters part by part, the FLOPs of its
forward and backward passes, and a random batch of a given shape to measure them on.
Lesson 6 derives and checks them (sections 2 and 3); Lesson 7 prices its objectives with
them and Appendix B counts every architecture with them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...checks import check_instance, check_int
from ...config import ModelConfig
from ...data import SPECIAL_TOKENS, Batch, make_batch

__all__ = ["PARAMETER_PARTS", "block_parameter_formula", "parameter_formula", "FlopTerm", "flop_terms",
           "forward_flops", "backward_flops", "random_batch"]


PARAMETER_PARTS = ("source embedding", "target embedding", "positions", "encoder blocks", "encoder final norm",
                   "decoder blocks", "decoder final norm", "output head")


def block_parameter_formula(config: ModelConfig) -> dict:
    """Parameters of one block, per sub-layer, and the block's total:

    * attention (each): W_q, W_k, W_v, W_o (D x D) and their biases (D): 4 D^2 + 4 D;
    * feed-forward: W_1 (D x F) + b_1 (F) + W_2 (F x D) + b_2 (D): 2 D F + F + D;
    * LayerNorm (each): gamma and beta (D): 2 D.

    -> ``{"encoder block": {...}, "decoder block": {...}}``; each maps a sub-layer to its
    count and ``"total"`` to the sum: 4 D^2 + 2 D F + 9 D + F for an encoder block (one
    attention, two norms), 8 D^2 + 2 D F + 15 D + F for a decoder block (two, three)."""
    check_instance("config", config, ModelConfig)
    D, F = config.d_model, config.d_ff
    attention, ff, norm = 4 * D * D + 4 * D, 2 * D * F + F + D, 2 * D
    enc = {"self-attention": attention, "feed-forward": ff, "2 LayerNorms": 2 * norm}
    dec = {"self-attention": attention, "cross-attention": attention, "feed-forward": ff, "3 LayerNorms": 3 * norm}
    for block in (enc, dec):
        block["total"] = sum(block.values())
    return {"encoder block": enc, "decoder block": dec}


def parameter_formula(config: ModelConfig) -> dict:
    """Parameters per part (:data:`PARAMETER_PARTS`), from the config alone:

    ====================  ============================================================
    source embedding      V_src D
    target embedding      V_tgt D, or 0 when shared with the source's
    positions             2 max_len D if learned (one table per side), else 0
    encoder blocks        L_enc (4 D^2 + 2 D F + 9 D + F)
    encoder final norm    2 D
    decoder blocks        L_dec (8 D^2 + 2 D F + 15 D + F)
    decoder final norm    2 D
    output head           D V_tgt (W_U, no bias), or 0 when tied to the target embedding
    ====================  ============================================================

    plus ``"total"``, which must equal ``EncoderDecoder(config).num_parameters()``."""
    check_instance("config", config, ModelConfig)
    c, D = config, config.d_model
    blocks = block_parameter_formula(c)
    out = {"source embedding": c.src_vocab_size * D,
           "target embedding": 0 if c.share_embeddings else c.tgt_vocab_size * D,
           "positions": 2 * c.max_len * D if c.positional == "learned" else 0,
           "encoder blocks": c.n_encoder_layers * blocks["encoder block"]["total"],
           "encoder final norm": 2 * D,
           "decoder blocks": c.n_decoder_layers * blocks["decoder block"]["total"],
           "decoder final norm": 2 * D,
           "output head": 0 if c.tie_output else D * c.tgt_vocab_size}
    out["total"] = sum(out.values())
    return out


class FlopTerm(NamedTuple):
    """One kind of matrix product in the forward pass."""

    part: str  # "encoder", "decoder" or "head"
    sublayer: str  # "self-attention", "cross-attention", "feed-forward", "output head"
    what: str  # the products, in the code's own terms
    formula: str  # FLOPs of one block (or of the head), in letters
    per_block: int  # that number
    blocks: int  # how many blocks make it (1 for the head)

    @property
    def flops(self) -> int:
        return self.per_block * self.blocks


def flop_terms(config: ModelConfig, B: int, S: int, T: int) -> list:
    """The forward pass's matrix products, grouped as the code makes them (2 FLOPs per
    multiply-add).  Per encoder block (length S):

    * Q, K, V, O projections, four (B S x D) @ (D x D):       8 B S D^2
    * scores Q K^T and weighted sum A V, per head
      (S x Dh) @ (Dh x S) and (S x S) @ (S x Dh), H heads:      4 B S^2 D
    * feed-forward, (B S x D) @ (D x F) and (B S x F) @ (F x D): 4 B S D F

    Per decoder block: the same with T for S in its self-attention and feed-forward, and a
    cross-attention whose queries and output projection see T rows (4 B T D^2), whose keys
    and values see S rows (4 B S D^2), and whose weight matrices are T x S (4 B T S D).
    The output head: (B T x D) @ (D x V), 2 B T D V.  The embeddings are lookups: no
    products."""
    check_instance("config", config, ModelConfig)
    B, S, T = (check_int(n, v, low=1) for n, v in (("B", B), ("S", S), ("T", T)))
    c, D, F, V = config, config.d_model, config.d_ff, config.tgt_vocab_size
    Le, Ld = c.n_encoder_layers, c.n_decoder_layers
    return [
        FlopTerm("encoder", "self-attention", "Q, K, V, O projections", "8 B S D^2", 8 * B * S * D * D, Le),
        FlopTerm("encoder", "self-attention", "Q K^T and A V", "4 B S^2 D", 4 * B * S * S * D, Le),
        FlopTerm("encoder", "feed-forward", "x W_1 and h W_2", "4 B S D F", 4 * B * S * D * F, Le),
        FlopTerm("decoder", "self-attention", "Q, K, V, O projections", "8 B T D^2", 8 * B * T * D * D, Ld),
        FlopTerm("decoder", "self-attention", "Q K^T and A V (T x T)", "4 B T^2 D", 4 * B * T * T * D, Ld),
        FlopTerm("decoder", "cross-attention", "Q, O projections (T rows)", "4 B T D^2", 4 * B * T * D * D, Ld),
        FlopTerm("decoder", "cross-attention", "K, V projections of H_enc (S rows)", "4 B S D^2",
                 4 * B * S * D * D, Ld),
        FlopTerm("decoder", "cross-attention", "Q K^T and A V (T x S)", "4 B T S D", 4 * B * T * S * D, Ld),
        FlopTerm("decoder", "feed-forward", "x W_1 and h W_2", "4 B T D F", 4 * B * T * D * F, Ld),
        FlopTerm("head", "output head", "H_dec W_U", "2 B T D V", 2 * B * T * D * V, 1),
    ]


def forward_flops(config: ModelConfig, B: int, S: int, T: int) -> dict:
    """Forward FLOPs per part (``"encoder"``, ``"decoder"``, ``"head"``) and ``"total"``:
    :func:`flop_terms` summed."""
    out = {"encoder": 0, "decoder": 0, "head": 0}
    for term in flop_terms(config, B, S, T):
        out[term.part] += term.flops
    out["total"] = sum(out.values())
    return out


def backward_flops(config: ModelConfig, B: int, S: int, T: int) -> dict:
    """Backward FLOPs per part: exactly twice the forward's.  Every forward product has two
    backward products of the same size: ``y = x @ W`` gives ``dx = dy @ W^T`` and
    ``dW = x^T @ dy`` (:func:`minitf.layers.linear.affine_backward`); ``scores = Q @ K^T``
    gives ``dQ`` and ``dK``, ``out = A @ V`` gives ``dA`` and ``dV``
    (:func:`minitf.attention.scaled_dot_product_attention_backward`).  minitf computes every
    one of them, the first block's dx included (it feeds the embedding's gradient)."""
    return {k: 2 * v for k, v in forward_flops(config, B, S, T).items()}


def random_batch(config: ModelConfig, B: int, S: int, T: int, seed: int = 0) -> Batch:
    """B random pairs of S source and T - 1 target tokens (plus ``<eos>``: T decoder
    positions), ordinary tokens only, so nothing is padded."""
    B, S, T = (check_int(n, v, low=1) for n, v in (("B", B), ("S", S), ("T", T)))
    rng = np.random.default_rng(seed)
    n_special = len(SPECIAL_TOKENS)
    src = rng.integers(n_special, config.src_vocab_size, size=(B, S))
    tgt = rng.integers(n_special, config.tgt_vocab_size, size=(B, T - 1))
    tgt = np.concatenate([tgt, np.full((B, 1), config.eos_id)], axis=1)
    return make_batch(src.tolist(), tgt.tolist(), pad_id=config.pad_id, start_id=config.bos_id)
