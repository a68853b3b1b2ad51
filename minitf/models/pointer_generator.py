"""The pointer-generator (See et al., 2017) on the transformer encoder-decoder: copy and
coverage (Lesson 9, section 5).

A sequence-to-sequence model fails in ways a larger vocabulary does not cure: it cannot
write a token its output layer lacks (a name or a number seen only in the source), and it
repeats or drops source content.  See et al. answer the first with a *copy distribution*
and the second with *coverage*.

**Copy.**  At every target position t the model mixes two distributions over an *extended
vocabulary*: the V tokens of the output layer, then the example's source-only tokens (not
in the output vocabulary), id V + j for the j-th distinct one (:meth:`PointerGenerator.extend_source`):

    P_vocab = softmax(H_dec W_U)                                         (B, T, V)
    a_t     = the last decoder block's cross-attention weights, mean over heads   (B, T, S)
    h*_t    = sum_i a_t,i H_enc,i                    the context vector   (B, T, D)
    p_gen   = sigma(w_h . h*_t + w_s . s_t + w_x . x_t + b_ptr)           (B, T)
    P(w)    = p_gen P_vocab(w) + (1 - p_gen) sum_{i: x_i = w} a_t,i       (B, T, V_ext)

s_t is the decoder state the head reads (H_dec) and x_t the decoder's input (the token
embedding, scaled, plus its position: what the first block reads).  The last sum is a
scatter-add of the attention over source positions into the extended vocabulary
(:func:`scatter_add`): a token that occurs twice collects both positions' weights.  A
copied source-only token is fed back to the decoder as ``<unk>`` (the embedding has no row
for it), as in See et al.

Two choices See et al. (a one-layer LSTM with one attention) did not have to make:

* the copy attention is the *last* decoder block's cross-attention, averaged over its
  heads: the attention nearest the output, and still a distribution over the source (a
  mean of distributions).  Every head then receives the same share of the copy gradient,
  1/H of it; no head is singled out to point;
* the context h*_t is See's, the source states weighted by that same attention, not the
  cross-attention's output (which has passed through W_v and W_o, and sums H heads).

**Coverage.**  c_t = sum_{t' < t} a_t' (B, T, S): how much attention each source position
has received so far.  See et al. add w_c c_t,i inside the attention score; the
transformer's equivalent adds w_c,h c_t,i to head h's scores in the last block's
cross-attention (:class:`Coverage`, w_c (H,): one weight per head, so a head can learn to
look away from what is covered, w_c,h < 0):

    A_t = softmax(Q K^T / sqrt(Dh) + mask + w_c c_t)        a_t = mean_h A_t

c_t is a sum of the earlier rows of a, each computed with the coverage before it, so the
rows are computed one position after the other (a loop over T, as in an RNN) and the
backward runs through that recurrence in reverse.  The coverage loss penalises attending
again where attention already went:

    L = (1 / n_real) sum_t [ -log P_t(y_t) + lambda sum_i min(a_t,i, c_t,i) ]

(:func:`copy_nll` and :func:`coverage_loss`, real target positions only).  In decoding, c
is carried from step to step beside the KV cache, and GNMT's coverage penalty reads it
(:mod:`minitf.decoding`).

The gradient's way back: dP -> the mixture -> (P_vocab: the head, as always), (p_gen: w_h,
w_s, w_x, and through them h*_t, H_dec, x_t) and (the scatter-add, whose backward is a
gather: dL/da); dL/da also collects the context's share (h*_t = a_t H_enc) and the coverage
loss's, then enters the last block's cross-attention backward as a gradient on its weights
(``dA_cross``, the hook of :mod:`minitf.attention`), so the copy decision trains W_q and W_k
of that attention and, through K, the encoder.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..attention import masked_softmax
from ..checks import check_int, check_number, check_shape, check_token_ids
from ..config import ModelConfig
from ..data import IGNORE_INDEX, CharTokenizer
from ..layers.linear import affine_forward
from ..layers.softmax import softmax, softmax_backward
from ..masks import causal_mask
from ..module import Module
from .common import DecoderCache, cache_nbytes, head_backward, head_weight, input_backward, input_forward
from .encoder_decoder import EncoderCache, EncoderDecoder

__all__ = ["ExtendedSource", "scatter_add", "coverage_vector", "Coverage", "CopyHead", "PointerGenerator",
           "PointerGeneratorCache", "PointerGeneratorGrads", "copy_nll", "coverage_loss", "mixture_log_probs"]


# ---- the extended vocabulary -------------------------------------------------------------------
class ExtendedSource(NamedTuple):
    """A batch of sources in the extended vocabulary (:meth:`PointerGenerator.extend_source`)."""
    ids: np.ndarray  # (B, S) each source token's extended id: its output-vocabulary id, or V + j
    oov: np.ndarray  # (B, n_oov) the source-vocabulary id that extended id V + j stands for; -1 past the example's own
    vocab_size: int  # V_ext = V + n_oov, the width of the mixed distribution

    def rows(self, G: int) -> "ExtendedSource":
        """The same sources for N = B * G rows, G consecutive rows per example (beams, samples)."""
        return ExtendedSource(np.repeat(self.ids, G, axis=0), np.repeat(self.oov, G, axis=0), self.vocab_size)


def scatter_add(a: np.ndarray, ids: np.ndarray, width: int) -> np.ndarray:
    """out[b, t, ids[b, i]] += a[b, t, i]: a (B, T, S), ids (B, S) in [0, width) -> out (B, T, width).

    ``np.add.at`` and not ``out[b, t, ids] += a``: a buffered fancy-index assignment would
    keep only one of two source positions that hold the same token.  Its backward is the
    gather ``dout[b, t, ids[b, i]]`` (:func:`gather`).
    """
    B, T, S = a.shape
    out = np.zeros((B, T, width), dtype=a.dtype)  # (B, T, width)
    np.add.at(out, (np.arange(B)[:, None, None], np.arange(T)[None, :, None], ids[:, None, :]), a)
    return out


def gather(dout: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The backward of :func:`scatter_add`: dout (B, T, width), ids (B, S) -> da (B, T, S),
    da[b, t, i] = dout[b, t, ids[b, i]]."""
    return np.take_along_axis(dout, np.broadcast_to(ids[:, None, :], dout.shape[:2] + ids.shape[1:]), axis=-1)


