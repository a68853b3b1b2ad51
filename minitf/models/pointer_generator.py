"""The pointer-generator (See et al., 2017) on the transformer encoder-decoder: copy and
coverage (Lesson 9, section 5).

A sequence-to-sequence model fails in ways a larger vocabulary does not cure: it cannot
write a token its output layer lacks (a name or a number seen only in the source), and it
repeats or drops source content.  See et al. answer the first with a *copy distribution*
and the second with *coverage*.

**Copy.**  At every target position t the model mixes two distributions over an *extended
vocabulary*: the V tokens of the output layer, then the example's source-only tokens (not
in the output vocabulary), id V + j for the j-th distinct one (:mod:`minitf.data.extended_vocab`):

    P_vocab = softmax(H_dec W_U)                                         (B, T, V)
    a_t     = the last decoder block's cross-attention weights, mean over heads   (B, T, S)
    h*_t    = sum_i a_t,i H_enc,i                    the context vector   (B, T, D)
    p_gen   = sigma(w_h . h*_t + w_s . s_t + w_x . x_t + b_ptr)           (B, T)
    P(w)    = p_gen P_vocab(w) + (1 - p_gen) sum_{i: x_i = w} a_t,i       (B, T, V_ext)

s_t is the decoder state the head reads (H_dec) and x_t the decoder's input (the token
embedding, scaled, plus its position: what the first block reads).  The last sum is a
scatter-add of the attention over source positions into the extended vocabulary
(:func:`~minitf.models.copy_mechanism.scatter_add`): a token that occurs twice collects both
positions' weights.  A copied source-only token is fed back to the decoder as ``<unk>`` (the
embedding has no row for it), as in See et al.

Two choices See et al. (a one-layer LSTM with one attention) did not have to make:

* the copy attention is the *last* decoder block's cross-attention, averaged over its
  heads: the attention nearest the output, and still a distribution over the source (a
  mean of distributions).  Every head then receives the same share of the copy gradient,
  1/H of it; no head is singled out to point;
* the context h*_t is See's, the source states weighted by that same attention, not the
  cross-attention's output (which has passed through W_v and W_o, and sums H heads).

**Coverage.**  c_t = sum_{t' < t} a_t' (B, T, S): how much attention each source position
has received so far.  Its weight w_c (one per head) is added to the last block's
cross-attention scores, and the coverage loss penalises attending again where attention
already went (the recurrence and the loss: :mod:`minitf.models.copy_mechanism`).  In
decoding, c is carried from step to step beside the KV cache, and GNMT's coverage penalty
reads it (:mod:`minitf.kv_cache`).

The gradient's way back: dP -> the mixture -> (P_vocab: the head, as always), (p_gen: w_h,
w_s, w_x, and through them h*_t, H_dec, x_t) and (the scatter-add, whose backward is a
gather: dL/da); dL/da also collects the context's share (h*_t = a_t H_enc) and the coverage
loss's, then enters the last block's cross-attention backward as a gradient on its weights
(``dA_cross``, the hook of :mod:`minitf.attention`), so the copy decision trains W_q and W_k
of that attention and, through K, the encoder.

**A head plus two hooks.**  The model is the :class:`EncoderDecoder`'s stacks, run by the
encoder-decoder's own code (:mod:`minitf.models.stacks`), with the coverage attention plugged
into the last block's cross-attention (``cross_weights``) and the copy head's gradients handed
to :meth:`EncoderDecoder.backward` (:class:`ExtraGradients`).  The pieces themselves are in
:mod:`minitf.models.copy_mechanism`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_int, check_shape, check_token_ids
from ..config import ModelConfig
from ..data import IGNORE_INDEX, CharTokenizer
from ..data.extended_vocab import ExtendedSource, ExtendedVocabulary
from ..kv_cache import CopySource, KVCache, check_step
from .common import cache_nbytes
from .copy_mechanism import (CopyCache, CopyHead, Coverage, CoverageStep, copy_nll, coverage_loss, coverage_vector,
                             gather, mixture_log_probs, scatter_add, sigmoid_pair)
from .encoder_decoder import EncoderCache, EncoderDecoder, EncoderDecoderCache, ExtraGradients
from .stacks import DecoderCache, decoder_forward, last_cross_attention

__all__ = ["ExtendedSource", "scatter_add", "gather", "coverage_vector", "Coverage", "CopyHead", "PointerGenerator",
           "PointerGeneratorCache", "PointerGeneratorGrads", "copy_nll", "coverage_loss", "mixture_log_probs",
           "sigmoid_pair"]


class PointerGeneratorDecoderCache(NamedTuple):
    stack: DecoderCache  # the transformer decoder's, as EncoderDecoder keeps it
    x: np.ndarray  # (B, T, D) the decoder input (first block's input), read by p_gen
    copy: CopyCache
    H_enc: np.ndarray  # (B, S, D) for the context's backward, dL/da = dL/dh* H_enc^T


class PointerGeneratorCache(NamedTuple):
    encoder: EncoderCache
    decoder: PointerGeneratorDecoderCache


class PointerGeneratorGrads(NamedTuple):
    """What ``backward`` hands back besides the parameter gradients (for inspection)."""
    dH_dec: np.ndarray  # (B, T, D) dL/dH_dec: through W_U and through p_gen's w_s
    dH_enc: np.ndarray  # (B, S, D) dL/dH_enc, the sum of the shares and the context's
    dH_enc_shares: list  # L_dec arrays (B, S, D): decoder block l's cross-attention share
    dH_enc_context: np.ndarray  # (B, S, D) the share through h*_t = a_t H_enc
    da: np.ndarray  # (B, T, S) dL/da, the gradient on the copy attention (copy, context, coverage loss)


class PointerGenerator(EncoderDecoder):
    """An :class:`EncoderDecoder` with See et al.'s copy head and, optionally, coverage.

    Parameters
    ----------
    config : ModelConfig
        The transformer; at least one decoder layer.  Its weights are those of
        ``EncoderDecoder(config)`` (the copy head draws from a stream of its own), so a
        trained model's weights load by name.
    coverage : bool
        Add w_c c_t to the last block's cross-attention scores (:class:`Coverage`).
    src_to_tgt, unk_id
        The extended vocabulary's (:class:`~minitf.data.extended_vocab.ExtendedVocabulary`):
        each source token's output id (-1: source-only), and the output token a copied one is
        read as when fed back (default: the tokenizer's ``<unk>``).

    Parameter names: those of :class:`EncoderDecoder`, then ``copy.w_h``, ``copy.w_s``,
    ``copy.w_x``, ``copy.b_ptr`` and ``coverage.w_c``.  ``forward`` returns the mixed
    distribution P over the extended vocabulary (probabilities, not logits): train it with
    :func:`copy_nll` (and :func:`coverage_loss`; not ``minitf train``, whose loss is the
    cross-entropy), decode it with :mod:`minitf.decoding` or ``minitf generate``.
    """

    def __init__(self, config: ModelConfig, *, coverage: bool = True, src_to_tgt=None,
                 unk_id: int = CharTokenizer.unk_id):
        c = config
        check_int("n_decoder_layers", c.n_decoder_layers, low=1, hint="the copy attention is the last decoder block's")
        super().__init__(c)
        self.vocab = ExtendedVocabulary(c.src_vocab_size, c.tgt_vocab_size, c.pad_id, unk_id, src_to_tgt)
        rng = np.random.default_rng([c.seed, 1])  # a stream of its own: the transformer's draws are unchanged
        self.copy = CopyHead(c.d_model, rng=rng, dtype=self.dtype)
        self.coverage = Coverage(c.n_heads, dtype=self.dtype) if coverage else None

    # ---- the extended vocabulary (minitf.data.extended_vocab) ---------------------------------
    src_to_tgt = property(lambda self: self.vocab.src_to_tgt, doc="(src_vocab_size,) each source id's output id, -1: source-only")
    tgt_to_src = property(lambda self: self.vocab.tgt_to_src, doc="(V,) each output id's source id, -1: target-only")
    unk_id = property(lambda self: self.vocab.unk_id, doc="what a copied token is read as when fed back")

    def extend_source(self, src_ids) -> ExtendedSource:
        """src_ids (B, S) -> the sources in the extended vocabulary (``ExtendedVocabulary.extend``)."""
        return self.vocab.extend(self._check_ids("src_ids", src_ids, self.config.src_vocab_size))

    def to_extended(self, token_ids, source: ExtendedSource, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
        """Source-vocabulary ids (B, L) -> extended ids (``ExtendedVocabulary.to_extended``)."""
        return self.vocab.to_extended(token_ids, source, ignore_index)

    def from_extended(self, ext_ids, source: ExtendedSource) -> np.ndarray:
        """Extended ids (N, L) -> source-vocabulary ids (``ExtendedVocabulary.from_extended``)."""
        return self.vocab.from_extended(ext_ids, source)

    def decoder_input(self, ext_ids: np.ndarray) -> np.ndarray:
        """Extended ids -> what the decoder reads: a copied id (>= V) becomes ``unk_id``."""
        return self.vocab.decoder_input(ext_ids)

    # ---- forward ------------------------------------------------------------------------------
    def decode(self, decoder_input_ids, H_enc: np.ndarray | None, src_mask: np.ndarray, self_mask=None, *,
               source: ExtendedSource, cache: KVCache | None = None):
        """decoder_input_ids (B, T) (extended ids allowed: copies are read as ``<unk>``), H_enc
        (B, S, D), src_mask (B, 1, 1, S), the sources in the extended vocabulary -> P (B, T,
        V_ext), cache.  The transformer's decoder, coverage in the last block's cross-attention,
        then the copy head.  ``cache``: a decoding step, as :meth:`EncoderDecoder.decode`
        (H_enc is then the cache's, ``cache.copy``)."""
        c = self.config
        ids = self.decoder_input(check_token_ids("decoder_input_ids", decoder_input_ids, source.vocab_size))
        t, G = (0, 1) if cache is None else (cache.length, cache.group_size)
        if cache is None:
            ids = self._check_ids("decoder_input_ids", ids, c.tgt_vocab_size)
            check_shape("H_enc", H_enc, (ids.shape[0], None, c.d_model), f"B={ids.shape[0]}, S, d_model={c.d_model}")
            check_shape("source.ids", source.ids, H_enc.shape[:2], "(B, S): the sources of H_enc")
        else:
            H_enc = cache.copy.H_enc  # (B, S, D)
        weights = self.coverage if cache is None or self.coverage is None else CoverageStep(self.coverage, cache.coverage)
        x, c_in = self.target_input(ids, t)  # (N, T, D), which p_gen reads too
        mask = self.self_attention_mask(ids.shape[1], t) if self_mask is None else self_mask
        logits, stack = decoder_forward(self, x, c_in, H_enc, mask, src_mask, cache=cache, cross_weights=weights)
        a = last_cross_attention(stack, G)  # (N, T, S)
        N, T, S = a.shape
        context = (a.reshape(N // G, G * T, S) @ H_enc).reshape(N, T, -1)  # (B, G*T, S) @ (B, S, D) -> (N, T, D)  h*_t
        src_ext = source.ids if G == 1 else np.repeat(source.ids, G, axis=0)  # (N, S)
        P, c_copy = self.copy.forward(logits, context, stack.H_dec, x, a, src_ext, source.vocab_size)  # (N, T, V_ext)
        return P, PointerGeneratorDecoderCache(stack, x, c_copy, H_enc)

    def forward(self, src_ids: np.ndarray, decoder_input_ids: np.ndarray, self_mask=None):
        """Teacher-forced forward: src_ids (B, S), decoder_input_ids (B, T) -> P (B, T, V_ext),
        cache.  V_ext = V + the batch's largest number of source-only tokens in one example
        (``self.extend_source(src_ids)``: the same ids the labels must use)."""
        src_ids = np.asarray(src_ids)
        H_enc, enc_cache = self.encode(src_ids)
        P, dec_cache = self.decode(decoder_input_ids, H_enc, self.source_mask(src_ids), self_mask,
                                   source=self.extend_source(src_ids))
        return P, PointerGeneratorCache(enc_cache, dec_cache)

    @staticmethod
    def copy_attention(cache) -> np.ndarray:
        """a (B, T, S): the copy attention (what :func:`coverage_loss` reads), from the cache of
        :meth:`forward` or of :meth:`decode`."""
        dec = cache.decoder if isinstance(cache, PointerGeneratorCache) else cache
        return dec.copy.a

    # ---- decoding (minitf.decoding calls these) -------------------------------------------------
    def start_decoding(self, src_ids, *, group_size: int = 1, max_len: int | None = None,
                       coverage: bool = True) -> KVCache:
        """Encode once; the cache follows the coverage and holds what the copy head reads."""
        src_ids = np.asarray(src_ids)
        H_enc, _ = self.encode(src_ids)  # (B, S, D)
        cache = self.init_cache(H_enc, self.source_mask(src_ids), group_size=group_size, max_len=max_len,
                                coverage=True)
        return cache._replace(copy=CopySource(H_enc, self.extend_source(src_ids)))

    def decode_step(self, decoder_input_ids, cache: KVCache):
        """As :meth:`EncoderDecoder.decode_step`, over the extended vocabulary: -> log P (N, T_new, V_ext)."""
        V_ext = self.config.tgt_vocab_size if cache.copy is None else cache.copy.source.vocab_size
        ids = check_step(self, decoder_input_ids, cache, V_ext)  # a cache without copy was made for another model
        P, dec = self.decode(ids, None, cache.src_mask, source=cache.copy.source, cache=cache)
        cache.follow(dec.copy.a)  # the coverage the next position's attention reads
        return mixture_log_probs(P), cache._replace(length=cache.length + ids.shape[1])

    def uncached_decoder(self, src_ids: np.ndarray, group_size: int = 1):
        """As :meth:`EncoderDecoder.uncached_decoder`: prefix (N, t+1) -> log P (N, t+1, V_ext)."""
        src_ids = np.asarray(src_ids)
        G = group_size
        H_enc, _ = self.encode(src_ids)  # (B, S, D), once per example
        H_enc, src_mask = np.repeat(H_enc, G, axis=0), np.repeat(self.source_mask(src_ids), G, axis=0)  # (N, ...)
        source = self.extend_source(src_ids).rows(G)  # (N, S)
        return lambda prefix: mixture_log_probs(self.decode(prefix, H_enc, src_mask, source=source)[0])

    # ---- backward -----------------------------------------------------------------------------
    def backward(self, dP: np.ndarray, cache: PointerGeneratorCache, da_coverage=None) -> PointerGeneratorGrads:
        """dP (B, T, V_ext) from :func:`copy_nll`; ``da_coverage`` (B, T, S), optional, from
        :func:`coverage_loss`.  Accumulates every parameter's gradient into ``grads``."""
        enc, dec = cache
        a, H_enc = dec.copy.a, dec.H_enc  # (B, T, S), (B, S, D)
        # 1. the mixture and p_gen.  forward: P = p_gen P_vocab + (1 - p_gen) scatter_add(a)
        dlogits, dcontext, ds, dx0, da = self.copy.backward(dP, dec.copy)
        # 2. the context.  forward: h* = a @ H_enc
        da = da + dcontext @ H_enc.swapaxes(1, 2)  # (B, T, D) @ (B, D, S) -> (B, T, S)
        dH_enc_context = a.swapaxes(1, 2) @ dcontext  # (B, S, T) @ (B, T, D) -> (B, S, D)
        # 3. the coverage loss, a function of a alone
        if da_coverage is not None:
            check_shape("da_coverage", da_coverage, a.shape, "(B, T, S), from coverage_loss")
            da = da + da_coverage
        # 4. the copy attention.  forward: a = mean_h A, A the last block's cross-attention weights
        H = self.config.n_heads
        dA = np.broadcast_to(da[:, None] / H, (da.shape[0], H) + da.shape[1:])  # (B, H, T, S)
        # 5. the transformer, with what the copy head read: H_dec (as s_t), x_t, A and H_enc
        grads = super().backward(dlogits, EncoderDecoderCache(enc, dec.stack),
                                 ExtraGradients(dH_dec=ds, dx_dec=dx0, dA_cross=dA, dH_enc=dH_enc_context),
                                 cross_weights=self.coverage)
        return PointerGeneratorGrads(grads.dH_dec, grads.dH_enc, grads.dH_enc_shares, dH_enc_context, da)

    # ---- memory ---------------------------------------------------------------------------------
    def activation_bytes(self, cache: PointerGeneratorCache) -> dict:
        """Bytes the forward pass keeps for backward, per part, each buffer counted once."""
        seen: set = set()
        enc, dec = cache
        out = {
            "encoder": cache_nbytes(enc, seen),
            "decoder": cache_nbytes(dec.stack.input, seen) + cache_nbytes(dec.stack.layers, seen)
            + cache_nbytes(dec.stack.norm, seen),
            "head": cache_nbytes(dec.stack.H_dec, seen),
            "copy": cache_nbytes((dec.x, dec.copy), seen),
        }
        out["total"] = sum(out.values())
        return out
