"""The two caches of incremental decoding, and one decoding step (Lesson 9, sections 1-2).

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
Only for a causal decoder, though: without the causal mask (``config.causal=False``) a
position sees the ones after it, its keys and values change as tokens arrive, and a cache
would hold stale ones, so :func:`init_cache` refuses such a model.

Cache layout, per decoder layer (:class:`LayerKV`), in the package's shape letters::

    K_self, V_self    (N, H, T_max, Dh)  preallocated; step t writes position t in place
    K_cross, V_cross  (B, H, S, Dh)      from H_enc, once; the G rows of an example share it

**The decoder-only model** (:class:`~minitf.models.DecoderOnly`) has no encoder and no
cross-attention (``K_cross``, ``V_cross`` and ``src_mask`` are None).  Its prompt is the
source followed by ``<bos>``.  :func:`start_decoding` left-pads the sources (every row's
last source token in column S-1) and reads them in one pass into the self-attention cache
(the *prefill*, once per example, then copied to the example's G rows): the cache's first
S slots hold the prompt.  The steps then feed ``<bos>`` and every chosen token, exactly as
for the encoder-decoder.  The padding stays in the cache, blocked as a key
(``KVCache.prompt_mask``), and the positions skip it: slot j of a row with ``p`` padded
slots holds position ``j - p`` (``KVCache.prompt_pad``), so a padded row gets the logits it
gets decoded alone (Hugging Face's left padding with ``position_ids``).  Capacity:
S + T_max slots, within the model's ``max_len``.

**Coverage and copy.**  The cache can also follow the last decoder block's cross-attention
from step to step: ``KVCache.coverage`` (N, S) sums its weights (mean over heads) over the
positions decoded so far, the coverage vector c that GNMT's coverage penalty reads
(``start_decoding(..., coverage=True)``).  A :class:`~minitf.models.PointerGenerator`
always keeps it: its coverage attention adds w_c c to that attention's scores, so c is
state like the keys and values, carried forward and reordered with the beams.  Its cache
also holds H_enc and the sources in the extended vocabulary (``KVCache.copy``), and
:func:`decode_step` returns log P over the extended vocabulary (V + the example's
source-only tokens) in place of the logits: log-probabilities are logits whose
log-softmax is themselves, so the searches take them unchanged.  A copied token (id >= V)
fed back as the next input is read as ``<unk>``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..attention import masked_softmax, merge_heads, scaled_dot_product_attention
from ..blocks import sublayer_forward
from ..checks import check_int, check_token_ids
from ..layers.linear import affine_forward
from ..masks import MASK_VALUE, causal_mask
from ..models.common import head_weight, input_forward
from ..models.decoder_only import DecoderOnly, left_pad
from ..models.encoder_decoder import EncoderDecoder
from ..models.pointer_generator import ExtendedSource, PointerGenerator, mixture_log_probs
from ..models.rnn_seq2seq import RNNDecodingState, RNNSeq2Seq
from ._args import _check_cache_fits, _check_cacheable, _check_eval

__all__ = ["LayerKV", "CopySource", "KVCache", "init_cache", "start_decoding", "decode_step", "reorder_cache"]


class LayerKV(NamedTuple):
    """One decoder layer's keys and values for incremental decoding."""
    K_self: np.ndarray  # (N, H, T_max, Dh) positions [0, length) hold the prefix; the rest is scratch
    V_self: np.ndarray  # (N, H, T_max, Dh)
    K_cross: np.ndarray | None  # (B, H, S, Dh) = split_heads(H_enc W_k + b_k), once per example; None: decoder-only
    V_cross: np.ndarray | None  # (B, H, S, Dh) = split_heads(H_enc W_v + b_v)
    # the self-attention's (W_qkv (D, 3D), b_qkv (3D,)), joined once per decoding run
    # (MultiHeadAttention.joined_qkv); None: joined at every step
    qkv: tuple | None = None


