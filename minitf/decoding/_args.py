"""The decoders' argument checks, in one place, so the decoding functions stay mostly maths.

Each check names the argument, what was expected and what was given.  The public entry
points (:func:`~minitf.decoding.init_cache`, the searches, the logit processors) call them
once, on entry.
"""
from __future__ import annotations

import numpy as np

from ..attention import check_attention_mask
from ..checks import check_choice, check_instance, check_int, check_number
from ..models.decoder_only import DecoderOnly
from ..models.encoder_decoder import EncoderDecoder
from ..models.pointer_generator import PointerGenerator
from ..models.rnn_seq2seq import RNNSeq2Seq

MODEL = "model"  # the default of eos_id: the model's own, model.config.eos_id (None already means "never")


# ---- the model and its cache ----------------------------------------------------------------
def _check_model(model) -> None:
    check_instance("model", model, (EncoderDecoder, DecoderOnly, RNNSeq2Seq),
                   "a minitf EncoderDecoder, DecoderOnly or RNNSeq2Seq")


def _check_cacheable(model) -> None:
    """A KV cache is valid for a causal decoder only: without the causal mask every position
    would see the ones after it, so a cached key or value would change as tokens arrive.
    (An RNNSeq2Seq has no KV cache: :func:`start_decoding` hands it its own state.)"""
    check_instance("model", model, (EncoderDecoder, DecoderOnly), "a minitf EncoderDecoder or DecoderOnly")
    if not model.config.causal:
        raise ValueError("model: expected a causal decoder (config.causal=True) for cached decoding, got "
                         "config.causal=False; decode it without the cache (greedy_search(..., use_cache=False))")


def _check_not_recurrent(model) -> None:
    """Re-running the decoder on the whole prefix (``use_cache=False``) is the transformer's
    reference path; a recurrent decoder only has its step."""
    if isinstance(model, RNNSeq2Seq):
        raise ValueError("use_cache: expected None or True for an RNNSeq2Seq (it decodes step by step from its "
                         "state), got False")


def _check_eval(model) -> None:
    if model.training and model.config.dropout > 0:
        raise ValueError("model: expected eval mode for decoding (dropout is active in training "
                         "mode); call model.eval() first")


def _check_cache_fits(model, cache) -> None:
    """A cache made for another model would be read wrongly (or cut short by zip): refuse it.  And
    check, once a step, the rows and masks the step's attentions then read unchecked."""
    c = model.config
    if isinstance(model, PointerGenerator) != (cache.copy is not None):
        raise ValueError(f"cache: expected one made for this {type(model).__name__} by start_decoding(model, src_ids) "
                         f"(a PointerGenerator's holds its extended sources, KVCache.copy; no other model's does)")
    if isinstance(model, DecoderOnly) != (cache.prompt_pad is not None):
        made_for = "a DecoderOnly" if cache.prompt_pad is not None else "an EncoderDecoder"
        raise ValueError(f"cache: expected one made for this {type(model).__name__} (start_decoding(model, src_ids)), "
                         f"got one made for {made_for}")
    got = (len(cache.layers), cache.layers[0].K_self.shape[1], cache.layers[0].K_self.shape[3]) if cache.layers \
        else (0, c.n_heads, c.d_head)  # no layers: nothing else to compare
    if got != (c.n_decoder_layers, c.n_heads, c.d_head):
        raise ValueError(f"cache: expected one made for this model ({c.n_decoder_layers} decoder layers, "
                         f"{c.n_heads} heads of size {c.d_head}), got {got[0]} layers, {got[1]} heads of size {got[2]}")
    # The steps' attentions read the cache unchecked (check_args=False): its rows and masks are checked
    # here, once a step.
    kv = cache.layers[0] if cache.layers else None
    N = cache.batch_rows
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
    if isinstance(model, DecoderOnly) and np.ndim(src_ids) == 2:  # its prompt, the source, takes S of them
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
