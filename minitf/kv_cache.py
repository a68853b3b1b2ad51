"""The two caches of incremental decoding (Lesson 9, sections 1-2).

**Encode once, decode many.**  The encoder reads the source once per example; the decoder
then runs one step per generated token.  At step t it needs, in every decoder layer,

* the self-attention keys and values of positions 0..t.  Positions 0..t-1 have not changed
  since they were computed (the causal mask keeps them from seeing anything later), so
  they are kept in a **self-attention cache** that grows by one position per step;
* the cross-attention keys and values, a function of H_enc alone.  They are computed once
  per example (:func:`new_cache`) and reused at every step: the **cross-attention cache**.

With both caches a step feeds only the newest token and costs the same at t = 16 as at
t = 256 (up to the attention over the cache), where re-running the decoder on the whole
prefix costs O(t) per step.  The step is the model's own decoder: ``model.decode_step``
runs the same blocks as training (:mod:`minitf.models.stacks`), each reading and writing
its :class:`~minitf.blocks.LayerKV`; the logits are the same either way
(tests/test_decoding.py).  Only for a causal decoder, though: without the causal mask
(``config.causal=False``) a position sees the ones after it, its keys and values change as
tokens arrive, and a cache would hold stale ones, so :func:`check_cacheable` refuses such
a model.

Cache layout, per decoder layer (:class:`~minitf.blocks.LayerKV`), in the package's shape letters::

    K_self, V_self    (N, H, T_max, Dh)  preallocated; step t writes position t in place
    K_cross, V_cross  (B, H, S, Dh)      from H_enc, once; the G rows of an example share it

A cross-attention step therefore lays its weights out per example, (B, H, G*T_new, S):
:func:`per_row` turns them into (N, H, T_new, S).

**The decoder-only model** has no encoder and no cross-attention (``K_cross``, ``V_cross``
and ``src_mask`` are None).  Its prompt is the source followed by ``<bos>``:
``DecoderOnly.start_decoding`` left-pads the sources (every row's last source token in
column S-1) and reads them in one pass into the self-attention cache (the *prefill*, once
per example, then copied to the example's G rows): the cache's first S slots hold the
prompt.  The steps then feed ``<bos>`` and every chosen token, exactly as for the
encoder-decoder.  The padding stays in the cache, blocked as a key (``KVCache.prompt_mask``),
and the positions skip it: slot j of a row with ``p`` padded slots holds position ``j - p``
(``KVCache.prompt_pad``), so a padded row gets the logits it gets decoded alone (Hugging
Face's left padding with ``position_ids``).  Capacity: S + T_max slots, within ``max_len``.

**Coverage and copy.**  The cache can also follow the last decoder block's cross-attention
from step to step: ``KVCache.coverage`` (N, S) sums its weights (mean over heads) over the
positions decoded so far, the coverage vector c that GNMT's coverage penalty reads
(``start_decoding(..., coverage=True)``).  A pointer-generator always keeps it: its
coverage attention adds w_c c to that attention's scores, so c is state like the keys and
values, carried forward and reordered with the beams.  Its cache also holds H_enc and the
sources in the extended vocabulary (``KVCache.copy``), and its ``decode_step`` returns log P
over the extended vocabulary (V + the example's source-only tokens) in place of the logits:
log-probabilities are logits whose log-softmax is themselves, so the searches take them
unchanged.  A copied token (id >= V) fed back as the next input is read as ``<unk>``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .attention import check_attention_mask
from .blocks import LayerKV
from .checks import check_int, check_token_ids
from .data.extended_vocab import ExtendedSource

__all__ = ["LayerKV", "CopySource", "KVCache", "new_cache", "per_row", "check_cacheable", "check_step",
           "check_beam_index"]


class CopySource(NamedTuple):
    """What a pointer-generator's copy head reads at every step."""
    H_enc: np.ndarray  # (B, S, D) for the context h*_t = a_t H_enc
    source: ExtendedSource  # (B, S) the sources' extended ids, and what each source-only id stands for


