"""What every task's tests of homework 7 share: the test problems (texts, noise masks, spans)
drawn from the run's ``homework_seed``, minitf's answers, and the checks of a returned
sequence of token ids.

A text is a 1-D array of ordinary token ids in ``[3, V - N_SENTINELS)``: never a sentinel,
never the mask.  Its noise is drawn here -- a T5 noise mask (``random_spans_noise_mask``,
or any mask at all, T5's test vector being one that starts with noise), or BART spans with
Poisson(3) lengths -- and handed to the student's function, so the answer is exact.
"""
from __future__ import annotations

import numpy as np

from minitf.data.noise import mask_spans, random_spans_noise_mask
from minitf.grading.asserts import as_array, call, fail

N_SENTINELS = 64  # ids >= V - N_SENTINELS are sentinels in every problem
T5_VECTOR = dict(tokens=np.array([10, 11, 12, 13, 14, 15], dtype=np.int64),
                 noise_mask=np.array([True, True, False, False, True, False]), vocab_size=1000,
                 inputs=np.array([999, 12, 13, 998, 15]), targets=np.array([10, 11, 999, 14, 998]))
READ_ONLY = "the caller keeps the text, and its noise, for the next objective or the loss"


def random_text(rng, L: int, V: int, dtype=np.int64) -> np.ndarray:
    return rng.integers(3, V - N_SENTINELS, size=L).astype(dtype)


def t5_mask(rng, L: int) -> np.ndarray:
    """A mask as T5 draws it: non-noise first, noise last (density and span length vary)."""
    return random_spans_noise_mask(L, rng, noise_density=float(rng.uniform(0.15, 0.5)),
                                   mean_noise_span_length=float(rng.choice([1.5, 2.0, 3.0])))


def any_mask(rng, L: int) -> np.ndarray:
    """Any mask at all: it may start with noise, end with non-noise, or be all one kind."""
    return rng.random(L) < rng.uniform(0.2, 0.8)