class CopySource(NamedTuple):
    """What a :class:`~minitf.models.PointerGenerator`'s copy head reads at every step."""
    H_enc: np.ndarray  # (B, S, D) for the context h*_t = a_t H_enc
    source: ExtendedSource  # (B, S) the sources' extended ids, and what each source-only id stands for


class KVCache(NamedTuple):
    """Everything a decoding step needs besides the model and the newest tokens.

    The self-attention buffers are preallocated to the capacity and written in place, so
    a step costs the same whatever t.  A ``KVCache`` is a view of those buffers at one
    ``length``: :func:`decode_step` writes positions ``length..length+T_new-1`` and returns
    the cache with the longer length; positions at or past ``length`` are scratch.
    """
    layers: tuple  # one LayerKV per decoder layer
    src_mask: np.ndarray | None  # (B, 1, 1, S) source padding, for every cross-attention; None: decoder-only
    length: int  # t: how many decoder positions are cached
    group_size: int  # G: rows per example (num_beams, or samples per input); N = B * G
    # the decoder-only model's prompt (None for the encoder-decoder), see the module docstring:
    prompt_mask: np.ndarray | None = None  # (N, 1, 1, T_max) additive: the prompt's left padding, never a key
    prompt_pad: np.ndarray | None = None  # (N,) padded slots in front of each row: slot j holds position j - prompt_pad
    # the last decoder block's cross-attention followed (None: not followed), see the module docstring:
    coverage: np.ndarray | None = None  # (N, S) its weights, mean over heads, summed over the decoded positions
    copy: CopySource | None = None  # a PointerGenerator's: H_enc and the extended sources

    @property
    def capacity(self) -> int:
        """T_max, the number of positions the self-attention buffers hold."""
        return self.layers[0].K_self.shape[2] if self.layers else 0

    @property
    def batch_rows(self) -> int:
        """N = B * G, the rows being decoded."""
        if self.src_mask is None:  # decoder-only: one prompt row per decoded row
            return self.prompt_mask.shape[0]
        return self.src_mask.shape[0] * self.group_size

    def nbytes(self) -> dict:
        """Bytes of the two caches (all layers): self-attention allocated and in use, cross-attention."""
        self_alloc = sum(kv.K_self.nbytes + kv.V_self.nbytes for kv in self.layers)
        capacity = max(self.capacity, 1)
        return {
            "self_attention_allocated": int(self_alloc),
            "self_attention_used": int(self_alloc * self.length // capacity),
            "cross_attention": int(sum(kv.K_cross.nbytes + kv.V_cross.nbytes for kv in self.layers
                                       if kv.K_cross is not None)),
        }


def init_cache(model: EncoderDecoder, H_enc: np.ndarray, src_mask: np.ndarray, *,
               group_size: int = 1, max_len: int | None = None, coverage: bool = False) -> KVCache:
    """Empty self-attention caches and full cross-attention caches for ``H_enc``.

    Parameters
    ----------
    model : EncoderDecoder
        In eval mode (dropout would make decoding random), with a causal decoder
        (``config.causal``; a ValueError otherwise, see the module docstring).
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
    coverage : bool
        Follow the coverage vector (``KVCache.coverage``, zeros).

    Returns
    -------
    KVCache
        ``length`` 0.
    """
    if isinstance(model, DecoderOnly):
        raise TypeError("model: expected an EncoderDecoder (init_cache reads an encoder output), got DecoderOnly; "
                        "start a decoder-only model's cache with start_decoding(model, src_ids)")
    _check_cacheable(model)
    c = model.config
    _check_eval(model)
    G = check_int("group_size", group_size, low=1)
    T_max = c.max_len if max_len is None else check_int("max_len", max_len, 1, c.max_len,
                                                        hint="its upper end is the model's max_len")
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
            qkv=layer.self_attn.joined_qkv(),  # one product for Q, K and V at every step
        ))
    cov = np.zeros((B * G, S), dtype=model.dtype) if coverage else None  # (N, S)
    return KVCache(tuple(layers), np.asarray(src_mask, dtype=model.dtype), 0, G, coverage=cov)