class KVCache(NamedTuple):
    """Everything a decoding step needs besides the model and the newest tokens.

    The self-attention buffers are preallocated to the capacity and written in place, so
    a step costs the same whatever t.  A ``KVCache`` is a view of those buffers at one
    ``length``: a step writes positions ``length..length+T_new-1`` and returns the cache
    with the longer length; positions at or past ``length`` are scratch.
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
    copy: CopySource | None = None  # a pointer-generator's: H_enc and the extended sources
    made_for: str = ""  # the class of the model whose start_decoding made it: another model would misread it

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

    def follow(self, a: np.ndarray) -> None:
        """Add the new positions' copy attention a (N, T_new, S) to the coverage, in place
        (like the self-attention buffers)."""
        self.coverage[:] += a.sum(axis=1)  # (N, S)

    def reorder(self, beam_idx: np.ndarray) -> "KVCache":
        """Row n continues the prefix of row ``beam_idx[n]`` (beam search), in place.

        Only the self-attention K, V move (positions 0 .. length-1), and the coverage vector
        if the cache follows it.  The cross-attention K, V belong to the example, not the
        beam, so nothing is done to them; hence every row must keep to its own example's
        group (:func:`check_beam_index`).  (So does a decoder-only prompt's padding:
        ``prompt_mask`` and ``prompt_pad`` are the same for every row of an example.)"""
        t = self.length
        for kv in self.layers:
            # fancy indexing copies first, so writing back into the same buffer is safe
            kv.K_self[:, :, :t] = kv.K_self[beam_idx, :, :t]  # (N, H, t, Dh)
            kv.V_self[:, :, :t] = kv.V_self[beam_idx, :, :t]
        if self.coverage is not None:
            self.coverage[:] = self.coverage[beam_idx]  # (N, S) the coverage follows its beam too
        return self


def new_cache(model, rows: int, capacity: int, *, H_enc: np.ndarray | None = None, **fields) -> KVCache:
    """Empty self-attention buffers of ``rows`` x ``capacity`` positions for every decoder
    block of ``model`` and, given H_enc (B, S, D), the blocks' cross-attention K, V, computed
    here once per example.  ``fields``: the other :class:`KVCache` fields."""
    c = model.config
    shape = (rows, c.n_heads, capacity, c.d_head)  # (N, H, T_max, Dh)
    layers = []
    for layer in model.decoder_layers:
        K_cross = V_cross = None
        if H_enc is not None:
            K, V = layer.cross_attn.project_kv(H_enc)  # (B, H, S, Dh) each: once per example
            # contiguous once here, so no step has to copy a strided view inside matmul
            K_cross, V_cross = np.ascontiguousarray(K), np.ascontiguousarray(V)
        layers.append(LayerKV(np.zeros(shape, dtype=model.dtype), np.zeros(shape, dtype=model.dtype), K_cross,
                              V_cross, qkv=layer.self_attn.joined_qkv()))  # one product for Q, K, V at every step
    fields.setdefault("length", 0)
    fields.setdefault("group_size", 1)
    return KVCache(tuple(layers), made_for=type(model).__name__, **fields)


def per_row(x: np.ndarray, G: int) -> np.ndarray:
    """A cross-attention step's per-example layout (B, H, G*T_new, S) -> per row (N, H, T_new, S),
    N = B * G (module docstring)."""
    B, H, GT, S = x.shape
    return x.reshape(B, H, G, GT // G, S).transpose(0, 2, 1, 3, 4).reshape(B * G, H, GT // G, S)


def per_example(x: np.ndarray, G: int) -> np.ndarray:
    """The inverse of :func:`per_row`: (N, H, T_new, S) -> (B, H, G*T_new, S)."""
    N, H, T, S = x.shape
    return x.reshape(N // G, G, H, T, S).transpose(0, 2, 1, 3, 4).reshape(N // G, H, G * T, S)


# ---- the checks, at the boundary: once a step, not once per attention --------------------------
def check_cacheable(model) -> None:
    """A KV cache is valid for a causal decoder only (module docstring), in eval mode."""
    if not model.config.causal:
        raise ValueError("model: expected a causal decoder (config.causal=True) for cached decoding, got "
                         "config.causal=False; decode it without the cache (greedy_search(..., use_cache=False))")
    check_eval(model)


def check_eval(model) -> None:
    if model.training and model.config.dropout > 0:
        raise ValueError("model: expected eval mode for decoding (dropout is active in training "
                         "mode); call model.eval() first")


def check_step(model, decoder_input_ids, cache: KVCache, vocab_size: int) -> np.ndarray:
    """The ids of a decoding step, checked against the model and its cache: ``decoder_input_ids``
    (N, T_new) in [0, vocab_size).  A cache made for another model would be read wrongly (or cut
    short by zip): it is refused.  The step's attentions then read the cache unchecked
    (``check_args=False``), so its rows and masks are checked here, once a step."""
    c = model.config
    check_eval(model)
    if cache.made_for != type(model).__name__:
        raise ValueError(f"cache: expected one made for this {type(model).__name__} by start_decoding(model, src_ids), "
                         f"got one made for {cache.made_for or 'another model'}")
    got = (len(cache.layers), cache.layers[0].K_self.shape[1], cache.layers[0].K_self.shape[3]) if cache.layers \
        else (0, c.n_heads, c.d_head)  # no layers: nothing else to compare
    if got != (c.n_decoder_layers, c.n_heads, c.d_head):
        raise ValueError(f"cache: expected one made for this model ({c.n_decoder_layers} decoder layers, "
                         f"{c.n_heads} heads of size {c.d_head}), got {got[0]} layers, {got[1]} heads of size {got[2]}")
    kv, N = (cache.layers[0] if cache.layers else None), cache.batch_rows
    if kv is not None and kv.K_self.shape[0] != N:
        raise ValueError(f"cache: expected self-attention buffers of N = {N} rows (the cache's batch_rows), "
                         f"got {kv.K_self.shape[0]}")
    if cache.prompt_mask is not None and cache.prompt_mask.shape != (N, 1, 1, cache.capacity):
        raise ValueError(f"cache.prompt_mask: expected shape (N, 1, 1, capacity) = {(N, 1, 1, cache.capacity)}, "
                         f"got {cache.prompt_mask.shape}")
    if cache.prompt_pad is not None and np.shape(cache.prompt_pad) != (N,):
        raise ValueError(f"cache.prompt_pad: expected shape (N,) = ({N},), got {np.shape(cache.prompt_pad)}")
    if cache.src_mask is not None and kv is not None and kv.K_cross is not None:
        B, _, S, _ = kv.K_cross.shape
        if cache.src_mask.shape != (B, 1, 1, S):
            raise ValueError(f"cache.src_mask: expected shape (B, 1, 1, S) = {(B, 1, 1, S)}, the cross-attention "
                             f"cache's, got {cache.src_mask.shape}")
    for name, mask in (("cache.src_mask", cache.src_mask), ("cache.prompt_mask", cache.prompt_mask)):
        if mask is not None:
            check_attention_mask(mask, name)
    ids = check_token_ids("decoder_input_ids", decoder_input_ids, vocab_size)
    t = cache.length
    if ids.ndim != 2 or ids.shape[0] != N or ids.shape[1] < 1:
        raise ValueError(f"decoder_input_ids: expected shape (N={N}, T_new >= 1) for this cache, got {ids.shape}")
    if t + ids.shape[1] > cache.capacity:
        raise ValueError(f"decoder_input_ids: the cache holds {cache.capacity} positions; {t} are used, "
                         f"so at most {cache.capacity - t} new ones fit, got {ids.shape[1]}")
    return ids


def check_beam_index(beam_idx, N: int, G: int) -> np.ndarray:
    """``beam_idx`` (N,) integers, each row continuing a row of its own example's G."""
    beam_idx = np.asarray(beam_idx)
    if beam_idx.shape != (N,) or not np.issubdtype(beam_idx.dtype, np.integer):
        raise ValueError(f"beam_idx: expected an integer array of shape (N,) = ({N},), "
                         f"got {beam_idx.dtype} {beam_idx.shape}")
    rows = np.arange(N)
    wrong = (beam_idx < 0) | (beam_idx >= N) | (beam_idx // G != rows // G)
    if wrong.any():
        bad = int(np.argmax(wrong))
        raise ValueError(f"beam_idx: expected each row to continue a row of its own example "
                         f"(rows {bad // G * G}..{bad // G * G + G - 1} for row {bad}), got {int(beam_idx[bad])}")
    return beam_idx


def check_group(group_size, max_len, capacity_limit: int, hint: str) -> tuple[int, int]:
    """(G, T_max): ``group_size`` >= 1 and ``max_len`` (default ``capacity_limit``) in [1, capacity_limit]."""
    G = check_int("group_size", group_size, low=1)
    T_max = capacity_limit if max_len is None else check_int("max_len", max_len, 1, capacity_limit, hint=hint)
    return G, T_max
