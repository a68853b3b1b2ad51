"""Homework 6 -- The whole encoder-decoder.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw06 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Letters: B batch, S source length, T target length, D d_model, H heads, Dh = D / H, F d_ff,
V_src and V_tgt the vocabularies, L_enc and L_dec the blocks of each stack.
"""
from __future__ import annotations

import numpy as np

SHAPE_NAMES = ("src_ids", "src_mask", "src_embed", "enc_self_q", "enc_self_scores", "enc_ff_hidden", "enc_out",
               "tgt_ids", "causal_mask", "tgt_embed", "dec_self_scores", "cross_q", "cross_k", "cross_scores",
               "cross_merged", "dec_ff_hidden", "dec_out", "W_U", "logits")
PARAMETER_PARTS = ("src_embed", "tgt_embed", "positions", "encoder_layers", "encoder_norm",
                   "decoder_layers", "decoder_norm", "W_U")
ID_BYTES = np.dtype(np.int64).itemsize  # token ids are int64, whatever the model's dtype


def _letters(config):
    """(D, H, Dh, F, V_src, V_tgt, L_enc, L_dec) of ``config``."""
    c = config
    D, H = c["d_model"], c["n_heads"]
    return D, H, D // H, c["d_ff"], c["src_vocab_size"], c["tgt_vocab_size"], c["n_encoder_layers"], \
        c["n_decoder_layers"]


# =====================================================================================
# Task 6.1 -- from source ids to logits: every shape on the way
# =====================================================================================
def shapes(config, B, S, T):
    """Task 6.1: ``{name: shape}``, one teacher-forced forward pass.

    Every array of the encoder has S positions, every array of the decoder T; attention
    arrays carry the heads as their second axis.  The only array with both lengths is the
    cross-attention's: T queries from the decoder against S keys from the encoder.
    """
    D, H, Dh, F, V_src, V_tgt, _, _ = _letters(config)
    return {
        "src_ids": (B, S),
        "src_mask": (B, 1, 1, S),  # one row per example, broadcast over the heads and the queries
        "src_embed": (B, S, D),
        "enc_self_q": (B, H, S, Dh),
        "enc_self_scores": (B, H, S, S),  # every source position against every source position
        "enc_ff_hidden": (B, S, F),
        "enc_out": (B, S, D),  # H_enc
        "tgt_ids": (B, T),
        "causal_mask": (T, T),  # the same for every example and head
        "tgt_embed": (B, T, D),
        "dec_self_scores": (B, H, T, T),
        "cross_q": (B, H, T, Dh),  # queries from the decoder
        "cross_k": (B, H, S, Dh),  # keys from H_enc
        "cross_scores": (B, H, T, S),  # T queries x S keys
        "cross_merged": (B, T, D),
        "dec_ff_hidden": (B, T, F),
        "dec_out": (B, T, D),  # H_dec
        "W_U": (D, V_tgt),  # logits = H_dec @ W_U
        "logits": (B, T, V_tgt),  # the TARGET vocabulary
    }


# =====================================================================================
# Task 6.2 -- counting parameters
# =====================================================================================
def _attention_parameters(D):
    """W_q, W_k, W_v, W_o (D x D) and their biases (D): 4 D^2 + 4 D, whatever H."""
    return 4 * D * D + 4 * D


def _feed_forward_parameters(D, F):
    """W_1 (D x F) + b_1 (F) + W_2 (F x D) + b_2 (D)."""
    return 2 * D * F + F + D


def _layer_norm_parameters(D):
    """gamma and beta (D each)."""
    return 2 * D


def parameter_count(config):
    """Task 6.2: ``{part: count}`` and ``"total"``.

    encoder block: self-attention + feed-forward + 2 LayerNorms = 4 D^2 + 2 D F + 9 D + F;
    decoder block: self- and cross-attention + feed-forward + 3 LayerNorms
    = 8 D^2 + 2 D F + 15 D + F.  Sharing removes the target table (V_tgt D), tying removes
    W_U (D V_tgt): the same array is read twice, counted once.
    """
    c = config
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(c)
    attention, ff, norm = _attention_parameters(D), _feed_forward_parameters(D, F), _layer_norm_parameters(D)
    out = {
        "src_embed": V_src * D,
        "tgt_embed": 0 if c["share_embeddings"] else V_tgt * D,  # shared: the source's table, owned there
        "positions": 2 * c["max_len"] * D if c["positional"] == "learned" else 0,  # one table per side
        "encoder_layers": L_enc * (attention + ff + 2 * norm),
        "encoder_norm": norm,
        "decoder_layers": L_dec * (2 * attention + ff + 3 * norm),  # self- AND cross-attention
        "decoder_norm": norm,
        "W_U": 0 if c["tie_output"] else D * V_tgt,  # tied: W_U is tgt_embed's W_E^T, no array of its own
    }
    out["total"] = sum(out.values())
    return out


