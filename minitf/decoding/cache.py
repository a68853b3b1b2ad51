"""Inference: the frozen encoder-decoder turned loose (Lesson 9, sections 1-4).

**Encode once, decode many.**  The encoder reads the source once per example; the decoder
then runs one step per generated token.  At step t it needs, in every decoder layer,

* the self-attention keys and values of positions 0..t.  Positions 0..t-1 have not changed
  since they were computed (the causal mask keeps them from seeing anything later), so
  they are kept in a **self-attention cache** that grows by one position per step;
* the cross-attention keys and values, a function of H_enc alone.  They are computed once
  per example (:func:`init_cache`) and reused at every step: the **cross-attention cache**.

With both caches a step feeds only the newest token and costs the same at t = 16 as at
t = 256 (up to the attention over the cache), where re-running the decoder on the whole
prefix costs O(t) per step.  The logits are the same either way (tests/test_decoding.py).

Shapes: B examples, G rows per example (beams, or samples), N = B * G rows,
S source length, T_new new positions in a step, D = d_model, H heads, Dh = D / H,
V target vocabulary, T_max the longest generation (the cache's capacity).

Cache layout, per decoder layer (:class:`LayerKV`)::

    K_self, V_self    (N, H, T_max, Dh)  preallocated; step t writes position t in place
    K_cross, V_cross  (B, H, S, Dh)      from H_enc, once; the G rows of an example share it

The decoders are free functions over a model, batched, stopping at ``<eos>`` or after
``max_new_tokens``: :func:`greedy_search`, :func:`sample` (temperature -> top-k -> top-p,
in Hugging Face's order and with its semantics) and :func:`beam_search` (length penalty,
early stopping, several finished hypotheses per input).  All return a
:class:`GenerationOutput`; with ``trace=True`` it also holds one :class:`TraceStep` per
(step, example): the beams, the candidates, their scores and what became of them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .attention import merge_heads, scaled_dot_product_attention
from .blocks import sublayer_forward
from .checkpoint import copy_params_into, load_checkpoint
from .checks import check_positive_int, check_token_ids
from .config import ModelConfig
from .data import CharTokenizer
from .layers.linear import affine_forward
from .layers.softmax import log_softmax, softmax
from .masks import causal_mask
from .models.common import head_weight, input_forward
from .models.encoder_decoder import EncoderDecoder

__all__ = [
    "LayerKV", "KVCache", "init_cache", "start_decoding", "decode_step", "reorder_cache",
    "top_k_filter", "top_p_filter", "warp_logits", "banned_ngram_tokens", "length_normalized_score",
    "Hypothesis", "Candidate", "TraceStep", "GenerationOutput",
    "greedy_search", "sample", "beam_search", "format_trace", "load_model",
]

START_ID = CharTokenizer.bos_id  # the decoder's first input, <bos> (as in data.shift_right)
EOS_ID = CharTokenizer.eos_id  # decoding stops at <eos>
TRACE_CANDIDATES = 5  # greedy / sampling traces list this many of the likeliest tokens per row


# =====================================================================================
# 1. The two caches
# =====================================================================================
class LayerKV(NamedTuple):
    """One decoder layer's keys and values for incremental decoding."""
    K_self: np.ndarray  # (N, H, T_max, Dh) positions [0, length) hold the prefix; the rest is scratch
    V_self: np.ndarray  # (N, H, T_max, Dh)
    K_cross: np.ndarray  # (B, H, S, Dh) = split_heads(H_enc W_k + b_k), computed once per example
    V_cross: np.ndarray  # (B, H, S, Dh) = split_heads(H_enc W_v + b_v)