def coverage_vector(a: np.ndarray) -> np.ndarray:
    """c_t = sum_{t' < t} a_t': a (B, T, S) -> c (B, T, S), c_0 = 0 (a running sum, in the
    order :class:`Coverage` adds it up, so the two agree to the last bit)."""
    c = np.zeros_like(a)  # (B, T, S)
    np.cumsum(a[:, :-1], axis=1, out=c[:, 1:])
    return c


# ---- coverage: w_c c_t added to the copy attention's scores ---------------------------------------
class Coverage(Module):
    """The attention-weight function of the last block's cross-attention with coverage:

        A_t = softmax(scores_t + w_c c_t),   c_{t+1} = c_t + mean_h A_t,   c_0 = 0

    scores (B, H, T, S) (already scaled and masked) -> A (B, H, T, S), one position after the
    other.  w_c (H,) weighs the coverage in each head.  It plugs into
    :func:`~minitf.attention.scaled_dot_product_attention` as ``weights`` (a ``forward(scores,
    mask) -> A`` and ``backward(dA, A) -> dscores`` pair; the backward recomputes c from A).
    """

    def __init__(self, n_heads: int, dtype=np.float32):
        super().__init__(dtype)
        self.add_param("w_c", np.zeros(n_heads))  # 0: starts as the plain attention

    def step(self, scores: np.ndarray, mask, c0: np.ndarray):
        """The recurrence from the coverage ``c0`` (B, S): scores (B, H, T, S) -> (A (B, H, T, S),
        the coverage after the T positions (B, S)).  Decoding continues from its running c."""
        B, H, T, S = scores.shape
        w_c = self.params["w_c"][None, :, None]  # (1, H, 1)
        A = np.empty_like(scores)  # (B, H, T, S)
        c = c0  # (B, S)
        for t in range(T):
            mask_t = mask if mask is None or mask.ndim < 2 else mask[..., min(t, mask.shape[-2] - 1), :]  # row t's
            A[:, :, t] = masked_softmax(scores[:, :, t] + w_c * c[:, None, :], mask_t)  # (B, H, S)
            c = c + A[:, :, t].mean(axis=1)  # (B, S)
        return A, c

    def forward(self, scores: np.ndarray, mask=None) -> np.ndarray:
        """scores (B, H, T, S) -> A (B, H, T, S), coverage starting at 0 (teacher forcing)."""
        B, H, T, S = scores.shape
        return self.step(scores, mask, np.zeros((B, S), dtype=scores.dtype))[0]

    def backward(self, dA: np.ndarray, A: np.ndarray) -> np.ndarray:
        """dA (B, H, T, S) -> dscores (B, H, T, S); adds dL/dw_c.  Runs through the recurrence
        in reverse: row t's coverage c_t feeds row t's scores and every later c."""
        B, H, T, S = A.shape
        w_c = self.params["w_c"]  # (H,)
        c = coverage_vector(A.mean(axis=1))  # (B, T, S) the coverage each row saw
        dscores = np.empty_like(A)  # (B, H, T, S)
        dc = np.zeros((B, S), dtype=A.dtype)  # dL/dc_{t+1}, from the rows after t
        for t in reversed(range(T)):
            # forward: c_{t+1} = c_t + mean_h A_t   -> each head of row t gets dc / H
            dA_t = dA[:, :, t] + dc[:, None, :] / H  # (B, H, S)
            # forward: A_t = softmax(z_t)
            dz = softmax_backward(dA_t, A[:, :, t])  # (B, H, S)
            dscores[:, :, t] = dz
            # forward: z_t = scores_t + w_c[h] c_t
            self.grads["w_c"] += np.einsum("bhs,bs->h", dz, c[:, t])  # (H,)
            dc = dc + np.einsum("bhs,h->bs", dz, w_c)  # (B, S) c_t reaches c_{t+1} and z_t
        return dscores