def runs(is_run: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each maximal run of True, left to right."""
    padded = np.concatenate([[False], is_run, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def check_ids(name: str, value) -> np.ndarray:
    out = as_array(name, value, kind="i")
    if out.ndim != 1:
        fail(f"{name}: expected a 1-D array of token ids, received shape {out.shape}")
    return out.astype(np.int64)


# ---- ids stored as unsigned integers (a pretraining corpus often is) ----------------------------------
def unsigned_note(dtype) -> str:
    dtype = np.dtype(dtype)
    return (f"a pretraining corpus is often stored as {dtype} (every vocabulary below {np.iinfo(dtype).max + 1} "
            f"fits), and an unsigned array holds no negative number: a -1 (or any negative placeholder) written "
            f"into it raises, and one made in its dtype (np.where, np.full) wraps around to {np.iinfo(dtype).max}. "
            f"Say which tokens to keep or fill with a boolean array, or compute in int64")


def call_ids(fn, *args, names, ids_dtype):
    """``call(fn, *args)``, saying what an exception on ids stored as unsigned integers most likely is."""
    from minitf.grading.workers import StudentRaised
    try:
        return call(fn, *args, names=names, why=READ_ONLY)
    except StudentRaised as e:
        if np.dtype(ids_dtype).kind != "u":
            raise
        fail(f"{fn.__name__} raised {e.kind} on ids stored as unsigned integers ({np.dtype(ids_dtype)}): "
             f"{unsigned_note(ids_dtype)}")


def check_not_wrapped(name: str, out: np.ndarray, expected: np.ndarray, ids_dtype, problem: str) -> None:
    """``out`` (int64) holds the largest id of an unsigned ``ids_dtype`` the answer does not: a -1 wrapped around."""
    dtype = np.dtype(ids_dtype)
    if dtype.kind != "u":
        return
    top = np.iinfo(dtype).max
    if (out == top).sum() > (expected == top).sum():
        fail(f"{name} holds {top}, which is -1 wrapped around: a negative placeholder wrapped around in the "
             f"{dtype} ids. {unsigned_note(dtype)}: expected {expected.tolist()}, received {out.tolist()} ({problem})")


# ---- BART text infilling -----------------------------------------------------------------------------
def random_spans(rng, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Spans as text infilling draws them: Poisson(3) lengths (zeros kept), the spans of
    length >= 1 disjoint, each length-0 span at a place no longer span covers beyond its
    start; shuffled."""
    starts, lengths = [], []
    p_span, p_zero = rng.uniform(0.15, 0.5), rng.uniform(0.0, 0.35)
    i = 0
    while i < L:
        while rng.random() < p_zero:  # length-0 spans before token i (sometimes two)
            starts.append(i), lengths.append(0)
        if rng.random() < p_span:
            n = int(min(max(1, rng.poisson(3.0)), L - i))
            starts.append(i), lengths.append(n)
            i += n
        else:
            i += 1
    if rng.random() < 0.3:
        starts.append(L), lengths.append(0)
    order = rng.permutation(len(starts))
    return np.array(starts, dtype=np.int64)[order], np.array(lengths, dtype=np.int64)[order]


def _with_inserts(tokens, starts, lengths, mask_id, placeholder):
    """minitf's mask_spans on the spans of length >= 1, after putting ``placeholder`` before
    tokens[s] for every length-0 span at s."""
    real = lengths > 0
    zero = np.sort(starts[~real])
    t = np.insert(tokens.astype(np.int64), zero, placeholder)
    shifted = starts[real] + np.searchsorted(zero, starts[real], side="right")  # length-0 spans at or before
    return mask_spans(t, shifted, lengths[real], mask_id)


def expected_infilling(tokens, starts, lengths, mask_id) -> np.ndarray:
    out = _with_inserts(tokens, starts, lengths, mask_id, -1)
    return np.where(out == -1, mask_id, out)


def _infill_by_rule(tokens, starts, lengths, mask_id, *, extra=0, per_token=False, zero="insert",
                    span_mask=True) -> np.ndarray:
    """Text infilling written the slow way, with a classic mistake switched on: each span
    covers ``lengths + extra`` tokens; ``per_token`` masks each covered token; ``zero`` says
    what a length-0 span does ("insert", "skip" or "replace" the token at its start; "end_once":
    insert, but only one mask for all those at the end);
    ``span_mask=False`` deletes a span without a mask."""
    L = len(tokens)
    real = lengths > 0
    covered = np.zeros(L, dtype=bool)
    for s, n in zip(starts[real].tolist(), lengths[real].tolist()):
        covered[s:s + n + extra] = True
    span_start = np.zeros(L, dtype=bool)
    span_start[starts[real]] = True
    zeros = starts[~real].tolist()
    out = []
    for i in range(L + 1):
        n_zero = zeros.count(i)
        if zero == "insert" or (zero == "end_once" and i < L):
            out += [mask_id] * n_zero
        elif zero == "end_once":
            out += [mask_id] * min(n_zero, 1)
        if i == L:
            break
        if zero == "replace" and n_zero and not covered[i]:
            out.append(mask_id)
        elif span_start[i] and not per_token:
            out += [mask_id] if span_mask else []
        elif covered[i]:
            out += [mask_id] if per_token else []
        else:
            out.append(int(tokens[i]))
    return np.array(out, dtype=np.int64)


def infilling_variants(tokens, starts, lengths, mask_id) -> dict:
    """What each classic mistake returns instead, by the phrase that names it."""
    args = (tokens, starts, lengths, mask_id)
    return {
        "a <mask> per token: text infilling replaces each span, whatever its length, by ONE <mask> (one mask per "
        "token is token masking)": _infill_by_rule(*args, per_token=True),
        "the spans of length 0 were skipped: a span of length 0 INSERTS a <mask> that hides nothing (the model "
        "must learn that a mask can stand for no token)": _infill_by_rule(*args, zero="skip"),
        "a span of length 0 replaced the token at its start instead of inserting a <mask> before it (a "
        "length-0 span covers no token: nothing is removed)": _infill_by_rule(*args, zero="replace"),
        "the spans were deleted without leaving a <mask>: that is token deletion; text infilling leaves one "
        "<mask> per span": _infill_by_rule(*args, span_mask=False),
        "each span covered one token too many (starts[i] .. starts[i] + lengths[i], end included): the span is "
        "tokens[start : start + length], end excluded": _infill_by_rule(*args, extra=1),
        "only one <mask> was inserted at the end for several spans of length 0 there: each span of length 0 "
        "inserts its own <mask>, at the end of the text (start == L) as anywhere else": _infill_by_rule(
            *args, zero="end_once"),
    }