class KVCache(NamedTuple):
    """Everything a decoding step needs besides the model and the newest tokens.

    The self-attention buffers are preallocated to the capacity and written in place, so
    a step costs the same whatever t.  A ``KVCache`` is a view of those buffers at one
    ``length``: :func:`decode_step` writes positions ``length..length+T_new-1`` and returns
    the cache with the longer length; positions at or past ``length`` are scratch.
    """
    layers: tuple  # one LayerKV per decoder layer
    src_mask: np.ndarray  # (B, 1, 1, S) source padding, for every cross-attention
    length: int  # t: how many decoder positions are cached
    group_size: int  # G: rows per example (num_beams, or samples per input); N = B * G

    @property
    def capacity(self) -> int:
        """T_max, the number of positions the self-attention buffers hold."""
        return self.layers[0].K_self.shape[2] if self.layers else 0

    @property
    def batch_rows(self) -> int:
        """N = B * G, the rows being decoded."""
        return self.src_mask.shape[0] * self.group_size

    def nbytes(self) -> dict:
        """Bytes of the two caches (all layers): self-attention allocated and in use, cross-attention."""
        self_alloc = sum(kv.K_self.nbytes + kv.V_self.nbytes for kv in self.layers)
        capacity = max(self.capacity, 1)
        return {
            "self_attention_allocated": int(self_alloc),
            "self_attention_used": int(self_alloc * self.length // capacity),
            "cross_attention": int(sum(kv.K_cross.nbytes + kv.V_cross.nbytes for kv in self.layers)),
        }


def _check_model(model) -> None:
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model: expected a minitf EncoderDecoder, got {type(model).__name__}")


def _check_eval(model) -> None:
    if model.training and model.config.dropout > 0:
        raise ValueError("model: expected eval mode for decoding (dropout is active in training "
                         "mode); call model.eval() first")


def _check_cache_fits(model, cache: KVCache) -> None:
    """A cache made for another model would be read wrongly (or cut short by zip): refuse it."""
    c = model.config
    got = (len(cache.layers), cache.layers[0].K_self.shape[1], cache.layers[0].K_self.shape[3]) if cache.layers \
        else (0, c.n_heads, c.d_head)  # no layers: nothing else to compare
    if got != (c.n_decoder_layers, c.n_heads, c.d_head):
        raise ValueError(f"cache: expected one made for this model ({c.n_decoder_layers} decoder layers, "
                         f"{c.n_heads} heads of size {c.d_head}), got {got[0]} layers, {got[1]} heads of size {got[2]}")


def init_cache(model: EncoderDecoder, H_enc: np.ndarray, src_mask: np.ndarray, *,
               group_size: int = 1, max_len: int | None = None) -> KVCache:
    """Empty self-attention caches and full cross-attention caches for ``H_enc``.

    Parameters
    ----------
    model : EncoderDecoder
        In eval mode (dropout would make decoding random).
    H_enc : array (B, S, D)
        The encoder output, from ``model.encode(src_ids)``.
    src_mask : array (B, 1, 1, S)
        ``model.source_mask(src_ids)``.
    group_size : int
        G, the rows decoded per example (beams or samples): N = B * G rows, example b
        owning rows ``b*G .. b*G + G-1``.  The cross-attention K, V stay (B, H, S, Dh):
        they are computed once per example and shared by its G rows, never copied.
    max_len : int, optional
        T_max, the capacity of the self-attention cache; defaults to ``model.config.max_len``.

    Returns
    -------
    KVCache
        ``length`` 0.
    """
    _check_model(model)
    c = model.config
    _check_eval(model)
    G = check_positive_int("group_size", group_size)
    T_max = c.max_len if max_len is None else check_positive_int("max_len", max_len)
    if T_max > c.max_len:
        raise ValueError(f"max_len: expected at most the model's max_len={c.max_len}, got {T_max}")
    H_enc = np.asarray(H_enc)
    if H_enc.ndim != 3 or H_enc.shape[2] != c.d_model:
        raise ValueError(f"H_enc: expected shape (B, S, d_model={c.d_model}), got {H_enc.shape}")
    B, S, _ = H_enc.shape
    if np.shape(src_mask) != (B, 1, 1, S):
        raise ValueError(f"src_mask: expected shape (B, 1, 1, S) = {(B, 1, 1, S)}, got {np.shape(src_mask)}")
    H, Dh = c.n_heads, c.d_head
    layers = []
    for layer in model.decoder_layers:
        K_cross, V_cross = layer.cross_attn.project_kv(H_enc)  # (B, H, S, Dh) each: once per example
        layers.append(LayerKV(
            K_self=np.zeros((B * G, H, T_max, Dh), dtype=model.dtype),  # (N, H, T_max, Dh)
            V_self=np.zeros((B * G, H, T_max, Dh), dtype=model.dtype),
            # contiguous once here, so no step has to copy a strided view inside matmul
            K_cross=np.ascontiguousarray(K_cross),  # (B, H, S, Dh)
            V_cross=np.ascontiguousarray(V_cross),
        ))
    return KVCache(tuple(layers), np.asarray(src_mask, dtype=model.dtype), 0, G)


def start_decoding(model: EncoderDecoder, src_ids, *, group_size: int = 1,
                   max_len: int | None = None) -> KVCache:
    """Run the encoder once on ``src_ids`` (B, S) and return a fresh :class:`KVCache`."""
    _check_model(model)
    H_enc, _ = model.encode(src_ids)  # (B, S, D); the backward cache is not needed
    return init_cache(model, H_enc, model.source_mask(np.asarray(src_ids)), group_size=group_size, max_len=max_len)


# ---- one decoding step, reusing the model's own layers ----------------------------------------
def _self_attention_step(attn, h: np.ndarray, kv: LayerKV, t: int, mask):
    """Causal self-attention of the new positions over the cached prefix.

    h (N, T_new, D) -> (y (N, T_new, D), None).  Writes the new keys and values into the
    cache at positions t .. t+T_new-1, then attends over positions 0 .. t+T_new-1.
    """
    T_new = h.shape[1]
    Q = attn.project_q(h)  # (N, H, T_new, Dh)
    K_new, V_new = attn.project_kv(h)  # (N, H, T_new, Dh) each
    kv.K_self[:, :, t:t + T_new] = K_new  # in place: no reallocation, no concatenate
    kv.V_self[:, :, t:t + T_new] = V_new
    K = kv.K_self[:, :, :t + T_new]  # (N, H, t+T_new, Dh) a view of the filled part
    V = kv.V_self[:, :, :t + T_new]  # (N, H, t+T_new, Dh)
    heads, _ = scaled_dot_product_attention(Q, K, V, mask)  # (N, H, T_new, Dh)
    y = affine_forward(merge_heads(heads), attn.params["W_o"], attn.params["b_o"])  # (N, T_new, D)
    return y, None


def _cross_attention_step(attn, h: np.ndarray, kv: LayerKV, src_mask: np.ndarray):
    """Cross-attention of the new positions over the cached K, V of H_enc.

    h (N, T_new, D), N = B * G -> (y (N, T_new, D), None).  Cross-attention has no causal
    mask, so every query is independent: the G rows of example b are simply G * T_new
    queries against example b's keys.  Reshaping (N, T_new, D) -> (B, G*T_new, D) lets all
    beams share one (B, H, S, Dh) copy of K and V.
    """
    N, T_new, D = h.shape
    B = kv.K_cross.shape[0]
    q_in = h.reshape(B, (N // B) * T_new, D)  # (B, G*T_new, D) rows of an example are contiguous
    Q = attn.project_q(q_in)  # (B, H, G*T_new, Dh)
    heads, _ = scaled_dot_product_attention(Q, kv.K_cross, kv.V_cross, src_mask)  # (B, H, G*T_new, Dh)
    y = affine_forward(merge_heads(heads), attn.params["W_o"], attn.params["b_o"])  # (B, G*T_new, D)
    return y.reshape(N, T_new, D), None  # (N, T_new, D)


def decode_step(model: EncoderDecoder, decoder_input_ids, cache: KVCache):
    """Feed the newest token(s) of every row; get their logits and the advanced cache.

    The same maths as ``model.decode`` on the whole prefix, computed with the model's own
    layers (projections, LayerNorm, feed-forward, residual sub-layers, head) but attending
    over the cache instead of recomputing it.  No backward caches are kept.

    Parameters
    ----------
    model : EncoderDecoder
        In eval mode.
    decoder_input_ids : int array (N, T_new)
        The tokens at positions ``cache.length .. cache.length + T_new - 1``; usually
        T_new = 1 (the token chosen at the previous step).  T_new > 1 feeds a known prefix
        in one call.
    cache : KVCache
        From :func:`init_cache` or a previous step.  Its self-attention buffers are written
        in place.

    Returns
    -------
    logits : array (N, T_new, V)
    cache : KVCache
        ``length`` advanced by T_new (same buffers).
    """
    c = model.config
    _check_eval(model)
    _check_cache_fits(model, cache)
    ids = check_token_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
    N, t = cache.batch_rows, cache.length
    if ids.ndim != 2 or ids.shape[0] != N or ids.shape[1] < 1:
        raise ValueError(f"decoder_input_ids: expected shape (N={N}, T_new >= 1) for this cache, got {ids.shape}")
    T_new = ids.shape[1]
    if t + T_new > cache.capacity:
        raise ValueError(f"decoder_input_ids: the cache holds {cache.capacity} positions; {t} are used, "
                         f"so at most {cache.capacity - t} new ones fit, got {T_new}")
    # x = W_E[ids] sqrt(D) + P[t .. t+T_new-1]: the positions continue where the cache ends
    x, _ = input_forward(ids, model.tgt_embed, model.tgt_pos, model.tgt_dropout, c.scale_embeddings,
                         offset=t)  # (N, T_new, D)
    # A single new query may see every cached key: no mask.  Several new queries must not
    # see each other's future: causal_mask with the offset t.
    self_mask = None if T_new == 1 else causal_mask(T_new, t + T_new, offset=t, dtype=model.dtype)  # (T_new, t+T_new)
    for layer, kv in zip(model.decoder_layers, cache.layers):
        # the block's three residual sub-layers, exactly as DecoderBlock.forward runs them
        x, _ = sublayer_forward(x, lambda h: _self_attention_step(layer.self_attn, h, kv, t, self_mask),
                                layer.norm1, layer.dropout1, layer.norm_first)  # (N, T_new, D)
        x, _ = sublayer_forward(x, lambda h: _cross_attention_step(layer.cross_attn, h, kv, cache.src_mask),
                                layer.norm2, layer.dropout2, layer.norm_first)  # (N, T_new, D)
        x, _ = sublayer_forward(x, layer.ff.forward, layer.norm3, layer.dropout3, layer.norm_first)
    H_dec, _ = model.decoder_norm.forward(x)  # (N, T_new, D)
    logits = H_dec @ head_weight(model)  # (N, T_new, D) @ (D, V) -> (N, T_new, V)
    return logits, cache._replace(length=t + T_new)


def reorder_cache(cache: KVCache, beam_idx) -> KVCache:
    """Make row n continue the prefix of row ``beam_idx[n]`` (beam search), in place.

    Only the self-attention K, V move (positions 0 .. length-1).  The cross-attention
    K, V belong to the example, not the beam, so nothing is done to them; hence every
    row must keep to its own example's group.

    Parameters
    ----------
    beam_idx : int array (N,)
        For each new row, the old row it continues; ``beam_idx[n] // G == n // G``.

    Returns
    -------
    KVCache
        The same cache (buffers updated in place).
    """
    N, G, t = cache.batch_rows, cache.group_size, cache.length
    beam_idx = np.asarray(beam_idx)
    if beam_idx.shape != (N,) or not np.issubdtype(beam_idx.dtype, np.integer):
        raise ValueError(f"beam_idx: expected an integer array of shape (N,) = ({N},), "
                         f"got {beam_idx.dtype} {beam_idx.shape}")
    rows = np.arange(N)
    if ((beam_idx < 0) | (beam_idx >= N)).any() or (beam_idx // G != rows // G).any():
        bad = int(np.argmax((beam_idx < 0) | (beam_idx >= N) | (beam_idx // G != rows // G)))
        raise ValueError(f"beam_idx: expected each row to continue a row of its own example "
                         f"(rows {bad // G * G}..{bad // G * G + G - 1} for row {bad}), got {int(beam_idx[bad])}")
    for kv in cache.layers:
        # fancy indexing copies first, so writing back into the same buffer is safe
        kv.K_self[:, :, :t] = kv.K_self[beam_idx, :, :t]  # (N, H, t, Dh)
        kv.V_self[:, :, :t] = kv.V_self[beam_idx, :, :t]
    return cache


# =====================================================================================
# 2. Logit processors: no-repeat n-grams, temperature, top-k, top-p
# =====================================================================================
def banned_ngram_tokens(prefix, n: int, vocab_size: int) -> np.ndarray:
    """Tokens that would repeat an n-gram already in the prefix (Hugging Face's
    ``NoRepeatNGramLogitsProcessor``).

    prefix (N, L) int (the decoder inputs so far, start token included) -> banned (N, V) bool.
    A token is banned when the last n-1 tokens followed by it form an n-gram that occurs
    earlier in the prefix.  ``n = 0`` bans nothing.
    """
    prefix = np.asarray(prefix)
    N, L = prefix.shape
    banned = np.zeros((N, vocab_size), dtype=bool)  # (N, V)
    if n == 0 or L < n:
        return banned
    windows = np.lib.stride_tricks.sliding_window_view(prefix, n, axis=1)  # (N, L-n+1, n) every n-gram
    last = prefix[:, None, L - n + 1:]  # (N, 1, n-1) what the next n-gram would start with
    match = (windows[:, :, :-1] == last).all(axis=-1)  # (N, L-n+1) n-grams starting that way
    rows, cols = np.nonzero(match)
    banned[rows, windows[rows, cols, -1]] = True  # their last tokens may not come again
    return banned


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest logits of each row, and every logit tied with the k-th; the rest
    become -inf (Hugging Face's ``TopKLogitsWarper``).  ``k = 0`` or ``k >= V`` keeps all.

    logits (..., V) -> (..., V), a new array.
    """
    _check_top_k("k", k)
    logits = np.array(logits, dtype=np.result_type(logits, np.float32))
    V = logits.shape[-1]
    if k == 0 or k >= V:
        return logits
    kth = np.partition(logits, V - k, axis=-1)[..., V - k:V - k + 1]  # (..., 1) the k-th largest
    logits[logits < kth] = -np.inf  # ties with the k-th value stay
    return logits


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    """Nucleus filtering: keep the smallest set of most likely tokens whose probability
    mass reaches p; the rest become -inf (Hugging Face's ``TopPLogitsWarper``, computed
    its way).

    Sort the tokens from least to most likely and remove each one whose mass, together
    with every token below it, is still at most 1 - p: what stays has mass >= p, and
    without its least likely member it would fall short.  The most likely token always
    stays; ``p = 1`` keeps every token.  The sort is stable, so among equal logits the
    lower id goes first (Hugging Face's ``torch.sort`` is not stable and leaves that
    order unspecified; everything else is the same computation).

    logits (..., V) -> (..., V), a new array.
    """
    _check_top_p("p", p)
    logits = np.array(logits, dtype=np.result_type(logits, np.float32))
    if p >= 1.0:
        return logits
    order = np.argsort(logits, axis=-1, kind="stable")  # (..., V) least likely first
    cum = np.cumsum(softmax(np.take_along_axis(logits, order, axis=-1)), axis=-1)  # (..., V) mass up to each
    remove_sorted = cum <= 1.0 - p  # the tokens above them already hold mass >= p
    remove_sorted[..., -1] = False  # the most likely token always stays
    remove = np.empty_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)  # back to vocabulary order
    logits[remove] = -np.inf
    return logits


def warp_logits(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
    """Temperature, then top-k, then top-p, in Hugging Face's order: logits (..., V) -> (..., V)
    with -inf on removed tokens.  ``softmax`` of the result is the sampling distribution."""
    _check_sampling_args(temperature, top_k, top_p)
    out = np.asarray(logits) / temperature  # z / T: T < 1 sharpens, T > 1 flattens
    out = top_k_filter(out, top_k)
    return top_p_filter(out, top_p)


def length_normalized_score(log_prob, length, length_penalty: float = 1.0, style: str = "hf"):
    """The score beam search ranks finished hypotheses by.

    ``"hf"``:   log_prob / length ** length_penalty   (Hugging Face's ``length_penalty``)
    ``"gnmt"``: log_prob / ((5 + length) / 6) ** length_penalty   (Wu et al., 2016; alpha)

    ``length`` counts the generated tokens, the final ``<eos>`` included, the start token
    not.  ``length_penalty`` 0 ranks by the plain sum of log-probs (short outputs win);
    larger values favour longer outputs.
    """
    length = np.asarray(length, dtype=np.float64)
    if style == "hf":
        return log_prob / length ** length_penalty
    if style == "gnmt":
        return log_prob / ((5.0 + length) / 6.0) ** length_penalty
    raise ValueError(f"length_penalty_style: expected 'hf' or 'gnmt', got {style!r}")


# =====================================================================================
# 3. Results and traces
# =====================================================================================
@dataclass
class Hypothesis:
    """One output sequence."""
    tokens: tuple  # generated ids: no start token; ends with <eos> when finished
    log_prob: float  # sum of the model's log-probabilities of those tokens
    score: float  # what the decoder ranked by (beam search: length-normalised; else = log_prob)
    finished: bool  # ended with <eos> (else stopped by max_new_tokens)

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass
class Candidate:
    """One extension considered at a step: a beam (row) followed by a token."""
    beam: int  # which beam (row of this example) it extends
    token: int
    log_prob: float  # log-probability of the token in the distribution the decoder chose from
    score: float  # cumulative sum of the model's log-probs of the extended sequence
    status: str  # "kept" (continues), "finished" (ended with <eos>), or "dropped"


@dataclass
class TraceStep:
    """What one decoding step did for one example."""
    step: int  # t: the index of the token being chosen (0 = the first generated token)
    example: int  # b: which input of the batch
    beams: list  # the live beams (rows) before this step: tuples of generated ids
    beam_scores: list  # their cumulative log-probs
    beam_rows: list  # which row (0..G-1) each listed beam occupies
    candidates: list  # Candidate objects, best first
    finished: list = field(default_factory=list)  # beam search: the finished Hypothesis pool after this step


@dataclass
class GenerationOutput:
    """What every decoder returns.  R = outputs per input; rows ``b*R .. b*R+R-1`` belong to input b."""
    sequences: np.ndarray  # (B*R, T_out) int64 generated ids, no start token; pad after the end
    lengths: np.ndarray  # (B*R,) generated tokens per row, <eos> included
    log_probs: np.ndarray  # (B*R,) sum of the model's log-probs of each row's tokens
    scores: np.ndarray  # (B*R,) what the decoder ranks by (beam search: length-normalised)
    finished: np.ndarray  # (B*R,) True where the row ended with <eos>
    num_return: int  # R
    trace: list | None = None  # TraceStep objects, in step order, when asked for

    @property
    def batch_size(self) -> int:
        return self.sequences.shape[0] // self.num_return

    def hypotheses(self, example: int) -> list:
        """The R outputs for input ``example``, best first, as :class:`Hypothesis` objects."""
        B, R = self.batch_size, self.num_return
        if isinstance(example, bool) or not isinstance(example, (int, np.integer)) or not 0 <= example < B:
            raise ValueError(f"example: expected an index in [0, {B}), got {example!r}")
        out = []
        for r in range(example * R, example * R + R):
            if not np.isfinite(self.scores[r]):  # a slot no hypothesis filled
                continue
            n = int(self.lengths[r])
            out.append(Hypothesis(tuple(int(i) for i in self.sequences[r, :n]), float(self.log_probs[r]),
                                  float(self.scores[r]), bool(self.finished[r])))
        return out


# =====================================================================================
# 4. The decoders
# =====================================================================================
def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _check_top_k(name: str, k) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"{name}: expected a non-negative integer (0 = no top-k filtering), got {k!r}")


def _check_top_p(name: str, p) -> None:
    if not _is_number(p) or not 0 < p <= 1:
        raise ValueError(f"{name}: expected a value in (0, 1] (1 = no top-p filtering), got {p!r}")


def _check_sampling_args(temperature, top_k, top_p) -> None:
    if not _is_number(temperature) or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature: expected a positive finite number, got {temperature!r}")
    _check_top_k("top_k", top_k)
    _check_top_p("top_p", top_p)


def _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id):
    """Shared argument checks; returns (src_ids, T_max)."""
    _check_model(model)
    c = model.config
    if max_new_tokens is None:
        T_max = c.max_len
    else:
        T_max = check_positive_int("max_new_tokens", max_new_tokens)
    if T_max > c.max_len:
        raise ValueError(f"max_new_tokens: expected at most the model's max_len={c.max_len} "
                         f"(positions the decoder knows), got {T_max}")
    if isinstance(no_repeat_ngram_size, bool) or not isinstance(no_repeat_ngram_size, (int, np.integer)) \
            or no_repeat_ngram_size < 0:
        raise ValueError(f"no_repeat_ngram_size: expected a non-negative integer (0 = off), "
                         f"got {no_repeat_ngram_size!r}")
    for name, value in (("start_id", start_id), ("eos_id", eos_id)):
        if value is None and name == "eos_id":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < c.tgt_vocab_size:
            raise ValueError(f"{name}: expected a token id in [0, {c.tgt_vocab_size}), got {value!r}")
    src_ids = np.asarray(src_ids)
    if src_ids.ndim != 2 or src_ids.shape[0] < 1 or src_ids.shape[1] < 1:
        raise ValueError(f"src_ids: expected a non-empty integer array of shape (B, S), got shape {src_ids.shape}")
    return src_ids, T_max


def _as_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng: expected a np.random.Generator or a non-negative integer seed, got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng: expected a np.random.Generator or a non-negative integer seed, got {type(rng).__name__}")


def _check_not_all_banned(scores: np.ndarray, live: np.ndarray, what: str, n: int, t: int) -> None:
    """scores (M, *) after the n-gram bans, live (M,): a live row with nothing left to choose
    (n = 1 bans every token once each has been used) is an error, not a silent pad."""
    stuck = live & ~np.isfinite(scores).any(axis=-1)  # (M,)
    if stuck.any():
        raise ValueError(f"no_repeat_ngram_size: expected a size that leaves a token to choose; with n={n} every "
                         f"token is banned for {what} {int(np.argmax(stuck))} at step {t} (use a larger n or a "
                         f"smaller max_new_tokens)")


def _draw(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One token per row from probs (N, V), by inverting the CDF: vectorised over rows."""
    cdf = np.cumsum(probs, axis=-1)  # (N, V)
    u = rng.random(probs.shape[0]) * cdf[:, -1]  # (N,) uniform in [0, total mass)
    return np.argmax(cdf > u[:, None], axis=-1)  # (N,) first index whose CDF passes u (a token with p > 0)


def _trace_rows(steps, t, ids, G, alive, cum_before, model_logp, dist_logp, chosen, eos_id):
    """Greedy / sampling trace: one TraceStep per example with a live row at step t.

    A candidate's ``log_prob`` is from the distribution the token was chosen from
    (``dist_logp``: after bans, temperature, top-k, top-p); its ``score`` adds the model's
    own log-prob (``model_logp``) to the row's running sum, as ``log_probs`` does."""
    N = ids.shape[0]
    for b in range(N // G):
        rows = [n for n in range(b * G, b * G + G) if alive[n]]
        if not rows:
            continue
        cands = []
        for n in rows:
            top = [int(i) for i in np.argsort(-dist_logp[n], kind="stable")[:TRACE_CANDIDATES]
                   if np.isfinite(dist_logp[n, i])]
            if int(chosen[n]) not in top:
                top.append(int(chosen[n]))
            for tok in top:
                status = "dropped" if tok != chosen[n] else ("finished" if tok == eos_id else "kept")
                cands.append(Candidate(n - b * G, tok, float(dist_logp[n, tok]),
                                       float(cum_before[n] + model_logp[n, tok]), status))
        cands.sort(key=lambda c: -c.score)
        steps.append(TraceStep(t, b, [tuple(int(i) for i in ids[n, 1:t + 1]) for n in rows],
                               [float(cum_before[n]) for n in rows], [n - b * G for n in rows], cands))


def _generate_rows(model, src_ids, choose, *, G, T_max, no_repeat_ngram_size, start_id, eos_id,
                   use_cache, trace):
    """The loop greedy search and sampling share: one token per row per step.

    ``choose(logits (N, V)) -> (tokens (N,), dist_logits (N, V))``: the token of each row and
    the logits of the distribution it was chosen from (-inf where filtered out; the trace
    shows their log-softmax).
    """
    c = model.config
    H_enc, _ = model.encode(src_ids)  # (B, S, D), once per example
    src_mask = model.source_mask(src_ids)  # (B, 1, 1, S)
    B = H_enc.shape[0]
    N = B * G
    if use_cache:
        cache = init_cache(model, H_enc, src_mask, group_size=G, max_len=T_max)
    elif G > 1:
        H_enc, src_mask = np.repeat(H_enc, G, axis=0), np.repeat(src_mask, G, axis=0)  # (N, S, D), (N, 1, 1, S)
    ids = np.full((N, T_max + 1), c.pad_id, dtype=np.int64)  # (N, 1+T_max) decoder inputs: start, then outputs
    ids[:, 0] = start_id
    done = np.zeros(N, dtype=bool)  # (N,) rows that have emitted <eos>
    lengths = np.zeros(N, dtype=np.int64)
    log_probs = np.zeros(N)  # (N,) float64 running sums
    steps = [] if trace else None
    for t in range(T_max):
        if use_cache:
            logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # (N, 1, V): only the newest token fed
        else:
            logits, _ = model.decode(ids[:, :t + 1], H_enc, src_mask)  # (N, t+1, V): the whole prefix again
        logits = logits[:, -1].astype(np.float64)  # (N, V)
        logp = log_softmax(logits)  # (N, V) the model's distribution
        if no_repeat_ngram_size:
            logits = np.where(banned_ngram_tokens(ids[:, :t + 1], no_repeat_ngram_size, logits.shape[-1]),
                              -np.inf, logits)
            _check_not_all_banned(logits, ~done, "row", no_repeat_ngram_size, t)
        tokens, dist_logits = choose(logits)  # (N,), (N, V)
        tokens = np.where(done, c.pad_id, tokens)  # finished rows are padded
        if trace:
            _trace_rows(steps, t, ids, G, ~done, log_probs, logp, log_softmax(dist_logits), tokens, eos_id)
        log_probs += np.where(done, 0.0, logp[np.arange(N), tokens])
        lengths += ~done
        ids[:, t + 1] = tokens
        if eos_id is not None:
            done |= tokens == eos_id
        if done.all():
            break
    T_out = int(lengths.max())
    return GenerationOutput(sequences=ids[:, 1:T_out + 1].copy(), lengths=lengths, log_probs=log_probs,
                            scores=log_probs.copy(), finished=done.copy(), num_return=G, trace=steps)


def greedy_search(model: EncoderDecoder, src_ids, *, max_new_tokens: int | None = None,
                  no_repeat_ngram_size: int = 0, start_id: int = START_ID, eos_id: int | None = EOS_ID,
                  use_cache: bool = True, trace: bool = False) -> GenerationOutput:
    """The most likely next token, every step.

    Parameters
    ----------
    model : EncoderDecoder
        Put in eval mode while decoding (its mode is restored afterwards).
    src_ids : int array (B, S)
        Sources, right-padded with ``model.config.pad_id``.
    max_new_tokens : int, optional
        Stop after this many tokens (default: the model's ``max_len``).
    no_repeat_ngram_size : int
        n > 0: never repeat an n-gram (see :func:`banned_ngram_tokens`).
    start_id, eos_id : int
        The first decoder input and the token that ends a row (``None``: never end early).
    use_cache : bool
        False re-runs the decoder on the whole prefix at every step (the slow reference).
    trace : bool
        Record a :class:`TraceStep` per step and example.

    Returns
    -------
    GenerationOutput
        R = 1; ``scores`` = ``log_probs``.
    """
    src_ids, T_max = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id)

    def choose(logits):
        return np.argmax(logits, axis=-1), logits  # (N,), (N, V)

    with model.evaluating():
        return _generate_rows(model, src_ids, choose, G=1, T_max=T_max, no_repeat_ngram_size=no_repeat_ngram_size,
                              start_id=start_id, eos_id=eos_id, use_cache=use_cache, trace=trace)


def sample(model: EncoderDecoder, src_ids, *, rng, temperature: float = 1.0, top_k: int = 0,
           top_p: float = 1.0, num_return_sequences: int = 1, max_new_tokens: int | None = None,
           no_repeat_ngram_size: int = 0, start_id: int = START_ID, eos_id: int | None = EOS_ID,
           trace: bool = False) -> GenerationOutput:
    """Draw each next token from the model's distribution, reshaped as Hugging Face does:
    no-repeat-n-gram bans, then temperature, then top-k, then top-p (:func:`warp_logits`).

    Parameters
    ----------
    rng : np.random.Generator or int
        The only source of randomness; the same seed gives the same outputs.
    temperature : float
        > 0.  Logits are divided by it.
    top_k : int
        Keep the k most likely tokens (ties with the k-th kept); 0 = off.
    top_p : float
        In (0, 1]: keep the smallest set of most likely tokens whose mass reaches p; 1 = off.
    num_return_sequences : int
        R samples per input (the encoder still runs once per input).
    Other parameters as in :func:`greedy_search`.

    Returns
    -------
    GenerationOutput
        ``log_probs`` and ``scores`` are sums of the *model's* log-probabilities (temperature
        1, no filtering), so samples can be compared with each other and with greedy output.
    """
    _check_sampling_args(temperature, top_k, top_p)
    R = check_positive_int("num_return_sequences", num_return_sequences)
    src_ids, T_max = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id)
    rng = _as_rng(rng)

    def choose(logits):
        warped = warp_logits(logits, temperature, top_k, top_p)  # (N, V), -inf on removed tokens
        return _draw(softmax(warped), rng), warped

    with model.evaluating():
        return _generate_rows(model, src_ids, choose, G=R, T_max=T_max, no_repeat_ngram_size=no_repeat_ngram_size,
                              start_id=start_id, eos_id=eos_id, use_cache=True, trace=trace)


# ---- beam search ---------------------------------------------------------------------------
class _Pool(NamedTuple):
    """The finished hypotheses of every example: the K best so far, best first (arrays, so
    adding and ranking are vectorised over the batch).  Empty slots have score -inf."""
    tokens: np.ndarray  # (B, K, T_max) int64, pad after the end
    log_probs: np.ndarray  # (B, K)
    scores: np.ndarray  # (B, K) length-normalised; -inf = empty slot
    lengths: np.ndarray  # (B, K)
    finished: np.ndarray  # (B, K) bool

    @classmethod
    def empty(cls, B, K, T_max, pad_id):
        return cls(np.full((B, K, T_max), pad_id, dtype=np.int64), np.full((B, K), -np.inf),
                   np.full((B, K), -np.inf), np.zeros((B, K), dtype=np.int64), np.zeros((B, K), dtype=bool))

    def add(self, tokens, log_probs, scores, lengths, finished) -> "_Pool":
        """Offer M new hypotheses per example (B, M[, T_max]); keep the K best.  A candidate
        with score -inf is no candidate.  On a tie with the worst kept hypothesis the older
        one stays, as in Hugging Face; among equal scores the older also ranks first (where
        Hugging Face lists the newer first: exact ties only, the set kept is the same)."""
        K = self.scores.shape[1]
        B, M = scores.shape
        merged = _Pool(np.concatenate([self.tokens, tokens], axis=1),  # (B, K+M, T_max)
                       np.concatenate([self.log_probs, log_probs], axis=1),  # (B, K+M)
                       np.concatenate([self.scores, scores], axis=1),
                       np.concatenate([self.lengths, np.broadcast_to(lengths, (B, M))], axis=1),
                       np.concatenate([self.finished, np.broadcast_to(finished, (B, M))], axis=1))
        keep = np.argsort(-merged.scores, axis=1, kind="stable")[:, :K]  # (B, K) best first, older first on ties
        return _Pool(np.take_along_axis(merged.tokens, keep[:, :, None], axis=1),
                     *(np.take_along_axis(a, keep, axis=1) for a in merged[1:]))

    def count(self) -> np.ndarray:
        return np.isfinite(self.scores).sum(axis=1)  # (B,)


def _check_beam_args(num_beams, num_return_sequences, length_penalty, length_penalty_style, early_stopping):
    K = check_positive_int("num_beams", num_beams)
    R = check_positive_int("num_return_sequences", num_return_sequences)
    if R > K:
        raise ValueError(f"num_return_sequences: expected at most num_beams={K}, got {R}")
    if not _is_number(length_penalty) or not math.isfinite(length_penalty):
        raise ValueError(f"length_penalty: expected a finite number, got {length_penalty!r}")
    if length_penalty_style not in ("hf", "gnmt"):
        raise ValueError(f"length_penalty_style: expected 'hf' or 'gnmt', got {length_penalty_style!r}")
    if isinstance(early_stopping, (bool, np.bool_)):
        early_stopping = bool(early_stopping)  # np.True_ is not True
    elif not (isinstance(early_stopping, str) and early_stopping == "never"):
        raise ValueError(f"early_stopping: expected True, False or 'never', got {early_stopping!r}")
    return K, R, early_stopping


def beam_search(model: EncoderDecoder, src_ids, *, num_beams: int, num_return_sequences: int = 1,
                max_new_tokens: int | None = None, length_penalty: float = 1.0, length_penalty_style: str = "hf",
                early_stopping: bool | str = False, no_repeat_ngram_size: int = 0, start_id: int = START_ID,
                eos_id: int | None = EOS_ID, trace: bool = False) -> GenerationOutput:
    """Beam search as Hugging Face's ``BeamSearchScorer`` runs it, vectorised over the batch.

    Every step, for each example: extend each of its K live beams by every token, score
    each extension by the sum of the model's log-probs, and take the 2K best.  Of these, a
    candidate ending in ``<eos>`` and ranked among the first K becomes a *finished
    hypothesis*, scored by :func:`length_normalized_score`; the K best candidates that do not
    end in ``<eos>`` are the next beams.  Each example keeps its K best finished hypotheses;
    live beams still running at ``max_new_tokens`` join them at the end.

    When is an example done? ``early_stopping``:

    * ``True``: as soon as K hypotheses are finished;
    * ``False`` (Hugging Face's default): when the worst of K finished hypotheses scores at
      least the best live candidate's sum normalised by the current length (a heuristic);
    * ``"never"``: only when no live beam can still beat it (with a positive length
      penalty, the best sum normalised by ``max_new_tokens``): the canonical algorithm.

    Lengths count generated tokens with ``<eos>``, not the start token, as Hugging Face's
    ``BeamSearchScorer`` counts them (``cur_len - decoder_prompt_len``, transformers 4.45).

    Parameters
    ----------
    num_beams : int
        K >= 1.  K = 1 is greedy search.
    num_return_sequences : int
        R <= K finished hypotheses per input, best first.
    length_penalty : float
        The exponent; 0 ranks by the plain sum of log-probs.
    length_penalty_style : "hf" or "gnmt"
        log_prob / length**lp, or GNMT's log_prob / ((5 + length) / 6)**lp.
    early_stopping : True, False or "never"
    Other parameters as in :func:`greedy_search`.

    Returns
    -------
    GenerationOutput
        ``scores`` are the length-normalised scores, ``log_probs`` the plain sums.  With
        ``trace``, each TraceStep lists the 2K candidates (status "kept", "finished" or
        "dropped") and the pool of finished hypotheses after the step.
    """
    K, R, early_stopping = _check_beam_args(num_beams, num_return_sequences, length_penalty, length_penalty_style,
                                            early_stopping)
    src_ids, T_max = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id)
    c = model.config
    V = c.tgt_vocab_size

    def norm(log_prob, length):
        return length_normalized_score(log_prob, length, length_penalty, length_penalty_style)

    with model.evaluating():
        cache = start_decoding(model, src_ids, group_size=K, max_len=T_max)  # the encoder runs once, here
        B = cache.src_mask.shape[0]
        N = B * K
        ids = np.full((N, T_max + 1), c.pad_id, dtype=np.int64)  # (N, 1+T_max) each beam's decoder inputs
        ids[:, 0] = start_id
        # All K beams start as the same <bos>; only beam 0 is alive, or the first step would
        # offer K copies of every candidate.  -inf marks a dead beam.
        beam_scores = np.full((B, K), -np.inf)  # (B, K) sum of log-probs of each beam
        beam_scores[:, 0] = 0.0
        pool = _Pool.empty(B, K, T_max, c.pad_id)
        done = np.zeros(B, dtype=bool)  # (B,)
        steps = [] if trace else None
        ex = np.arange(B)[:, None]  # (B, 1)
        t = 0
        for t in range(T_max):
            logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # (N, 1, V)
            logp = log_softmax(logits[:, -1].astype(np.float64))  # (N, V) the model's log-probs
            if no_repeat_ngram_size:
                logp = np.where(banned_ngram_tokens(ids[:, :t + 1], no_repeat_ngram_size, V), -np.inf, logp)
            cand = (beam_scores.reshape(N, 1) + logp).reshape(B, K * V)  # (B, K*V) every extension's sum
            if no_repeat_ngram_size:
                _check_not_all_banned(cand, ~done, "example", no_repeat_ngram_size, t)
            top = np.argsort(-cand, axis=1, kind="stable")[:, :2 * K]  # (B, 2K) the 2K best, best first
            top_scores = np.take_along_axis(cand, top, axis=1)  # (B, 2K)
            top_beam, top_token = np.divmod(top, V)  # (B, 2K) which beam, which token
            is_eos = top_token == eos_id if eos_id is not None else np.zeros_like(top, dtype=bool)
            alive = np.isfinite(top_scores)

            # 1. <eos> among the K best (not the 2K: Hugging Face's rank < num_beams) ends a
            #    hypothesis: its tokens, then <eos>, join the pool
            finishing = (is_eos & alive & ~done[:, None])[:, :K]  # (B, K)
            new_tokens = ids[ex * K + top_beam[:, :K], 1:]  # (B, K, T_max) the extended beams' tokens
            new_tokens[:, :, t] = eos_id if eos_id is not None else c.pad_id
            new_logp = np.where(finishing, top_scores[:, :K], -np.inf)  # (B, K)
            pool = pool.add(new_tokens, new_logp, np.where(finishing, norm(new_logp, t + 1), -np.inf), t + 1, True)

            # 2. the K best candidates not ending in <eos> become the next beams
            cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]  # (B, K) non-<eos> first, order kept
            next_beam = np.take_along_axis(top_beam, cont, axis=1)  # (B, K)
            next_token = np.take_along_axis(top_token, cont, axis=1)
            next_scores = np.take_along_axis(top_scores, cont, axis=1)
            next_beam[done] = np.arange(K)  # finished examples: rows stay put, fed padding
            next_token[done] = c.pad_id
            next_scores[done] = -np.inf
            if trace:
                _trace_beam_step(steps, t, ids, beam_scores, top_beam, top_token, top_scores, finishing,
                                 cont, done, pool, K)
            beam_idx = (ex * K + next_beam).reshape(N)  # (N,) the row each new beam continues
            ids = ids[beam_idx]  # (N, 1+T_max)
            ids[:, t + 1] = next_token.reshape(N)
            cache = reorder_cache(cache, beam_idx)  # self-attention K, V follow their beams
            beam_scores = next_scores

            # 3. done?  The best live sum is the best of the 2K candidates, <eos> included
            #    (top_scores[:, 0]), as Hugging Face takes it
            full = pool.count() >= K  # (B,)
            if early_stopping is True:
                now_done = full
            else:
                L = T_max if early_stopping == "never" and length_penalty > 0 else t + 1
                best_possible = norm(top_scores[:, 0], L)  # (B,)
                now_done = full & (pool.scores[:, K - 1] >= best_possible)
            done |= now_done
            if done.all():
                break

        # beams still running at the end join the pool, unfinished
        live = ~done[:, None] & np.isfinite(beam_scores)  # (B, K)
        final_logp = np.where(live, beam_scores, -np.inf)
        pool = pool.add(ids[:, 1:].reshape(B, K, T_max), final_logp,
                        np.where(live, norm(final_logp, t + 1), -np.inf), t + 1, False)

    lengths = pool.lengths[:, :R].reshape(B * R)
    T_out = max(int(lengths.max()), 1)
    return GenerationOutput(sequences=pool.tokens[:, :R, :T_out].reshape(B * R, T_out).copy(), lengths=lengths,
                            log_probs=pool.log_probs[:, :R].reshape(B * R), scores=pool.scores[:, :R].reshape(B * R),
                            finished=pool.finished[:, :R].reshape(B * R), num_return=R, trace=steps)


def _trace_beam_step(steps, t, ids, beam_scores, top_beam, top_token, top_scores, finishing, cont, done, pool, K):
    """One TraceStep per example still searching at step t (a loop, but only when tracing)."""
    B = beam_scores.shape[0]
    for b in range(B):
        if done[b]:
            continue
        rows = [k for k in range(K) if np.isfinite(beam_scores[b, k])]
        kept = set(int(i) for i in cont[b] if np.isfinite(top_scores[b, i]))
        cands = []
        for i in range(2 * K):
            if not np.isfinite(top_scores[b, i]):
                continue
            k = int(top_beam[b, i])
            status = "finished" if i < K and finishing[b, i] else ("kept" if i in kept else "dropped")
            cands.append(Candidate(k, int(top_token[b, i]), float(top_scores[b, i] - beam_scores[b, k]),
                                   float(top_scores[b, i]), status))
        finished = [Hypothesis(tuple(int(x) for x in pool.tokens[b, j, :pool.lengths[b, j]]),
                               float(pool.log_probs[b, j]), float(pool.scores[b, j]), bool(pool.finished[b, j]))
                    for j in range(K) if np.isfinite(pool.scores[b, j])]
        steps.append(TraceStep(t, b, [tuple(int(x) for x in ids[b * K + k, 1:t + 1]) for k in rows],
                               [float(beam_scores[b, k]) for k in rows], rows, cands, finished))


# =====================================================================================
# 5. Reading traces, loading checkpoints
# =====================================================================================
def format_trace(trace: list, tokenizer: CharTokenizer | None = None, max_candidates: int | None = None) -> str:
    """A plain-text rendering of a trace, one block per (step, example)."""
    def tok(i):
        return tokenizer.id_to_token(i) if tokenizer is not None else str(i)

    def seq(tokens):
        return "".join(tok(i) for i in tokens) if tokenizer is not None else " ".join(tok(i) for i in tokens)

    lines = []
    for s in trace:
        lines.append(f"step {s.step}  example {s.example}")
        for row, tokens, score in zip(s.beam_rows, s.beams, s.beam_scores):
            lines.append(f"  beam {row}: {seq(tokens)!r:<24} log-prob {score:9.4f}")
        cands = s.candidates if max_candidates is None else s.candidates[:max_candidates]
        for cnd in cands:
            lines.append(f"    beam {cnd.beam} + {tok(cnd.token)!r:<8} log p {cnd.log_prob:9.4f}  "
                         f"sum {cnd.score:9.4f}  {cnd.status}")
        for h in s.finished:
            lines.append(f"  finished: {seq(h.tokens)!r:<22} score {h.score:9.4f}  (log-prob {h.log_prob:.4f})")
    return "\n".join(lines)


def load_model(path) -> tuple[EncoderDecoder, CharTokenizer]:
    """Rebuild a trained encoder-decoder and its tokenizer from a ``minitf train --save`` checkpoint.

    The checkpoint's config holds ``ModelConfig.to_dict()`` under ``"model"``; its extra
    holds the tokenizer's ``to_dict()`` under ``"tokenizer"`` (and the task name under
    ``"task"``).  The model is returned in eval mode.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Not a checkpoint; no model config or tokenizer in it; a config ``ModelConfig``
        rejects; parameters missing, unexpected or mis-shaped for that config (named);
        a tokenizer whose size differs from the model's vocabularies.
    """
    ckpt = load_checkpoint(path)
    where = f"checkpoint {str(path)!r}"
    cfg = ckpt.config.get("model")
    if not isinstance(cfg, dict):
        raise ValueError(f"{where}: expected the model config under config['model'] (as `minitf train --save` "
                         f"writes it), got config keys {sorted(ckpt.config)}")
    try:
        config = ModelConfig.from_dict(cfg)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: incompatible model config: {e}") from None
    extra = ckpt.extra or {}
    if not isinstance(extra.get("tokenizer"), dict):
        raise ValueError(f"{where}: expected the tokenizer under extra['tokenizer'], got extra keys {sorted(extra)}")
    try:
        tokenizer = CharTokenizer.from_dict(extra["tokenizer"])
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: cannot rebuild the tokenizer: {e}") from None
    for name in ("src_vocab_size", "tgt_vocab_size"):
        # equal, not merely large enough: a bigger model vocabulary could emit ids the
        # tokenizer cannot turn back into text
        if tokenizer.vocab_size != getattr(config, name):
            raise ValueError(f"{where}: the tokenizer has {tokenizer.vocab_size} tokens but the model's "
                             f"{name} is {getattr(config, name)}")
    if tokenizer.pad_id != config.pad_id:
        raise ValueError(f"{where}: the tokenizer's pad id {tokenizer.pad_id} differs from the model's "
                         f"pad_id {config.pad_id}")
    model = EncoderDecoder(config)
    copy_params_into(model.parameters(), ckpt.params, what=where)  # ValueError naming missing / mis-shaped
    model.eval()
    return model, tokenizer
