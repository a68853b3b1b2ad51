"""The encoder-decoder transformer (Vaswani et al., 2017), forward and backward.

    H_enc = Encoder(x)                                  (B, S, D)   once per example
    H_dec = Decoder(decoder_input_ids, H_enc)           (B, T, D)
    logits = H_dec W_U                                  (B, T, V)

The backward is the whole of Lesson 8 section 4, one step at a time: p_hat - y at the
head -> W_U -> each decoder block in reverse, each handing back its cross-attention
share of dL/dH_enc -> those shares summed -> the encoder, in reverse.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..blocks import EncoderBlock
from ..checks import check_shape, check_token_ids
from ..config import ModelConfig
from ..layers import Dropout, Embedding, LayerNorm, PositionalEncoding
from ..masks import causal_mask, key_padding_mask
from ..module import Module
from ..layers.linear import affine_forward
from .common import (DecoderCache, add_decoder_side, cache_nbytes, embedding_std, head_backward, head_weight,
                     input_backward, input_forward)


class EncoderCache(NamedTuple):
    input: Any
    layers: list
    norm: Any


class EncoderDecoderCache(NamedTuple):
    encoder: EncoderCache
    decoder: DecoderCache


class EncoderDecoderGrads(NamedTuple):
    """What ``backward`` hands back besides the parameter gradients (for inspection: Lesson 8, section 4)."""
    dH_dec: np.ndarray  # (B, T, D) dL/dH_dec, the gradient entering the decoder from W_U
    dH_enc: np.ndarray  # (B, S, D) dL/dH_enc, the sum of the shares below
    dH_enc_shares: list  # L_dec arrays (B, S, D): decoder block l's cross-attention share


class EncoderDecoder(Module):
    """An encoder-decoder transformer built from ``ModelConfig``.

    Parameter names (flat view, see ``parameters()``, which lists the model's own ``W_U``
    first, then its sub-modules in this order): ``W_U`` (absent when tied to ``tgt_embed.W_E``),
    ``src_embed.W_E``, ``src_pos.W_pos`` (learned positions only), ``encoder_layers.{l}.*``,
    ``encoder_norm.*``, ``tgt_embed.W_E``, ``tgt_pos.W_pos``, ``decoder_layers.{l}.*``
    (``self_attn``, ``cross_attn``, ``ff.linear1/linear2``, ``norm1..3``), ``decoder_norm.*``.
    """

    def __init__(self, config: ModelConfig):
        c = config
        super().__init__(np.dtype(c.dtype))
        self.config = c
        rng = np.random.default_rng(c.seed)
        D, dt = c.d_model, self.dtype
        # source side
        self.src_embed = Embedding(c.src_vocab_size, D, c.pad_id, init_std=embedding_std(c), rng=rng, dtype=dt)
        self.src_pos = PositionalEncoding(c.max_len, D, c.positional, rng=rng, dtype=dt)
        self.src_dropout = Dropout(c.dropout, rng=rng, dtype=dt)
        self.encoder_layers = [EncoderBlock(D, c.n_heads, c.d_ff, c.dropout, c.activation, c.norm_first,
                                            c.layer_norm_eps, rng=rng, dtype=dt) for _ in range(c.n_encoder_layers)]
        self.encoder_norm = LayerNorm(D, c.layer_norm_eps, dtype=dt)
        # target side: embedding (or the source's, shared), positions, blocks with cross-attention, head
        add_decoder_side(self, c, rng, cross_attention=True,
                         tgt_embed=self.src_embed if c.share_embeddings else None)

    # ---- masks ------------------------------------------------------------------------------
    def source_mask(self, src_ids: np.ndarray) -> np.ndarray:
        """(B, 1, 1, S): padded source positions are blocked as keys (encoder self-attention
        and every cross-attention).  Nothing else masks the source."""
        return key_padding_mask(src_ids, self.config.pad_id, dtype=self.dtype)

    # ---- forward ----------------------------------------------------------------------------
    def _check_ids(self, name: str, ids, vocab_size: int) -> np.ndarray:
        ids = check_token_ids(name, ids, vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"{name}: expected shape (B, length), got {ids.shape}")
        if ids.shape[1] > self.config.max_len:
            raise ValueError(f"{name}: expected at most max_len={self.config.max_len} positions, "
                             f"got {ids.shape[1]}")
        return ids

    def encode(self, src_ids: np.ndarray):
        """src_ids (B, S) -> H_enc (B, S, D), cache.  Runs once per example."""
        c = self.config
        src_ids = self._check_ids("src_ids", src_ids, c.src_vocab_size)
        src_mask = self.source_mask(src_ids)  # (B, 1, 1, S)
        x, c_in = input_forward(src_ids, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        layer_caches = []
        for layer in self.encoder_layers:
            x, c_l = layer.forward(x, src_mask)  # (B, S, D)
            layer_caches.append(c_l)
        H_enc, c_norm = self.encoder_norm.forward(x)  # (B, S, D)
        return H_enc, EncoderCache(c_in, layer_caches, c_norm)

    def decode(self, decoder_input_ids: np.ndarray, H_enc: np.ndarray, src_mask: np.ndarray, self_mask=None):
        """decoder_input_ids (B, T), H_enc (B, S, D), src_mask (B, 1, 1, S) -> logits (B, T, V), cache.

        ``self_mask`` is the decoder self-attention's additive mask (T, T); by default the
        causal mask, built here (none with ``config.causal=False``, Lesson 8's label-leakage
        demonstration).  It is the only mask decoder self-attention gets.  Target padding sits at the end
        (right padding), so the causal mask already keeps it out of every real position's
        view; masking it as a key too would break T5's convention of pad as start token.
        (With that convention the start token's embedding row is the padding row, which the
        embedding's ``padding_idx`` keeps frozen, as in PyTorch: minitf's own data use a
        separate ``<bos>``.)
        """
        c = self.config
        ids = self._check_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
        check_shape("H_enc", H_enc, (None, None, c.d_model), f"B, S, d_model={c.d_model}: the encoder output")
        if ids.shape[0] != H_enc.shape[0]:
            raise ValueError(f"decoder_input_ids: expected batch size B={H_enc.shape[0]} (as the source), "
                             f"got {ids.shape[0]}")
        T = ids.shape[1]
        if self_mask is None and c.causal:
            self_mask = causal_mask(T, dtype=self.dtype)  # (T, T)
        x, c_in = input_forward(ids, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)
        layer_caches = []
        for layer in self.decoder_layers:
            x, c_l = layer.forward(x, H_enc, self_mask, src_mask)  # (B, T, D)
            layer_caches.append(c_l)
        H_dec, c_norm = self.decoder_norm.forward(x)  # (B, T, D)
        logits = affine_forward(H_dec, head_weight(self), None)  # (B, T, D) @ (D, V) -> (B, T, V)
        return logits, DecoderCache(c_in, layer_caches, c_norm, H_dec)

    def forward(self, src_ids: np.ndarray, decoder_input_ids: np.ndarray, self_mask=None):
        """Teacher-forced forward: every target position scored in one pass.

        src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V), cache.  ``self_mask``
        as in :meth:`decode`.
        """
        src_ids = np.asarray(src_ids)
        decoder_input_ids = np.asarray(decoder_input_ids)
        if src_ids.ndim == 2 and decoder_input_ids.ndim == 2 and src_ids.shape[0] != decoder_input_ids.shape[0]:
            raise ValueError(f"decoder_input_ids: expected batch size B={src_ids.shape[0]} (as src_ids), "
                             f"got {decoder_input_ids.shape[0]}")
        H_enc, enc_cache = self.encode(src_ids)
        logits, dec_cache = self.decode(decoder_input_ids, H_enc, self.source_mask(src_ids), self_mask)
        return logits, EncoderDecoderCache(enc_cache, dec_cache)

    # ---- backward ---------------------------------------------------------------------------
    def backward(self, dlogits: np.ndarray, cache: EncoderDecoderCache) -> EncoderDecoderGrads:
        """dlogits (B, T, V), usually (p_hat - y) / n_real from ``cross_entropy``.

        Accumulates every parameter's gradient into ``grads`` and returns the gradients
        of the two stacks' outputs for inspection.
        """
        c = self.config
        enc, dec = cache
        # 1. the head.  forward: logits = H_dec @ W_U
        dH_dec = head_backward(dlogits, dec.H_dec, self)  # (B, T, D)
        # 2. the decoder's final norm.  forward: H_dec = decoder_norm(x)
        dx = self.decoder_norm.backward(dH_dec, dec.norm)  # (B, T, D)
        # 3. decoder blocks, last to first.  Each block's cross-attention read H_enc through
        #    its K and V, so each hands back a share of dL/dH_enc; the shares add up.
        dH_enc = np.zeros_like(enc.norm.x_hat)  # (B, S, D) the running sum
        shares = [None] * len(self.decoder_layers)
        for l in reversed(range(len(self.decoder_layers))):
            dx, shares[l] = self.decoder_layers[l].backward(dx, dec.layers[l])  # (B, T, D), (B, S, D)
            dH_enc += shares[l]
        # 4. the target embedding.  forward: x = Dropout(W_E[decoder_input_ids] sqrt(D) + P)
        input_backward(dx, dec.input, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)
        # 5. the encoder, whose only learning signal is dH_enc.  forward: H_enc = encoder_norm(x)
        dx = self.encoder_norm.backward(dH_enc, enc.norm)  # (B, S, D)
        for l in reversed(range(len(self.encoder_layers))):
            dx = self.encoder_layers[l].backward(dx, enc.layers[l])  # (B, S, D)
        # 6. the source embedding
        input_backward(dx, enc.input, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        return EncoderDecoderGrads(dH_dec, dH_enc, shares)

    # ---- memory ---------------------------------------------------------------------------------
    def activation_bytes(self, cache: EncoderDecoderCache) -> dict:
        """Bytes the forward pass keeps for backward, per part, each buffer counted once."""
        seen: set = set()
        enc, dec = cache
        out = {
            "encoder": cache_nbytes(enc, seen),
            "decoder": cache_nbytes(dec.input, seen) + cache_nbytes(dec.layers, seen) + cache_nbytes(dec.norm, seen),
            "head": cache_nbytes(dec.H_dec, seen),
        }
        out["total"] = sum(out.values())
        return out
