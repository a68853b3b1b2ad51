"""The encoder stack and the decoder stack: the one loop over each kind of block, forward
and backward, for every transformer family.

    Encoder:  x -> EncoderBlock_1 .. EncoderBlock_L -> encoder_norm -> H_enc          (B, S, D)
    Decoder:  x -> DecoderBlock_1 .. DecoderBlock_L -> decoder_norm -> H_dec -> W_U   (B, T, V)

The encoder-decoder and the encoder-only model run the encoder stack; the encoder-decoder,
the pointer-generator and the decoder-only model run the decoder stack (the decoder-only
model's blocks have no cross-attention).  The decoder stack that trains is the stack that
decodes: given a KV cache (:mod:`minitf.kv_cache`) its blocks read and write their keys and
values there, one step at a time.  The pointer-generator reads the last block's
cross-attention weights and sends a gradient back into them: the two hooks
``cross_weights`` (forward) and ``dA_cross`` (backward), on the last block only.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..blocks import DecoderBlock, EncoderBlock
from ..config import ModelConfig
from ..layers import Dropout, Embedding, LayerNorm, PositionalEncoding
from ..layers.linear import affine_forward
from ..kv_cache import per_row
from .common import embedding_std, head_weight

__all__ = ["EncoderCache", "DecoderCache", "add_encoder_side", "add_decoder_side", "encoder_forward",
           "encoder_backward", "decoder_forward", "decoder_backward", "last_cross_attention"]


# ---- building the two sides -------------------------------------------------------------------
def add_encoder_side(model, c: ModelConfig, rng: np.random.Generator) -> None:
    """Give ``model`` its source side, in this order (parameter names and the draws from ``rng``
    follow it): ``src_embed``, ``src_pos``, ``src_dropout``, ``encoder_layers``, ``encoder_norm``."""
    D, dt = c.d_model, model.dtype
    model.src_embed = Embedding(c.src_vocab_size, D, c.pad_id, init_std=embedding_std(c), rng=rng, dtype=dt)
    model.src_pos = PositionalEncoding(c.max_len, D, c.positional, rng=rng, dtype=dt)
    model.src_dropout = Dropout(c.dropout, rng=rng, dtype=dt)
    model.encoder_layers = [EncoderBlock(D, c.n_heads, c.d_ff, c.dropout, c.activation, c.norm_first,
                                         c.layer_norm_eps, rng=rng, dtype=dt) for _ in range(c.n_encoder_layers)]
    model.encoder_norm = LayerNorm(D, c.layer_norm_eps, dtype=dt)


def add_decoder_side(model, c: ModelConfig, rng: np.random.Generator, cross_attention: bool,
                     tgt_embed: Embedding | None = None) -> None:
    """Give ``model`` its target side, in this order (parameter names and the draws from
    ``rng`` follow it): ``tgt_embed`` (a new table unless one is passed, to share),
    ``tgt_pos``, ``tgt_dropout``, ``decoder_layers``, ``decoder_norm``, ``W_U`` (unless tied).

    The encoder-decoder's blocks have cross-attention; the decoder-only model's do not.
    """
    D, dt = c.d_model, model.dtype
    model.tgt_embed = tgt_embed if tgt_embed is not None else \
        Embedding(c.tgt_vocab_size, D, c.pad_id, init_std=embedding_std(c), rng=rng, dtype=dt)
    model.tgt_pos = PositionalEncoding(c.max_len, D, c.positional, rng=rng, dtype=dt)
    model.tgt_dropout = Dropout(c.dropout, rng=rng, dtype=dt)
    model.decoder_layers = [
        DecoderBlock(D, c.n_heads, c.d_ff, c.dropout, c.activation, c.norm_first, c.layer_norm_eps,
                     cross_attention=cross_attention, rng=rng, dtype=dt)
        for _ in range(c.n_decoder_layers)]
    model.decoder_norm = LayerNorm(D, c.layer_norm_eps, dtype=dt)
    if not c.tie_output:
        model.add_param("W_U", rng.uniform(-1, 1, size=(D, c.tgt_vocab_size)) / math.sqrt(D))


# ---- the encoder stack ----------------------------------------------------------------------
class EncoderCache(NamedTuple):
    input: Any  # InputCache of the source embedding
    layers: list  # one EncoderBlockCache per block
    norm: Any  # the final LayerNorm's cache


def encoder_forward(model, x: np.ndarray, c_in, src_mask: np.ndarray):
    """x (B, S, D) the embedded source, src_mask (B, 1, 1, S) -> H_enc (B, S, D), EncoderCache."""
    layer_caches = []
    for layer in model.encoder_layers:
        x, c_l = layer.forward(x, src_mask)  # (B, S, D)
        layer_caches.append(c_l)
    H_enc, c_norm = model.encoder_norm.forward(x)  # (B, S, D)
    return H_enc, EncoderCache(c_in, layer_caches, c_norm)


def encoder_backward(model, dH_enc: np.ndarray, cache: EncoderCache) -> np.ndarray:
    """dH_enc (B, S, D) -> dx (B, S, D), the gradient at the embedded source."""
    # forward: H_enc = encoder_norm(x)
    dx = model.encoder_norm.backward(dH_enc, cache.norm)  # (B, S, D)
    for l in reversed(range(len(model.encoder_layers))):
        dx = model.encoder_layers[l].backward(dx, cache.layers[l])  # (B, S, D)
    return dx


# ---- the decoder stack ----------------------------------------------------------------------
class DecoderCache(NamedTuple):
    """What the decoder stack keeps for its backward (every model family)."""
    input: Any  # InputCache of the target embedding
    layers: list  # one DecoderBlockCache per block
    norm: Any  # the final LayerNorm's cache
    H_dec: np.ndarray  # (B, T, D) the decoder's output, for dW_U = H_dec^T dlogits


def decoder_forward(model, x: np.ndarray, c_in, H_enc: np.ndarray | None, self_mask, src_mask, *,
                    cache=None, cross_weights=None):
    """x (B, T, D) the embedded decoder input -> logits (B, T, V), DecoderCache.

    H_enc (B, S, D) and src_mask (B, 1, 1, S): what every cross-attention reads (None for a
    decoder-only model).  ``cache``: None (every position at once: training, and decoding
    without a cache), or a :class:`~minitf.kv_cache.KVCache` (a decoding step: x holds the N
    rows' newest positions, from ``cache.length`` on).  ``cross_weights``: the last block's
    cross-attention weights hook (the pointer-generator's coverage), or None.
    """
    last = len(model.decoder_layers) - 1
    layer_caches = []
    for l, layer in enumerate(model.decoder_layers):
        kv, t = (None, 0) if cache is None else (cache.layers[l], cache.length)
        x, c_l = layer.forward(x, H_enc, self_mask, src_mask, cross_weights if l == last else None, kv=kv, t=t)
        layer_caches.append(c_l)  # (B, T, D) x
    H_dec, c_norm = model.decoder_norm.forward(x)  # (B, T, D)
    logits = affine_forward(H_dec, head_weight(model), None)  # (B, T, D) @ (D, V) -> (B, T, V)
    return logits, DecoderCache(c_in, layer_caches, c_norm, H_dec)


def decoder_backward(model, dH_dec: np.ndarray, cache: DecoderCache, dH_enc: np.ndarray | None = None, *,
                     dA_cross=None, cross_weights=None):
    """dH_dec (B, T, D) -> (dx (B, T, D) the gradient at the embedded decoder input, the blocks'
    shares of dL/dH_enc (a list, None for a block without cross-attention)).

    Each block's cross-attention read H_enc through its K and V, so each hands back a share
    of dL/dH_enc; the shares are added into ``dH_enc`` (B, S, D), the running sum, as they
    arrive.  ``dA_cross`` (B, H, T, S) and ``cross_weights``: the last block's hooks, as in
    :meth:`DecoderBlock.backward`.
    """
    # forward: H_dec = decoder_norm(x)
    dx = model.decoder_norm.backward(dH_dec, cache.norm)  # (B, T, D)
    last = len(model.decoder_layers) - 1
    shares = [None] * len(model.decoder_layers)
    for l in reversed(range(len(model.decoder_layers))):
        hooks = (dA_cross, cross_weights) if l == last else (None, None)
        dx, shares[l] = model.decoder_layers[l].backward(dx, cache.layers[l], *hooks)  # (B, T, D), (B, S, D)
        if shares[l] is not None:
            dH_enc += shares[l]  # the shares add up
    return dx, shares


def last_cross_attention(cache: DecoderCache, G: int = 1) -> np.ndarray:
    """a (N, T, S): the last decoder block's cross-attention weights, mean over heads -- the
    pointer-generator's copy attention, and what the coverage vector sums.  (A decoding step's
    N = B * G rows are laid out per example in the attention, :func:`~minitf.kv_cache.per_row`.)"""
    return per_row(cache.layers[-1].cross_attn.f.attn.A, G).mean(axis=1)  # (N, H, T, S) -> (N, T, S)