# ---- the copy head: p_gen and the mixture --------------------------------------------------------
def sigmoid_pair(z: np.ndarray):
    """(sigma(z), sigma(-z)) = (p_gen, 1 - p_gen), each to full relative precision.

    1 - sigma(z) computed by subtraction, or as (1 + tanh(-z/2)) / 2, keeps only the
    absolute precision of numbers near 1: at p_gen = 0.9999 the copy weight 1e-4 would
    carry a relative error of ~1e-12 into log P.  With e = exp(-|z|) <= 1, the larger of
    the two is 1 / (1 + e) and the smaller e / (1 + e), and nothing cancels."""
    e = np.exp(-np.abs(z))
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    return np.where(z >= 0, big, small), np.where(z >= 0, small, big)


class CopyCache(NamedTuple):
    context: np.ndarray  # (B, T, D) h*_t, for dw_h
    s: np.ndarray  # (B, T, D) the decoder state, for dw_s
    x: np.ndarray  # (B, T, D) the decoder input, for dw_x
    a: np.ndarray  # (B, T, S) the copy attention, for dp_gen
    src_ext: np.ndarray  # (B, S) extended ids of the source tokens: where the scatter-add went
    p_gen: np.ndarray  # (B, T)
    p_copy: np.ndarray  # (B, T) 1 - p_gen
    P_vocab: np.ndarray  # (B, T, V) for the softmax backward and dp_gen