def start_decoding(model: EncoderDecoder | DecoderOnly, src_ids, *, group_size: int = 1,
                   max_len: int | None = None, coverage: bool = False) -> KVCache:
    """Run the encoder once on ``src_ids`` (B, S) and return a fresh :class:`KVCache`.

    ``coverage=True`` follows the coverage vector (module docstring; an encoder-decoder
    only).  A :class:`~minitf.models.PointerGenerator` always does, and its cache holds
    what its copy head reads (``KVCache.copy``).

    A :class:`~minitf.models.DecoderOnly` model has no encoder: its left-padded sources are
    read into the self-attention cache instead (the prefill, module docstring), and
    ``max_len`` counts the slots after them.

    An :class:`~minitf.models.RNNSeq2Seq` returns its own decoding state instead (the
    decoder's recurrent state and the encoder's memory, per row): see ``model.start_decoding``."""
    if coverage and not isinstance(model, EncoderDecoder):
        raise ValueError(f"coverage: expected False for a {type(model).__name__} (the coverage vector sums an "
                         f"encoder-decoder's cross-attention weights), got True")
    if isinstance(model, RNNSeq2Seq):
        return model.start_decoding(src_ids, group_size=group_size, max_len=max_len)
    _check_cacheable(model)
    if isinstance(model, DecoderOnly):
        return _prefill_prompt(model, src_ids, group_size, max_len)
    H_enc, _ = model.encode(src_ids)  # (B, S, D); the backward cache is not needed
    src_ids = np.asarray(src_ids)
    pointer = isinstance(model, PointerGenerator)
    cache = init_cache(model, H_enc, model.source_mask(src_ids), group_size=group_size, max_len=max_len,
                       coverage=coverage or pointer)
    return cache._replace(copy=CopySource(H_enc, model.extend_source(src_ids))) if pointer else cache


def _prefill_prompt(model: DecoderOnly, src_ids, group_size: int, max_len: int | None) -> KVCache:
    """The decoder-only model's start: its sources, left-padded, read in one pass into the cache.

    src_ids (B, S), padded with ``pad_id`` -> a :class:`KVCache` of N = B * G rows and
    capacity S + T_max, ``length`` S: the prompt's keys and values fill slots 0 .. S-1.
    ``max_len`` is T_max, the slots left for the decoder inputs (``<bos>``, then the
    generated tokens); by default all that ``config.max_len`` leaves after the prompt.
    """
    c = model.config
    _check_eval(model)
    G = check_int("group_size", group_size, low=1)
    src_ids = check_token_ids("src_ids", src_ids, c.tgt_vocab_size)
    if src_ids.ndim != 2 or src_ids.shape[1] >= c.max_len:
        raise ValueError(f"src_ids: expected shape (B, S) with S < max_len={c.max_len} (a decoder-only model's "
                         f"prompt and output share its positions), got {src_ids.shape}")
    prompt, keep = left_pad(src_ids, c.pad_id)  # (B, S) each: padding first
    B, S = prompt.shape
    T_max = c.max_len - S if max_len is None else check_int(
        "max_len", max_len, 1, c.max_len - S, hint=f"the model's max_len={c.max_len} minus the prompt's S={S}")
    H, Dh, capacity = c.n_heads, c.d_head, S + T_max
    prompt_pad = S - keep.sum(axis=1)  # (B,) padded slots in front of each row
    is_pad = np.arange(capacity)[None, :] < prompt_pad[:, None]  # (B, S + T_max)
    prompt_mask = np.where(is_pad, MASK_VALUE, 0.0).astype(model.dtype)[:, None, None, :]  # (B, 1, 1, S + T_max)
    layers = tuple(LayerKV(np.zeros((B, H, capacity, Dh), dtype=model.dtype),  # (B, H, S + T_max, Dh)
                           np.zeros((B, H, capacity, Dh), dtype=model.dtype), None, None,
                           layer.self_attn.joined_qkv())
                   for layer in model.decoder_layers)
    cache = KVCache(layers, None, 0, 1, prompt_mask, prompt_pad)
    _, cache = decode_step(model, prompt, cache)  # the prefill: every prompt slot in one pass, once per example
    if G == 1:
        return cache
    # the G rows of an example continue the same prompt: copy its keys and values to each
    layers = tuple(LayerKV(np.repeat(kv.K_self, G, axis=0), np.repeat(kv.V_self, G, axis=0), None, None, kv.qkv)
                   for kv in cache.layers)  # (N, H, S + T_max, Dh)
    return KVCache(layers, None, S, G, np.repeat(prompt_mask, G, axis=0), np.repeat(prompt_pad, G))


