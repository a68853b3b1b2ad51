"""The decoders' argument checks, in one place, so the decoding functions stay mostly maths.

Each check names the argument, what was expected and what was given.  The public entry
points (the searches, the logit processors) call them once, on entry; a decoding step's
own checks are the model's (:func:`minitf.kv_cache.check_step`).
"""
from __future__ import annotations

import numpy as np

from ..checks import check_choice, check_int, check_number

MODEL = "model"  # the default of eos_id: the model's own, model.config.eos_id (None already means "never")


# ---- the model --------------------------------------------------------------------------------
def _check_not_recurrent(model) -> None:
    """Re-running the decoder on the whole prefix (``use_cache=False``) is the transformer's
    reference path; a recurrent decoder only has its step."""
    if not callable(getattr(model, "uncached_decoder", None)):
        raise ValueError(f"use_cache: expected None or True for an {type(model).__name__} (it decodes step by step "
                         f"from its state), got False")


def _check_model(model) -> None:
    """A model that decodes: one with ``start_decoding`` and ``decode_step`` (every minitf model
    family that generates: EncoderDecoder, PointerGenerator, DecoderOnly, RNNSeq2Seq)."""
    if not (callable(getattr(model, "start_decoding", None)) and callable(getattr(model, "decode_step", None))):
        raise TypeError(f"model: expected a minitf EncoderDecoder, DecoderOnly or RNNSeq2Seq (a model with "
                        f"start_decoding and decode_step), got {type(model).__name__}")


# ---- logit processors -----------------------------------------------------------------------
def _check_top_k(name: str, k) -> None:
    check_int(name, k, low=0, hint="0 = no top-k filtering")


def _check_top_p(name: str, p) -> None:
    check_number(name, p, 0, 1, low_open=True, hint="1 = no top-p filtering")


def _check_sampling_args(temperature, top_k, top_p) -> None:
    check_number("temperature", temperature, 0, None, low_open=True)
    _check_top_k("top_k", top_k)
    _check_top_p("top_p", top_p)


# ---- the decoders ---------------------------------------------------------------------------
def _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size, start_id, eos_id):
    """Shared argument checks; returns (src_ids, T_max, start_id, eos_id) with the special ids
    resolved: ``start_id=None`` is ``model.config.bos_id``, ``eos_id=MODEL`` is ``model.config.eos_id``."""
    _check_model(model)
    c = model.config
    room, hint = c.max_len, "its upper end is the model's max_len"  # the decoder positions there are
    if getattr(model, "source_is_prompt", False) and np.ndim(src_ids) == 2:  # a decoder-only model's prompt takes S
        S = np.shape(src_ids)[1]
        room, hint = c.max_len - S, f"its upper end is the model's max_len={c.max_len} minus the prompt's S={S}"
        if room < 1:
            raise ValueError(f"src_ids: expected S < max_len={c.max_len} for a decoder-only model (its prompt and "
                             f"its output share the max_len positions), got S={S}")
    T_max = room if max_new_tokens is None else check_int("max_new_tokens", max_new_tokens, 1, room, hint=hint)
    check_int("no_repeat_ngram_size", no_repeat_ngram_size, low=0, hint="0 = off")
    start_id = c.bos_id if start_id is None else start_id
    eos_id = c.eos_id if isinstance(eos_id, str) and eos_id == MODEL else eos_id
    for name, value, other in (("start_id", start_id, "None (the model's bos_id)"),
                               ("eos_id", eos_id, f"None (never stop early) or {MODEL!r} (the model's eos_id)")):
        if value is None and name == "eos_id":
            continue
        # not check_int: the message must offer the alternatives to a token id
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < c.tgt_vocab_size:
            raise ValueError(f"{name}: expected a token id in [0, {c.tgt_vocab_size}) or {other}, got {value!r}")
    src_ids = np.asarray(src_ids)
    if src_ids.ndim != 2 or src_ids.shape[0] < 1 or src_ids.shape[1] < 1:
        raise ValueError(f"src_ids: expected a non-empty integer array of shape (B, S), got shape {src_ids.shape}")
    return src_ids, T_max, start_id, eos_id


def _check_beam_args(num_beams, num_return_sequences, length_penalty, length_penalty_style, early_stopping):
    K = check_int("num_beams", num_beams, low=1)
    R = check_int("num_return_sequences", num_return_sequences, 1, K, hint=f"at most num_beams={K}")
    check_number("length_penalty", length_penalty)
    check_choice("length_penalty_style", length_penalty_style, ("hf", "gnmt"))
    if isinstance(early_stopping, np.bool_):
        early_stopping = bool(early_stopping)  # np.True_ is not True
    return K, R, check_choice("early_stopping", early_stopping, (True, False, "never"))


def _check_not_all_banned(scores: np.ndarray, live: np.ndarray, what: str, n: int, t: int) -> None:
    """scores (M, *) after the n-gram bans, live (M,): a live row with nothing left to choose
    (n = 1 bans every token once each has been used) is an error, not a silent pad."""
    stuck = live & ~np.isfinite(scores).any(axis=-1)  # (M,)
    if stuck.any():
        raise ValueError(f"no_repeat_ngram_size: expected a size that leaves a token to choose; with n={n} every "
                         f"token is banned for {what} {int(np.argmax(stuck))} at step {t} (use a larger n or a "
                         f"smaller max_new_tokens)")