class CopyHead(Module):
    """p_gen and the mixture (module docstring), parameters named as in See et al.:
    ``w_h``, ``w_s``, ``w_x`` (D,) and ``b_ptr`` (1,)."""

    def __init__(self, d_model: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        bound = 1.0 / math.sqrt(d_model)
        for name in ("w_h", "w_s", "w_x"):
            self.add_param(name, rng.uniform(-bound, bound, size=d_model))
        self.add_param("b_ptr", np.zeros(1))

    def forward(self, logits, context, s, x, a, src_ext, vocab_size: int):
        """logits (B, T, V), context, s, x (B, T, D), a (B, T, S), src_ext (B, S) in [0, V_ext)
        -> P (B, T, V_ext = vocab_size), cache."""
        p = self.params
        V = logits.shape[-1]
        z = context @ p["w_h"] + s @ p["w_s"] + x @ p["w_x"] + p["b_ptr"]  # (B, T, D) @ (D,) -> (B, T)
        p_gen, p_copy = sigmoid_pair(z)  # (B, T) each: p_gen, and 1 - p_gen without cancellation
        P_vocab = softmax(logits)  # (B, T, V)
        P = scatter_add(p_copy[..., None] * a, src_ext, vocab_size)  # (B, T, V_ext) the copy part
        P[..., :V] += p_gen[..., None] * P_vocab  # the generation part
        return P, CopyCache(context, s, x, a, src_ext, p_gen, p_copy, P_vocab)

    def backward(self, dP: np.ndarray, cache: CopyCache):
        """dP (B, T, V_ext) -> (dlogits (B, T, V), dcontext, ds, dx (B, T, D), da (B, T, S))."""
        p, g = self.params, self.grads
        context, s, x, a, src_ext, p_gen, p_copy, P_vocab = cache
        V = P_vocab.shape[-1]
        # forward: P = p_gen [P_vocab, 0] + (1 - p_gen) scatter_add(a)
        dP_src = gather(dP, src_ext)  # (B, T, S) dP at each source position's token
        dP_vocab = p_gen[..., None] * dP[..., :V]  # (B, T, V)
        da = p_copy[..., None] * dP_src  # (B, T, S)
        dp_gen = (dP[..., :V] * P_vocab).sum(axis=-1) - (dP_src * a).sum(axis=-1)  # (B, T)
        # forward: P_vocab = softmax(logits)
        dlogits = softmax_backward(dP_vocab, P_vocab)  # (B, T, V)
        # forward: p_gen = sigma(z)
        dz = dp_gen * p_gen * p_copy  # (B, T)
        # forward: z = context . w_h + s . w_s + x . w_x + b_ptr
        g["w_h"] += np.einsum("btd,bt->d", context, dz)
        g["w_s"] += np.einsum("btd,bt->d", s, dz)
        g["w_x"] += np.einsum("btd,bt->d", x, dz)
        g["b_ptr"] += dz.sum()
        dz = dz[..., None]  # (B, T, 1)
        return dlogits, dz * p["w_h"], dz * p["w_s"], dz * p["w_x"], da  # (B, T, D) x3 by broadcast


# ---- the model ---------------------------------------------------------------------------------
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
    src_to_tgt : int array (src_vocab_size,), optional
        Each source token's id in the output vocabulary, or -1 for a source-only token.
        Default: the vocabularies share their first min(V_src, V_tgt) ids, as two slices of
        one tokenizer do; the source's ids beyond the output vocabulary are source-only.
    unk_id : int
        The output token fed to the decoder in place of a copied source-only token
        (default: the tokenizer's ``<unk>``).

    Parameter names: those of :class:`EncoderDecoder`, then ``copy.w_h``, ``copy.w_s``,
    ``copy.w_x``, ``copy.b_ptr`` and ``coverage.w_c``.  ``forward`` returns the mixed
    distribution P over the extended vocabulary (probabilities, not logits): train it with
    :func:`copy_nll` (and :func:`coverage_loss`), decode it with :mod:`minitf.decoding`.
    :func:`minitf.checkpoint.save_model` / ``load_model`` save and rebuild it (with its coverage
    switch, ``src_to_tgt`` and ``unk_id``) and ``minitf generate`` decodes it, printing copied ids
    as the source tokens they stand for; ``minitf train`` does not train it (its loss is
    :func:`copy_nll`, not the training loop's cross-entropy): Lesson 9 trains it with
    :func:`minitf.course.lesson09_copy.train_variant`.
    """

    def __init__(self, config: ModelConfig, *, coverage: bool = True, src_to_tgt=None,
                 unk_id: int = CharTokenizer.unk_id):
        c = config
        check_int("n_decoder_layers", c.n_decoder_layers, low=1, hint="the copy attention is the last decoder block's")
        super().__init__(c)
        self.unk_id = check_int("unk_id", unk_id, 0, c.tgt_vocab_size - 1, hint="a target token id")
        if src_to_tgt is None:
            ids = np.arange(c.src_vocab_size)
            src_to_tgt = np.where(ids < c.tgt_vocab_size, ids, -1)
        self.src_to_tgt = check_token_ids("src_to_tgt", src_to_tgt, c.tgt_vocab_size, allow=(-1,))
        if self.src_to_tgt.shape != (c.src_vocab_size,):
            raise ValueError(f"src_to_tgt: expected shape (src_vocab_size,) = ({c.src_vocab_size},), "
                             f"got {self.src_to_tgt.shape}")
        self.tgt_to_src = np.full(c.tgt_vocab_size, -1, dtype=np.int64)  # (V,) the inverse, -1: target-only
        known = self.src_to_tgt >= 0
        self.tgt_to_src[self.src_to_tgt[known][::-1]] = np.flatnonzero(known)[::-1]  # the first source id wins
        rng = np.random.default_rng([c.seed, 1])  # a stream of its own: the transformer's draws are unchanged
        self.copy = CopyHead(c.d_model, rng=rng, dtype=self.dtype)
        self.coverage = Coverage(c.n_heads, dtype=self.dtype) if coverage else None

    # ---- the extended vocabulary ------------------------------------------------------------
    def extend_source(self, src_ids) -> ExtendedSource:
        """src_ids (B, S) -> :class:`ExtendedSource`: each source-only token (``src_to_tgt`` -1,
        not padding) gets the id V + j, j numbering the example's distinct ones in order of
        first occurrence; every other token its output-vocabulary id."""
        c = self.config
        src_ids = self._check_ids("src_ids", src_ids, c.src_vocab_size)
        B, S = src_ids.shape
        V = c.tgt_vocab_size
        tgt = self.src_to_tgt[src_ids]  # (B, S)
        oov = (tgt < 0) & (src_ids != c.pad_id)  # (B, S) source-only tokens
        first = np.argmax(src_ids[:, :, None] == src_ids[:, None, :], axis=2)  # (B, S) first position of each token
        is_first = oov & (first == np.arange(S))  # (B, S)
        rank = np.cumsum(is_first, axis=1) - 1  # (B, S) j, at first occurrences
        j = np.take_along_axis(rank, first, axis=1)  # (B, S) j of every occurrence
        ids = np.where(oov, V + j, np.where(src_ids == c.pad_id, c.pad_id, tgt))  # (B, S)
        n_oov = int(is_first.sum(axis=1).max(initial=0))
        table = np.full((B, n_oov), -1, dtype=np.int64)  # (B, n_oov)
        rows, cols = np.nonzero(is_first)
        table[rows, rank[rows, cols]] = src_ids[rows, cols]
        return ExtendedSource(ids.astype(np.int64), table, V + n_oov)

    def to_extended(self, token_ids, source: ExtendedSource, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
        """Target tokens given as *source-vocabulary* ids (B, L) -> extended ids (B, L): the
        output-vocabulary id if there is one, else V + j if it is the example's j-th
        source-only token, else ``unk_id``.  ``ignore_index`` stays (labels)."""
        c = self.config
        ids = np.asarray(token_ids)
        keep = ids != ignore_index
        ids = check_token_ids("token_ids", np.where(keep, ids, 0), c.src_vocab_size)
        if ids.shape[0] != source.oov.shape[0]:
            raise ValueError(f"token_ids: expected B={source.oov.shape[0]} rows (the sources'), got {ids.shape[0]}")
        tgt = self.src_to_tgt[ids]  # (B, L)
        match = ids[:, :, None] == source.oov[:, None, :]  # (B, L, n_oov)
        j = np.argmax(match, axis=-1) if match.shape[-1] else np.zeros(ids.shape, dtype=np.int64)  # (B, L) no oov: none
        copied = np.where(match.any(axis=-1), c.tgt_vocab_size + j, self.unk_id)  # (B, L)
        return np.where(keep, np.where(tgt >= 0, tgt, copied), ignore_index)

    def from_extended(self, ext_ids, source: ExtendedSource) -> np.ndarray:
        """Extended ids (N, L), N = B * R (R consecutive rows per example, as decoding returns
        them) -> source-vocabulary ids (N, L): a copied id V + j is the source token it stands
        for; an output id its source id (``tgt_to_src``, -1 for a target-only token)."""
        V = self.config.tgt_vocab_size
        ext = check_token_ids("ext_ids", ext_ids, source.vocab_size)
        B = source.oov.shape[0]
        if ext.ndim != 2 or ext.shape[0] % B:
            raise ValueError(f"ext_ids: expected shape (B * R, L) with B={B}, got {ext.shape}")
        oov = np.repeat(source.oov, ext.shape[0] // B, axis=0)  # (N, n_oov)
        from_oov = np.take_along_axis(oov, np.clip(ext - V, 0, max(oov.shape[1] - 1, 0)), axis=1) \
            if oov.shape[1] else np.full(ext.shape, -1)
        return np.where(ext >= V, from_oov, self.tgt_to_src[np.minimum(ext, V - 1)])

    def decoder_input(self, ext_ids: np.ndarray) -> np.ndarray:
        """Extended ids -> what the decoder reads: a copied id (>= V) becomes ``unk_id``."""
        return np.where(ext_ids >= self.config.tgt_vocab_size, self.unk_id, ext_ids)

    # ---- forward ------------------------------------------------------------------------------
    def decode(self, decoder_input_ids, H_enc: np.ndarray, src_mask: np.ndarray, self_mask=None, *,
               source: ExtendedSource):
        """decoder_input_ids (B, T) (extended ids allowed: copies are read as ``<unk>``), H_enc
        (B, S, D), src_mask (B, 1, 1, S), the sources in the extended vocabulary -> P (B, T,
        V_ext), cache.  The transformer's decoder, coverage in the last block's cross-attention,
        then the copy head."""
        c = self.config
        ids = check_token_ids("decoder_input_ids", decoder_input_ids, source.vocab_size)
        ids = self._check_ids("decoder_input_ids", self.decoder_input(ids), c.tgt_vocab_size)
        check_shape("H_enc", H_enc, (ids.shape[0], None, c.d_model), f"B={ids.shape[0]}, S, d_model={c.d_model}")
        check_shape("source.ids", source.ids, H_enc.shape[:2], "(B, S): the sources of H_enc")
        T = ids.shape[1]
        if self_mask is None and c.causal:
            self_mask = causal_mask(T, dtype=self.dtype)  # (T, T)
        x0, c_in = input_forward(ids, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)  # (B, T, D)
        x, layer_caches = x0, []
        last = len(self.decoder_layers) - 1
        for l, layer in enumerate(self.decoder_layers):
            x, c_l = layer.forward(x, H_enc, self_mask, src_mask, cross_weights=self.coverage if l == last else None)
            layer_caches.append(c_l)
        H_dec, c_norm = self.decoder_norm.forward(x)  # (B, T, D)
        logits = affine_forward(H_dec, head_weight(self), None)  # (B, T, D) @ (D, V) -> (B, T, V)
        a = layer_caches[last].cross_attn.f.attn.A.mean(axis=1)  # (B, H, T, S) -> (B, T, S) the copy attention
        context = a @ H_enc  # (B, T, S) @ (B, S, D) -> (B, T, D)  h*_t
        P, c_copy = self.copy.forward(logits, context, H_dec, x0, a, source.ids, source.vocab_size)  # (B, T, V_ext)
        return P, PointerGeneratorDecoderCache(DecoderCache(c_in, layer_caches, c_norm, H_dec), x0, c_copy, H_enc)

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

    # ---- backward -----------------------------------------------------------------------------
    def backward(self, dP: np.ndarray, cache: PointerGeneratorCache, da_coverage=None) -> PointerGeneratorGrads:
        """dP (B, T, V_ext) from :func:`copy_nll`; ``da_coverage`` (B, T, S), optional, from
        :func:`coverage_loss`.  Accumulates every parameter's gradient into ``grads``."""
        c = self.config
        enc, dec = cache
        stack, H_enc = dec.stack, dec.H_enc
        a = dec.copy.a  # (B, T, S)
        last = len(self.decoder_layers) - 1
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
        H = c.n_heads
        dA = np.broadcast_to(da[:, None] / H, (da.shape[0], H) + da.shape[1:])  # (B, H, T, S)
        # 5. the head.  forward: logits = H_dec @ W_U;  H_dec is also p_gen's s_t
        dH_dec = head_backward(dlogits, stack.H_dec, self) + ds  # (B, T, D)
        # 6. the decoder's final norm
        dx = self.decoder_norm.backward(dH_dec, stack.norm)  # (B, T, D)
        # 7. decoder blocks, last to first; the last one's cross-attention weights also get dA
        dH_enc = dH_enc_context.copy()  # (B, S, D) the running sum
        shares = [None] * len(self.decoder_layers)
        for l in reversed(range(len(self.decoder_layers))):
            hooks = (dA, self.coverage) if l == last else (None, None)
            dx, shares[l] = self.decoder_layers[l].backward(dx, stack.layers[l], *hooks)  # (B, T, D), (B, S, D)
            dH_enc += shares[l]
        # 8. the target embedding; x_t was also p_gen's input
        input_backward(dx + dx0, stack.input, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)
        # 9. the encoder.  forward: H_enc = encoder_norm(x)
        dx = self.encoder_norm.backward(dH_enc, enc.norm)  # (B, S, D)
        for l in reversed(range(len(self.encoder_layers))):
            dx = self.encoder_layers[l].backward(dx, enc.layers[l])  # (B, S, D)
        input_backward(dx, enc.input, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        return PointerGeneratorGrads(dH_dec, dH_enc, shares, dH_enc_context, da)

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


# ---- the losses --------------------------------------------------------------------------------
def copy_nll(P: np.ndarray, labels, ignore_index: int = IGNORE_INDEX):
    """The negative log-likelihood of the mixture: P (B, T, V_ext), labels (B, T) extended ids
    (``ignore_index`` on padding) -> (loss, dP).

        L = -(1 / n_real) sum_t log P_t(y_t)          dL/dP_t(y_t) = -1 / (n_real P_t(y_t))

    (There is no softmax to fuse with: P is a mixture.)  A label must have probability > 0:
    a copied id V + j must belong to a token of the example's own source."""
    check_shape("labels", labels, P.shape[:-1], f"P is {P.shape}: one label per position")
    labels = check_token_ids("labels", labels, P.shape[-1], allow=(ignore_index,))
    real = labels != ignore_index  # (B, T)
    n_real = int(real.sum())
    if n_real == 0:
        raise ValueError(f"labels: every label is ignore_index={ignore_index}; expected at least one real target")
    y = np.where(real, labels, 0)[..., None]  # (B, T, 1)
    p_y = np.take_along_axis(P, y, axis=-1)[..., 0]  # (B, T)
    if not (p_y[real] > 0).all():
        b, t = np.argwhere(real & ~(p_y > 0))[0]
        raise ValueError(f"labels: position ({b}, {t}) has label {labels[b, t]}, which has probability 0 (a copied "
                         f"id must be a token of the example's own source: PointerGenerator.to_extended)")
    p_y = np.where(real, p_y, 1.0)  # ignored positions: log 1 = 0, and no division by 0
    loss = float(-(np.log(p_y) * real).sum() / n_real)
    dP = np.zeros_like(P)  # (B, T, V_ext)
    np.put_along_axis(dP, y, np.where(real, -1.0 / (n_real * p_y), 0.0)[..., None].astype(P.dtype), axis=-1)
    return loss, dP


def coverage_loss(a: np.ndarray, labels, weight: float = 1.0, ignore_index: int = IGNORE_INDEX):
    """See et al.'s coverage loss: a (B, T, S) the copy attention, labels (B, T) (for the real
    positions) -> (loss, da).

        L_cov = (weight / n_real) sum_{t real} sum_i min(a_t,i, c_t,i),   c_t = sum_{t' < t} a_t'

    dL/da reaches a_t twice: where a_t,i < c_t,i through the min directly, and through every
    later c (ties go to c)."""
    check_number("weight", weight, 0)
    check_shape("labels", labels, a.shape[:2], f"a is {a.shape}: (B, T), one label per position")
    real = np.asarray(labels) != ignore_index  # (B, T)
    n_real = int(real.sum())
    if n_real == 0:
        raise ValueError(f"labels: every label is ignore_index={ignore_index}; expected at least one real target")
    c = coverage_vector(a)  # (B, T, S)
    loss = float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / n_real)
    g = (weight * real / n_real)[..., None]  # (B, T, 1)
    # forward: m = min(a, c)
    da = g * (a < c)  # (B, T, S)
    dc = g * (a >= c)
    # forward: c_t = sum_{t' < t} a_t'   -> a_t' receives every later dc_t
    da += np.cumsum(dc[:, ::-1], axis=1)[:, ::-1] - dc  # (B, T, S) sum_{t > t'} dc_t
    return loss, da.astype(a.dtype)


def mixture_log_probs(P: np.ndarray) -> np.ndarray:
    """log P, -inf where P = 0 (an extended id no token of this example's source carries):
    what the decoders rank by (the log-softmax of a log-distribution is itself)."""
    with np.errstate(divide="ignore"):
        return np.log(P)

