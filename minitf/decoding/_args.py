"""The decoders' argument checks, in one place, so the decoding functions stay mostly maths.

Each check names the argument, what was expected and what was given.  The public entry
points (:func:`~minitf.decoding.init_cache`, the searches, the logit processors) call them
once, on entry.
"""
from __future__ import annotations

import math

import numpy as np

from ..checks import check_positive_int
from ..models.encoder_decoder import EncoderDecoder

MODEL = "model"  # the default of eos_id: the model's own, model.config.eos_id (None already means "never")


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


# ---- the model and its cache ----------------------------------------------------------------
def _check_model(model) -> None:
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model: expected a minitf EncoderDecoder, got {type(model).__name__}")


def _check_cacheable(model) -> None:
    """A KV cache is valid for a causal decoder only: without the causal mask every position
    would see the ones after it, so a cached key or value would change as tokens arrive."""
    _check_model(model)
    if not model.config.causal:
        raise ValueError("model: expected a causal decoder (config.causal=True) for cached decoding, got "
                         "config.causal=False; decode it without the cache (greedy_search(..., use_cache=False))")


def _check_eval(model) -> None:
    if model.training and model.config.dropout > 0:
        raise ValueError("model: expected eval mode for decoding (dropout is active in training "
                         "mode); call model.eval() first")


def _check_cache_fits(model, cache) -> None:
    """A cache made for another model would be read wrongly (or cut short by zip): refuse it."""
    c = model.config
    got = (len(cache.layers), cache.layers[0].K_self.shape[1], cache.layers[0].K_self.shape[3]) if cache.layers \
        else (0, c.n_heads, c.d_head)  # no layers: nothing else to compare
    if got != (c.n_decoder_layers, c.n_heads, c.d_head):
        raise ValueError(f"cache: expected one made for this model ({c.n_decoder_layers} decoder layers, "
                         f"{c.n_heads} heads of size {c.d_head}), got {got[0]} layers, {got[1]} heads of size {got[2]}")


# ---- logit processors -----------------------------------------------------------------------
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


# ---- the decoders ---------------------------------------------------------------------------
def _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id):
    """Shared argument checks; returns (src_ids, T_max, start_id, eos_id) with the special ids
    resolved: ``start_id=None`` is ``model.config.bos_id``, ``eos_id=MODEL`` is ``model.config.eos_id``."""
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
    start_id = c.bos_id if start_id is None else start_id
    eos_id = c.eos_id if isinstance(eos_id, str) and eos_id == MODEL else eos_id
    for name, value, other in (("start_id", start_id, "None (the model's bos_id)"),
                               ("eos_id", eos_id, f"None (never stop early) or {MODEL!r} (the model's eos_id)")):
        if value is None and name == "eos_id":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < c.tgt_vocab_size:
            raise ValueError(f"{name}: expected a token id in [0, {c.tgt_vocab_size}) or {other}, got {value!r}")
    src_ids = np.asarray(src_ids)
    if src_ids.ndim != 2 or src_ids.shape[0] < 1 or src_ids.shape[1] < 1:
        raise ValueError(f"src_ids: expected a non-empty integer array of shape (B, S), got shape {src_ids.shape}")
    return src_ids, T_max, start_id, eos_id


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


def _check_not_all_banned(scores: np.ndarray, live: np.ndarray, what: str, n: int, t: int) -> None:
    """scores (M, *) after the n-gram bans, live (M,): a live row with nothing left to choose
    (n = 1 bans every token once each has been used) is an error, not a silent pad."""
    stuck = live & ~np.isfinite(scores).any(axis=-1)  # (M,)
    if stuck.any():
        raise ValueError(f"no_repeat_ngram_size: expected a size that leaves a token to choose; with n={n} every "
                         f"token is banned for {what} {int(np.argmax(stuck))} at step {t} (use a larger n or a "
                         f"smaller max_new_tokens)")
