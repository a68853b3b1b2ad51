"""The encoder-decoder transformer (Vaswani et al., 2017), forward and backward.

    H_enc = Encoder(x)                                  (B, S, D)   once per example
    H_dec = Decoder(decoder_input_ids, H_enc)           (B, T, D)
    logits = H_dec W_U                                  (B, T, V)

The backward is the whole of Lesson 8 section 4, one step at a time: p_hat - y at the
head -> W_U -> each decoder block in reverse, each handing back its cross-attention
share of dL/dH_enc -> those shares summed -> the encoder, in reverse.

Decoding (Lesson 9) runs the same decoder: :meth:`EncoderDecoder.start_decoding` encodes once
and fills the cross-attention cache, :meth:`EncoderDecoder.decode_step` runs :meth:`decode`
on the newest tokens against the cache (:mod:`minitf.kv_cache`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_shape, check_token_ids
from ..config import ModelConfig
from ..kv_cache import KVCache, check_cacheable, check_group, check_step, new_cache
from ..masks import causal_mask, causal_step_mask, key_padding_mask
from ..module import Module
from .common import cache_nbytes, head_backward, input_backward, input_forward
from .stacks import (DecoderCache, EncoderCache, add_decoder_side, add_encoder_side, decoder_backward,
                     decoder_forward, encoder_backward, encoder_forward, last_cross_attention)

__all__ = ["EncoderDecoder", "EncoderDecoderCache", "EncoderDecoderGrads", "ExtraGradients", "EncoderCache"]


class EncoderDecoderCache(NamedTuple):
    encoder: EncoderCache
    decoder: DecoderCache


class EncoderDecoderGrads(NamedTuple):
    """What ``backward`` hands back besides the parameter gradients (for inspection: Lesson 8, section 4)."""
    dH_dec: np.ndarray  # (B, T, D) dL/dH_dec, the gradient entering the decoder from W_U
    dH_enc: np.ndarray  # (B, S, D) dL/dH_enc, the sum of the shares below
    dH_enc_shares: list  # L_dec arrays (B, S, D): decoder block l's cross-attention share


class ExtraGradients(NamedTuple):
    """Gradients from a reader of the stacks besides the head (the pointer-generator's copy head),
    each added where its forward read; None: not read."""
    dH_dec: np.ndarray | None = None  # (B, T, D) into the decoder's output (p_gen reads s_t = H_dec)
    dx_dec: np.ndarray | None = None  # (B, T, D) into the decoder's input (p_gen reads x_t)
    dA_cross: np.ndarray | None = None  # (B, H, T, S) into the last block's cross-attention weights
    dH_enc: np.ndarray | None = None  # (B, S, D) into the encoder's output (the context h* = a H_enc)


NO_EXTRA = ExtraGradients()


class EncoderDecoder(Module):
    """An encoder-decoder transformer built from ``ModelConfig``.

    Parameter names (flat view, see ``parameters()``, which lists the model's own ``W_U``
    first, then its sub-modules in this order): ``W_U`` (absent when tied to ``tgt_embed.W_E``),
    ``src_embed.W_E``, ``src_pos.W_pos`` (learned positions only), ``encoder_layers.{l}.*``,
    ``encoder_norm.*``, ``tgt_embed.W_E``, ``tgt_pos.W_pos``, ``decoder_layers.{l}.*``
    (``self_attn``, ``cross_attn``, ``ff.linear1/linear2``, ``norm1..3``), ``decoder_norm.*``.
    """

    can_follow_coverage = True  # its cache can sum the last block's cross-attention (GNMT's coverage penalty)

    def __init__(self, config: ModelConfig):
        c = config
        super().__init__(np.dtype(c.dtype))
        self.config = c
        rng = np.random.default_rng(c.seed)
        # source side: embedding, positions, encoder blocks, final norm
        add_encoder_side(self, c, rng)
        # target side: embedding (or the source's, shared), positions, blocks with cross-attention, head
        add_decoder_side(self, c, rng, cross_attention=True,
                         tgt_embed=self.src_embed if c.share_embeddings else None)

    # ---- masks and inputs -------------------------------------------------------------------
    def source_mask(self, src_ids: np.ndarray) -> np.ndarray:
        """(B, 1, 1, S): padded source positions are blocked as keys (encoder self-attention
        and every cross-attention).  Nothing else masks the source."""
        return key_padding_mask(src_ids, self.config.pad_id, dtype=self.dtype)

    def self_attention_mask(self, T: int, t: int = 0):
        """The decoder self-attention's mask for T positions from position t: the causal mask
        (T, T), or a decoding step's (T, t + T) when t > 0 (:func:`~minitf.masks.causal_step_mask`);
        None with ``config.causal=False`` (Lesson 8's label-leakage demonstration).

        It is the only mask decoder self-attention gets.  Target padding sits at the end
        (right padding), so the causal mask already keeps it out of every real position's
        view; masking it as a key too would break T5's convention of pad as start token.
        (With that convention the start token's embedding row is the padding row, which the
        embedding's ``padding_idx`` keeps frozen, as in PyTorch: minitf's own data use a
        separate ``<bos>``.)"""
        if not self.config.causal:
            return None
        return causal_mask(T, dtype=self.dtype) if t == 0 else causal_step_mask(T, t, self.dtype)

    def target_input(self, ids: np.ndarray, t: int = 0):
        """ids (B, T) at positions t .. t+T-1 -> x = Dropout(W_E[ids] sqrt(D) + P) (B, T, D), cache."""
        return input_forward(ids, self.tgt_embed, self.tgt_pos, self.tgt_dropout, self.config.scale_embeddings,
                             offset=t)

    def _check_ids(self, name: str, ids, vocab_size: int) -> np.ndarray:
        ids = check_token_ids(name, ids, vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"{name}: expected shape (B, length), got {ids.shape}")
        if ids.shape[1] > self.config.max_len:
            raise ValueError(f"{name}: expected at most max_len={self.config.max_len} positions, "
                             f"got {ids.shape[1]}")
        return ids

    # ---- forward ----------------------------------------------------------------------------
    def encode(self, src_ids: np.ndarray):
        """src_ids (B, S) -> H_enc (B, S, D), cache.  Runs once per example."""
        c = self.config
        src_ids = self._check_ids("src_ids", src_ids, c.src_vocab_size)
        x, c_in = input_forward(src_ids, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        return encoder_forward(self, x, c_in, self.source_mask(src_ids))  # (B, S, D)

    def decode(self, decoder_input_ids: np.ndarray, H_enc: np.ndarray | None, src_mask: np.ndarray, self_mask=None,
               *, cache: KVCache | None = None, cross_weights=None):
        """decoder_input_ids (B, T), H_enc (B, S, D), src_mask (B, 1, 1, S) -> logits (B, T, V), cache.

        ``self_mask``: the decoder self-attention's additive mask; by default
        :meth:`self_attention_mask`.  ``cache``: None (every position at once), or a decoding
        step's :class:`~minitf.kv_cache.KVCache` (:meth:`decode_step`: the ids are its rows'
        newest tokens, at positions ``cache.length`` on, and H_enc may be None: its K, V are in
        the cache).  ``cross_weights``: the last block's cross-attention weights hook, or None.
        """
        c = self.config
        if cache is None:
            ids = self._check_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
            check_shape("H_enc", H_enc, (None, None, c.d_model), f"B, S, d_model={c.d_model}: the encoder output")
            if ids.shape[0] != H_enc.shape[0]:
                raise ValueError(f"decoder_input_ids: expected batch size B={H_enc.shape[0]} (as the source), "
                                 f"got {ids.shape[0]}")
        else:  # decode_step checked the ids against the cache
            ids = decoder_input_ids
        t = 0 if cache is None else cache.length
        x, c_in = self.target_input(ids, t)  # (B, T, D)
        mask = self.self_attention_mask(ids.shape[1], t) if self_mask is None else self_mask
        return decoder_forward(self, x, c_in, H_enc, mask, src_mask, cache=cache, cross_weights=cross_weights)

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

    # ---- decoding (minitf.decoding calls these) ---------------------------------------------
    def init_cache(self, H_enc: np.ndarray, src_mask: np.ndarray, *, group_size: int = 1,
                   max_len: int | None = None, coverage: bool = False) -> KVCache:
        """Empty self-attention caches of N = B * G rows and capacity T_max (``max_len``, by
        default ``config.max_len``), and full cross-attention caches for H_enc (B, S, D), once
        per example; ``coverage``: follow the coverage vector (zeros)."""
        check_cacheable(self)
        c = self.config
        G, T_max = check_group(group_size, max_len, c.max_len, "its upper end is the model's max_len")
        H_enc = np.asarray(H_enc)
        if H_enc.ndim != 3 or H_enc.shape[2] != c.d_model:
            raise ValueError(f"H_enc: expected shape (B, S, d_model={c.d_model}), got {H_enc.shape}")
        B, S, _ = H_enc.shape
        if np.shape(src_mask) != (B, 1, 1, S):
            raise ValueError(f"src_mask: expected shape (B, 1, 1, S) = {(B, 1, 1, S)}, got {np.shape(src_mask)}")
        cov = np.zeros((B * G, S), dtype=self.dtype) if coverage else None  # (N, S)
        return new_cache(self, B * G, T_max, H_enc=H_enc, src_mask=np.asarray(src_mask, dtype=self.dtype),
                         group_size=G, coverage=cov)

    def start_decoding(self, src_ids, *, group_size: int = 1, max_len: int | None = None,
                       coverage: bool = False) -> KVCache:
        """Run the encoder once on ``src_ids`` (B, S) and return a fresh cache (:meth:`init_cache`)."""
        check_cacheable(self)
        H_enc, _ = self.encode(src_ids)  # (B, S, D); the backward cache is not needed
        return self.init_cache(H_enc, self.source_mask(np.asarray(src_ids)), group_size=group_size,
                               max_len=max_len, coverage=coverage)

    def decode_step(self, decoder_input_ids, cache: KVCache):
        """Feed the newest token(s) of every row, decoder_input_ids (N, T_new): -> logits
        (N, T_new, V) and the cache advanced by T_new.  :meth:`decode` with the cache."""
        ids = check_step(self, decoder_input_ids, cache, self.config.tgt_vocab_size)
        logits, dec = self.decode(ids, None, cache.src_mask, cache=cache)
        if cache.coverage is not None:  # GNMT's coverage penalty reads it
            cache.follow(last_cross_attention(dec, cache.group_size))  # (N, T_new, S)
        return logits, cache._replace(length=cache.length + ids.shape[1])

    def uncached_decoder(self, src_ids: np.ndarray, group_size: int = 1):
        """The reference without a cache: the encoder run once, then a function prefix (N, t+1)
        -> logits (N, t+1, V) that re-runs the decoder on the whole prefix (its last position
        scores the next token)."""
        H_enc, _ = self.encode(src_ids)  # (B, S, D), once per example
        src_mask = self.source_mask(src_ids)  # (B, 1, 1, S)
        if group_size > 1:  # (N, S, D), (N, 1, 1, S)
            H_enc, src_mask = np.repeat(H_enc, group_size, axis=0), np.repeat(src_mask, group_size, axis=0)
        return lambda prefix: self.decode(prefix, H_enc, src_mask)[0]

    # ---- backward ---------------------------------------------------------------------------
    def backward(self, dlogits: np.ndarray, cache: EncoderDecoderCache, extra: ExtraGradients = NO_EXTRA,
                 cross_weights=None) -> EncoderDecoderGrads:
        """dlogits (B, T, V), usually (p_hat - y) / n_real from ``cross_entropy``.

        Accumulates every parameter's gradient into ``grads`` and returns the gradients
        of the two stacks' outputs for inspection.  ``extra`` and ``cross_weights``: the
        pointer-generator's hooks (:class:`ExtraGradients`); the plain model has none.
        """
        c = self.config
        enc, dec = cache
        # 1. the head.  forward: logits = H_dec @ W_U
        dH_dec = head_backward(dlogits, dec.H_dec, self)  # (B, T, D)
        if extra.dH_dec is not None:
            dH_dec = dH_dec + extra.dH_dec  # H_dec was read by the copy head too
        # 2. the decoder's final norm, then its blocks, last to first.  Each block's cross-attention
        #    read H_enc through its K and V, so each hands back a share of dL/dH_enc; the shares add up.
        dH_enc = np.zeros_like(enc.norm.x_hat) if extra.dH_enc is None else extra.dH_enc.copy()  # (B, S, D) the sum
        dx, shares = decoder_backward(self, dH_dec, dec, dH_enc, dA_cross=extra.dA_cross, cross_weights=cross_weights)
        # 3. the target embedding.  forward: x = Dropout(W_E[decoder_input_ids] sqrt(D) + P)
        if extra.dx_dec is not None:
            dx = dx + extra.dx_dec  # x was read by the copy head too
        input_backward(dx, dec.input, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)
        # 4. the encoder blocks, whose only learning signal is dH_enc (a shared embedding table also
        #    learns from the target side).  forward: H_enc = encoder_norm(blocks(x))
        dx = encoder_backward(self, dH_enc, enc)  # (B, S, D)
        # 5. the source embedding
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
