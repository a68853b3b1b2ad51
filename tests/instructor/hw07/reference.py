"""Homework 7 -- Pretraining objectives.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the reasoning.  CI grades this
file and expects full marks (``minitf grade hw07 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: L tokens in the text; every array is 1-D (one text), as in T5's and fairseq's code.
"""
from __future__ import annotations

import numpy as np


# =====================================================================================
# Task 7.1 -- T5 span corruption from a given noise mask
# =====================================================================================
def _runs_to_sentinels(tokens, is_run, vocab_size):
    """Each run of ``is_run`` positions becomes one sentinel: vocab_size - 1 for the first
    run, vocab_size - 2 for the second...; the other positions are kept."""
    prev = np.concatenate([[False], is_run[:-1]])  # (L,) the previous position is in a run
    first = is_run & ~prev  # (L,) where each run starts
    sentinel = vocab_size - np.cumsum(first)  # (L,) vocab_size - (runs started so far)
    out = np.where(first, sentinel, tokens)  # (L,) the run's first token -> its sentinel
    return out[~(is_run & prev)].astype(np.int64)  # the rest of each run is dropped


def span_corruption(tokens, noise_mask, vocab_size):
    """Task 7.1: tokens (L,), noise_mask (L,) bool -> (inputs, targets), 1-D int64.

    inputs: every run of noise becomes one sentinel; targets: every run of non-noise
    becomes one sentinel (T5's noise_span_to_unique_sentinel / nonnoise_span_to_unique_sentinel).
    """
    tokens = np.asarray(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    return (_runs_to_sentinels(tokens, noise_mask, vocab_size),
            _runs_to_sentinels(tokens, ~noise_mask, vocab_size))


# =====================================================================================
# Task 7.2 -- the inverse: rebuild the text from the input and the target
# =====================================================================================
def rebuild(inputs, targets, vocab_size, n_sentinels):
    """Task 7.2: inputs (L_in,), targets (L_tgt,) -> the original text (L,), int64.

    The target's ordinary tokens, in order, are the noise tokens in order; the input's
    sentinels, in order, mark where their spans were.  Sentinel k of the input takes the
    k-th run of ordinary tokens of the target: the slots it opens are filled, left to right,
    with the target's ordinary tokens.
    """
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    in_sentinel = inputs >= first_sentinel  # (L_in,)
    tgt_ordinary = targets < first_sentinel  # (L_tgt,)
    prev = np.concatenate([[False], tgt_ordinary[:-1]])  # (L_tgt,)
    run_id = np.cumsum(tgt_ordinary & ~prev) - 1  # (L_tgt,) which run each ordinary token is in
    run_lengths = np.bincount(run_id[tgt_ordinary], minlength=int(in_sentinel.sum()))  # (spans,)
    if len(run_lengths) != in_sentinel.sum():
        raise ValueError(f"targets: expected {int(in_sentinel.sum())} spans (the input's sentinels), "
                         f"got {len(run_lengths)}")
    counts = np.ones(len(inputs), dtype=np.int64)  # (L_in,) how many output tokens each input token becomes
    counts[in_sentinel] = run_lengths
    owner = np.repeat(np.arange(len(inputs)), counts)  # (L,) the input position each output slot comes from
    from_target = in_sentinel[owner]  # (L,) a slot a sentinel opened
    out = np.empty(len(owner), dtype=np.int64)
    out[~from_target] = inputs[~in_sentinel]
    out[from_target] = targets[tgt_ordinary]
    return out


# =====================================================================================
# Task 7.3 -- BART's text infilling from given spans
# =====================================================================================
def text_infilling(tokens, starts, lengths, mask_id):
    """Task 7.3: tokens (L,), starts (n,), lengths (n,) -> the corrupted text, int64.

    A span of length >= 1 becomes ONE mask_id (its first token is replaced, the rest
    deleted); a span of length 0 inserts one mask_id before tokens[start].
    """
    tokens = np.asarray(tokens)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    L = len(tokens)
    real = lengths > 0
    cover = np.zeros(L + 1, dtype=np.int64)  # +1 at a span's start, -1 just past its end
    np.add.at(cover, starts[real], 1)
    np.add.at(cover, starts[real] + lengths[real], -1)
    in_span = np.cumsum(cover)[:L] > 0  # (L,) inside some span
    is_start = np.zeros(L, dtype=bool)
    is_start[starts[real]] = True  # (L,) the token that becomes the span's one mask
    keep = ~in_span | is_start  # (L,)
    out = np.where(is_start, mask_id, tokens)[keep].astype(np.int64)
    kept_before = np.concatenate([[0], np.cumsum(keep)])  # (L + 1,) kept tokens before position s
    inserts = np.sort(starts[~real])  # zero-length spans: a mask before tokens[s]
    return np.insert(out, kept_before[inserts], mask_id)


# =====================================================================================
# Task 7.4 -- concept check
# =====================================================================================
ANSWERS = {
    "7.4.1": "b",
    "7.4.2": "c",
    "7.4.3": "b",
    "7.4.4": "a",
    "7.4.5": "d",
}