# ---- one decoding step, reusing the model's own layers ----------------------------------------
def _self_attention_step(attn, h: np.ndarray, kv: LayerKV, t: int, mask):
    """Causal self-attention of the new positions over the cached prefix.

    h (N, T_new, D) -> (y (N, T_new, D), None).  Writes the new keys and values into the
    cache at positions t .. t+T_new-1, then attends over positions 0 .. t+T_new-1.
    """
    T_new = h.shape[1]
    W_qkv, b_qkv = attn.joined_qkv() if kv.qkv is None else kv.qkv  # (D, 3D), (3D,)
    Q, K_new, V_new = attn.project_qkv(h, W_qkv, b_qkv)  # (N, H, T_new, Dh) each
    kv.K_self[:, :, t:t + T_new] = K_new  # in place: no reallocation, no concatenate
    kv.V_self[:, :, t:t + T_new] = V_new
    K = kv.K_self[:, :, :t + T_new]  # (N, H, t+T_new, Dh) a view of the filled part
    V = kv.V_self[:, :, :t + T_new]  # (N, H, t+T_new, Dh)
    # the mask is decode_step's: the causal mask it builds, and the prompt's padding it checks once a step
    heads, _ = scaled_dot_product_attention(Q, K, V, mask, check_args=False)  # (N, H, T_new, Dh)
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
    # src_mask is checked once a step, in decode_step;  heads (B, H, G*T_new, Dh)
    heads, _ = scaled_dot_product_attention(Q, kv.K_cross, kv.V_cross, src_mask, check_args=False)
    y = affine_forward(merge_heads(heads), attn.params["W_o"], attn.params["b_o"])  # (B, G*T_new, D)
    return y.reshape(N, T_new, D), None  # (N, T_new, D)


def _copy_attention_step(attn, h: np.ndarray, kv: LayerKV, src_mask: np.ndarray, coverage: np.ndarray, weights):
    """The last block's cross-attention when its weights are followed (coverage, copy).

    h (N, T_new, D), coverage (N, S) before these positions -> (y (N, T_new, D), A (N, H,
    T_new, S)).  As :func:`_cross_attention_step`, every row of an example against the
    example's one copy of K and V, but the weights are laid out per row: each row has a
    coverage of its own, and with ``weights`` (a PointerGenerator's :class:`Coverage`) each
    row's scores get w_c c added, position after position.
    """
    N, T_new, D = h.shape
    B, H, S, Dh = kv.K_cross.shape
    G = N // B
    Q = attn.project_q(h.reshape(B, G * T_new, D))  # (B, H, G*T_new, Dh)
    scores = Q @ kv.K_cross.swapaxes(-1, -2)  # (B, H, G*T_new, Dh) @ (B, H, Dh, S) -> (B, H, G*T_new, S)
    scores *= 1.0 / math.sqrt(Dh)
    scores += src_mask  # (B, 1, 1, S) source padding
    scores = scores.reshape(B, H, G, T_new, S).transpose(0, 2, 1, 3, 4).reshape(N, H, T_new, S)  # per row
    mask = np.repeat(src_mask, G, axis=0)  # (N, 1, 1, S)
    A = masked_softmax(scores, mask) if weights is None else weights.step(scores, mask, coverage)[0]  # (N, H, T_new, S)
    A_ex = A.reshape(B, G, H, T_new, S).transpose(0, 2, 1, 3, 4).reshape(B, H, G * T_new, S)  # per example again
    heads = A_ex @ kv.V_cross  # (B, H, G*T_new, S) @ (B, H, S, Dh) -> (B, H, G*T_new, Dh)
    y = affine_forward(merge_heads(heads), attn.params["W_o"], attn.params["b_o"])  # (B, G*T_new, D)
    return y.reshape(N, T_new, D), A  # (N, T_new, D)