# =====================================================================================
# Task 6.3 -- where the memory goes
# =====================================================================================
def _self_attention_numbers(B, L, D, H):
    """Numbers one self-attention sub-layer keeps, length L: LayerNorm x_hat (B L D) and rstd
    (B L), x_q = x_kv (B L D), Q, K, V (3 B L D), A (B H L L), merged heads o (B L D)."""
    return 6 * B * L * D + B * L + B * H * L * L


def _cross_attention_numbers(B, T, S, D, H):
    """Numbers one cross-attention keeps, H_enc aside: LayerNorm (B T D + B T), x_q (B T D),
    Q (B T D), K and V of H_enc (2 B S D), A (B H T S), o (B T D)."""
    return 4 * B * T * D + B * T + 2 * B * S * D + B * H * T * S


def _feed_forward_numbers(B, L, D, F):
    """LayerNorm (B L D + B L), input x (B L D), pre-activation a and h = act(a) (2 B L F)."""
    return 2 * B * L * D + B * L + 2 * B * L * F


def activation_bytes(config, B, S, T):
    """Task 6.3: ``{"encoder", "decoder", "head", "total"}`` in bytes.

    Every term carries B (memory is linear in the batch); the attention weights are the
    only terms quadratic in the lengths: B H S^2 per encoder block, B H T^2 + B H T S per
    decoder block.
    """
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    q = np.dtype(config["dtype"]).itemsize  # 4 bytes in float32, 8 in float64
    final_norm_S, final_norm_T = B * S * D + B * S, B * T * D + B * T
    encoder = (ID_BYTES * B * S
               + q * L_enc * (_self_attention_numbers(B, S, D, H) + _feed_forward_numbers(B, S, D, F))
               + q * final_norm_S)
    H_enc = B * S * D if L_dec else 0  # one array, read by every cross-attention: counted once
    decoder = (ID_BYTES * B * T
               + q * L_dec * (_self_attention_numbers(B, T, D, H) + _cross_attention_numbers(B, T, S, D, H)
                              + _feed_forward_numbers(B, T, D, F))
               + q * (H_enc + final_norm_T))
    head = q * B * T * D  # H_dec, for dW_U
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}


# =====================================================================================
# Task 6.4 -- counting FLOPs
# =====================================================================================
def _matmul(m, k, n):
    """(m x k) @ (k x n): m n entries of k multiply-adds, 2 m k n FLOPs."""
    return 2 * m * k * n


def _attention_flops(B, Lq, Lk, D, H):
    """One attention: queries and output projection over B Lq rows, keys and values over
    B Lk rows, and per head the scores (Lq x Dh) @ (Dh x Lk) and the sum (Lq x Lk) @ (Lk x Dh)."""
    Dh = D // H
    projections = 2 * _matmul(B * Lq, D, D) + 2 * _matmul(B * Lk, D, D)  # W_q, W_o; W_k, W_v
    per_head = _matmul(Lq, Dh, Lk) + _matmul(Lq, Lk, Dh)  # Q K^T, then A V
    return projections + B * H * per_head


def _feed_forward_flops(B, L, D, F):
    return _matmul(B * L, D, F) + _matmul(B * L, F, D)  # x W_1, h W_2


def forward_flops(config, B, S, T):
    """Task 6.4 (a): ``{"encoder", "decoder", "head", "total"}``."""
    D, H, Dh, F, V_src, V_tgt, L_enc, L_dec = _letters(config)
    encoder = L_enc * (_attention_flops(B, S, S, D, H) + _feed_forward_flops(B, S, D, F))
    decoder = L_dec * (_attention_flops(B, T, T, D, H) + _attention_flops(B, T, S, D, H)
                       + _feed_forward_flops(B, T, D, F))
    head = _matmul(B * T, D, V_tgt)  # H_dec @ W_U: made whether W_U is tied or not
    return {"encoder": encoder, "decoder": decoder, "head": head, "total": encoder + decoder + head}


def training_flops(config, B, S, T):
    """Task 6.4 (b): each forward product C = X W has two backward products of its size
    (dX = dC W^T, dW = X^T dC): backward = 2 x forward, a step = 3 x forward."""
    forward = forward_flops(config, B, S, T)["total"]
    return {"forward": forward, "backward": 2 * forward, "total": 3 * forward}


# =====================================================================================
# Task 6.5 -- concept check
# =====================================================================================
ANSWERS = {
    "6.5.1": "c",
    "6.5.2": "b",
    "6.5.3": "b",
    "6.5.4": "c",
    "6.5.5": "a",
    "6.5.6": "d",
}
