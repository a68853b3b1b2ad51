"""Logit processors: no-repeat n-grams, temperature, top-k, top-p (Lesson 9, section 3).

Each takes logits (..., V) and returns new ones with -inf on the removed tokens, in Hugging
Face's order and with its semantics (``NoRepeatNGramLogitsProcessor``, ``TopKLogitsWarper``,
``TopPLogitsWarper``); ``softmax`` of the result is the distribution a token is drawn from.
"""
from __future__ import annotations

import numpy as np

from ..layers.softmax import softmax
from ._args import _check_sampling_args, _check_top_k, _check_top_p

__all__ = ["banned_ngram_tokens", "top_k_filter", "top_p_filter", "warp_logits"]


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