def _copy_head_step(model: PointerGenerator, logits, a, H_dec, x, copy: CopySource):
    """The PointerGenerator's mixture for the new positions: logits (N, T_new, V), a (N, T_new,
    S), H_dec and x (N, T_new, D) -> log P (N, T_new, V_ext)."""
    N, T_new, S = a.shape
    B, _, D = copy.H_enc.shape
    G = N // B
    context = (a.reshape(B, G * T_new, S) @ copy.H_enc).reshape(N, T_new, D)  # (B, G*T_new, S) @ (B, S, D): h*_t
    P, _ = model.copy.forward(logits, context, H_dec, x, a, np.repeat(copy.source.ids, G, axis=0),
                              copy.source.vocab_size)  # (N, T_new, V_ext)
    return mixture_log_probs(P)


def decode_step(model: EncoderDecoder | DecoderOnly, decoder_input_ids, cache: KVCache):
    """Feed the newest token(s) of every row; get their logits and the advanced cache.

    The same maths as ``model.decode`` on the whole prefix, computed with the model's own
    layers (projections, LayerNorm, feed-forward, residual sub-layers, head) but attending
    over the cache instead of recomputing it.  No backward caches are kept.

    For a :class:`~minitf.models.DecoderOnly` model the same, over its prompt (module
    docstring): no cross-attention, the prompt's padding blocked as a key, and positions
    that skip it.

    Parameters
    ----------
    model : EncoderDecoder or DecoderOnly
        In eval mode.
    decoder_input_ids : int array (N, T_new)
        The tokens at positions ``cache.length .. cache.length + T_new - 1``; usually
        T_new = 1 (the token chosen at the previous step).  T_new > 1 feeds a known prefix
        in one call.
    cache : KVCache
        From :func:`init_cache`, :func:`start_decoding` or a previous step.  Its
        self-attention buffers are written in place.

    Returns
    -------
    logits : array (N, T_new, V)
        For a PointerGenerator, log P (N, T_new, V_ext) over the extended vocabulary.
    cache : KVCache
        ``length`` advanced by T_new (same buffers; the coverage, if followed, too).
    """
    if isinstance(model, RNNSeq2Seq):  # its state is its cache: model.decode_step advances it
        return model.decode_step(decoder_input_ids, cache)
    c = model.config
    _check_eval(model)
    _check_cache_fits(model, cache)
    if cache.copy is None:
        ids = check_token_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
    else:  # a PointerGenerator's: extended ids, a copied one read as <unk>
        ids = model.decoder_input(check_token_ids("decoder_input_ids", decoder_input_ids, cache.copy.source.vocab_size))
    N, t = cache.batch_rows, cache.length
    if ids.ndim != 2 or ids.shape[0] != N or ids.shape[1] < 1:
        raise ValueError(f"decoder_input_ids: expected shape (N={N}, T_new >= 1) for this cache, got {ids.shape}")
    T_new = ids.shape[1]
    if t + T_new > cache.capacity:
        raise ValueError(f"decoder_input_ids: the cache holds {cache.capacity} positions; {t} are used, "
                         f"so at most {cache.capacity - t} new ones fit, got {T_new}")
    # A single new query may see every cached key: no mask.  Several new queries must not
    # see each other's future: causal_mask with the offset t.
    self_mask = None if T_new == 1 else causal_mask(T_new, t + T_new, offset=t, dtype=model.dtype)  # (T_new, t+T_new)
    if cache.prompt_pad is None:
        # x = W_E[ids] sqrt(D) + P[t .. t+T_new-1]: the positions continue where the cache ends
        x, _ = input_forward(ids, model.tgt_embed, model.tgt_pos, model.tgt_dropout, c.scale_embeddings,
                             offset=t)  # (N, T_new, D)
    else:
        # decoder-only: slot j holds position j - (the row's left padding); padded slots get 0
        position_ids = np.maximum(t + np.arange(T_new)[None, :] - cache.prompt_pad[:, None], 0)  # (N, T_new)
        x, _ = model.embed(ids, position_ids)  # (N, T_new, D)
        blocked = cache.prompt_mask[..., :t + T_new]  # (N, 1, 1, t+T_new) the prompt's padding, never a key
        self_mask = blocked if self_mask is None else self_mask + blocked  # (N, 1, T_new, t+T_new)
    x_in = x  # (N, T_new, D) the decoder input, which a PointerGenerator's p_gen reads
    last = len(model.decoder_layers) - 1
    weights = model.coverage if isinstance(model, PointerGenerator) else None  # its coverage attention, or None
    for l, (layer, kv) in enumerate(zip(model.decoder_layers, cache.layers)):
        # the block's residual sub-layers, exactly as DecoderBlock.forward runs them
        x, _ = sublayer_forward(x, lambda h: _self_attention_step(layer.self_attn, h, kv, t, self_mask),
                                layer.norm1, layer.dropout1, layer.norm_first)  # (N, T_new, D)
        if layer.has_cross and l == last and cache.coverage is not None:  # its weights followed
            x, c_ca = sublayer_forward(
                x, lambda h: _copy_attention_step(layer.cross_attn, h, kv, cache.src_mask, cache.coverage, weights),
                layer.norm2, layer.dropout2, layer.norm_first)  # (N, T_new, D)
            A = c_ca.f  # (N, H, T_new, S)
        elif layer.has_cross:  # a decoder-only block has none
            x, _ = sublayer_forward(x, lambda h: _cross_attention_step(layer.cross_attn, h, kv, cache.src_mask),
                                    layer.norm2, layer.dropout2, layer.norm_first)  # (N, T_new, D)
        x, _ = sublayer_forward(x, layer.ff.forward, layer.norm3, layer.dropout3, layer.norm_first)
    H_dec, _ = model.decoder_norm.forward(x)  # (N, T_new, D)
    logits = H_dec @ head_weight(model)  # (N, T_new, D) @ (D, V) -> (N, T_new, V)
    if cache.coverage is not None:
        a = A.mean(axis=1)  # (N, T_new, S) the copy attention of the new positions
        if cache.copy is not None:
            logits = _copy_head_step(model, logits, a, H_dec, x_in, cache.copy)  # (N, T_new, V_ext) log P
        cache.coverage[:] += a.sum(axis=1)  # (N, S) in place, like the self-attention buffers
    return logits, cache._replace(length=t + T_new)


def reorder_cache(cache: KVCache, beam_idx) -> KVCache:
    """Make row n continue the prefix of row ``beam_idx[n]`` (beam search), in place.

    Only the self-attention K, V move (positions 0 .. length-1), and the coverage vector
    if the cache follows it.  The cross-attention K, V belong to the example, not the
    beam, so nothing is done to them; hence every row must keep to its own example's
    group.  (So does a decoder-only prompt's padding: ``prompt_mask`` and ``prompt_pad``
    are the same for every row of an example.)

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
    if isinstance(cache, RNNDecodingState):  # an RNNSeq2Seq's state: its rows are gathered
        return cache.reorder(beam_idx)
    for kv in cache.layers:
        # fancy indexing copies first, so writing back into the same buffer is safe
        kv.K_self[:, :, :t] = kv.K_self[beam_idx, :, :t]  # (N, H, t, Dh)
        kv.V_self[:, :, :t] = kv.V_self[beam_idx, :, :t]
    if cache.coverage is not None:
        cache.coverage[:] = cache.coverage[beam_idx]  # (N, S) the coverage follows its beam too
    return cache

