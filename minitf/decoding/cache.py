"""Decoding's entry points to the two KV caches (Lesson 9, sections 1-2): start a cache, take a
step, reorder the rows.

The caches themselves, and why they hold what they hold, are :mod:`minitf.kv_cache`.  Each
model family decodes with its own decoder -- the very code that trains it -- through the
same three calls: ``model.start_decoding(src_ids, group_size=, max_len=, coverage=)``,
``model.decode_step(decoder_input_ids, cache)`` and ``cache.reorder(beam_idx)``.  An
encoder-decoder (and a pointer-generator) fills the cross-attention cache once from H_enc; a
decoder-only model reads its prompt into the self-attention cache; an RNN encoder-decoder's
cache is its recurrent state (:class:`~minitf.models.rnn_seq2seq.RNNDecodingState`).
"""
from __future__ import annotations

import numpy as np

from ..kv_cache import CopySource, KVCache, LayerKV, check_beam_index
from ._args import _check_model

__all__ = ["LayerKV", "CopySource", "KVCache", "init_cache", "start_decoding", "decode_step", "reorder_cache"]


def init_cache(model, H_enc: np.ndarray, src_mask: np.ndarray, *, group_size: int = 1, max_len: int | None = None,
               coverage: bool = False) -> KVCache:
    """Empty self-attention caches and full cross-attention caches for ``H_enc``.

    Parameters
    ----------
    model : EncoderDecoder
        In eval mode (dropout would make decoding random), with a causal decoder
        (``config.causal``; a ValueError otherwise, see :mod:`minitf.kv_cache`).
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
    if not hasattr(model, "init_cache"):
        raise TypeError(f"model: expected an EncoderDecoder (init_cache reads an encoder output), got "
                        f"{type(model).__name__}; start its cache with start_decoding(model, src_ids)")
    return model.init_cache(H_enc, src_mask, group_size=group_size, max_len=max_len, coverage=coverage)


def start_decoding(model, src_ids, *, group_size: int = 1, max_len: int | None = None, coverage: bool = False):
    """Read ``src_ids`` (B, S) once and return the model's fresh decoding cache for N = B * G rows.

    An encoder-decoder runs its encoder and fills the cross-attention cache
    (``coverage=True`` also follows the coverage vector; a pointer-generator always does, and
    its cache holds what its copy head reads); a decoder-only model reads its left-padded
    sources into the self-attention cache, and ``max_len`` counts the slots after them; an
    RNN encoder-decoder returns its recurrent state (the decoder's state and the encoder's
    memory, per row)."""
    _check_model(model)
    return model.start_decoding(src_ids, group_size=group_size, max_len=max_len, coverage=coverage)


def decode_step(model, decoder_input_ids, cache):
    """Feed the newest token(s) of every row; get their logits and the advanced cache.

    The same maths as re-running the decoder on the whole prefix, computed by the model's
    own decoder but attending over the cache instead of recomputing it.  No backward caches
    are kept.

    Parameters
    ----------
    model : EncoderDecoder, PointerGenerator, DecoderOnly or RNNSeq2Seq
        In eval mode.
    decoder_input_ids : int array (N, T_new)
        The tokens at positions ``cache.length .. cache.length + T_new - 1``; usually
        T_new = 1 (the token chosen at the previous step).  T_new > 1 feeds a known prefix
        in one call.
    cache
        From :func:`init_cache`, :func:`start_decoding` or a previous step.  Its
        self-attention buffers are written in place.

    Returns
    -------
    logits : array (N, T_new, V)
        For a PointerGenerator, log P (N, T_new, V_ext) over the extended vocabulary.
    cache
        ``length`` advanced by T_new (same buffers; the coverage, if followed, too).
    """
    return model.decode_step(decoder_input_ids, cache)


def reorder_cache(cache, beam_idx):
    """Make row n continue the prefix of row ``beam_idx[n]`` (beam search), in place.

    Only what belongs to a row moves: the self-attention K, V (positions 0 .. length-1) and
    the coverage vector if the cache follows it, or an RNN's recurrent state.  The
    cross-attention K, V belong to the example, not the beam; hence every row must keep to
    its own example's group.

    Parameters
    ----------
    beam_idx : int array (N,)
        For each new row, the old row it continues; ``beam_idx[n] // G == n // G``.

    Returns
    -------
    The same cache (buffers updated in place).
    """
    return cache.reorder(check_beam_index(beam_idx, cache.batch_rows, cache.group_size))
