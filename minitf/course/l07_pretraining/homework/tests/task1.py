"""Homework 7, task 7.1 (T5 span corruption from a given mask): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data.noise import noise_span_to_unique_sentinel, nonnoise_span_to_unique_sentinel
from minitf.grading.asserts import expect_equal_ids, fail
from minitf.grading.problems import shapes

from .common import N_SENTINELS, T5_VECTOR, any_mask, call_ids, check_ids, check_not_wrapped, random_text, runs, t5_mask

HOMEWORK = "hw07"
task1 = pytest.mark.hw07_task1


# =====================================================================================
# Task 7.1 -- span_corruption
# =====================================================================================
def diagnose_sentinels(name, out, expected, V) -> str | None:
    """``out`` has the right tokens in the right places but other sentinel ids: say which mistake."""
    if out.shape != expected.shape:
        return None
    is_s = expected >= V - N_SENTINELS  # (n,) where the sentinels are
    if not np.array_equal(out[~is_s], expected[~is_s]):
        return None
    got, want = out[is_s], expected[is_s]
    if np.array_equal(got, want + 1):
        return (f"{name}: the sentinels are off by one ({got.tolist()} instead of {want.tolist()}): ids run from 0 to "
                f"V - 1 = {V - 1}, so the first sentinel is V - 1, not V = {V}")
    if got.size > 1 and np.array_equal(np.sort(got), np.sort(want)) or (got.size > 1 and np.all(np.diff(got) > 0)):
        return (f"{name}: the sentinels are in the wrong order ({got.tolist()} instead of {want.tolist()}): they are "
                f"counted from the top of the vocabulary DOWN, the first span gets V - 1 = {V - 1}, the second "
                f"V - 2 = {V - 2}, ...")
    if got.size and got.max() < V - N_SENTINELS:
        return (f"{name}: the sentinels were taken from the bottom of the vocabulary ({got.tolist()}): those ids are "
                f"ordinary tokens. T5's sentinels are its extra ids at the top: V - 1 = {V - 1}, V - 2, ...")
    return (f"{name}: the tokens are right but the sentinel ids are not: expected {want.tolist()}, received "
            f"{got.tolist()} (the k-th span, k = 0, 1, ..., gets V - 1 - k)")


def intuitive_target(tokens, mask, V) -> np.ndarray:
    """Sentinel k before the k-th noise span, and a closing sentinel: what a student who
    reads the paper's picture (not T5's code) writes."""
    pieces = []
    for k, (s, e) in enumerate(runs(mask)):
        pieces += [V - 1 - k, *tokens[s:e].tolist()]
    return np.array(pieces + [V - 1 - len(runs(mask))], dtype=np.int64)


def check_span_corruption(fn, tokens, mask, V) -> None:
    out = call_ids(fn, tokens, mask, V, names=["tokens", "noise_mask", "vocab_size"], ids_dtype=tokens.dtype)
    if not isinstance(out, tuple) or len(out) != 2:
        fail(f"span_corruption: expected a tuple (inputs, targets), received {type(out).__name__}")
    inputs, targets = check_ids("inputs", out[0]), check_ids("targets", out[1])
    want_in = noise_span_to_unique_sentinel(tokens, mask, V)
    want_tgt = nonnoise_span_to_unique_sentinel(tokens, mask, V)
    problem = f"tokens {tokens.tolist()} ({tokens.dtype}), noise_mask {mask.astype(int).tolist()}, V = {V}"
    check_not_wrapped("inputs", inputs, want_in, tokens.dtype, problem)
    check_not_wrapped("targets", targets, want_tgt, tokens.dtype, problem)
    L, n_noise = len(tokens), int(mask.sum())
    if not np.array_equal(inputs, want_in):
        if n_noise and np.array_equal(inputs, tokens):
            fail(f"inputs is the text unchanged: each run of noise tokens is to be replaced by one sentinel, "
                 f"expected {want_in.tolist()} ({problem})")
        if n_noise > len(runs(mask)) and len(inputs) == L and np.array_equal(inputs[~mask], tokens[~mask]):
            fail(f"inputs has {L} tokens, as many as the text: every noise token got its own sentinel (or mask). T5 "
                 f"replaces each SPAN, a run of noise tokens, by ONE sentinel: expected {want_in.tolist()}, received "
                 f"{inputs.tolist()} ({problem})")
        mistake = diagnose_sentinels("inputs", inputs, want_in, V)
        if mistake:
            fail(f"{mistake} ({problem})")
        expect_equal_ids("inputs", inputs, want_in,
                         hint=f"each run of noise tokens becomes one sentinel; {problem}")
    if np.array_equal(targets, want_tgt):
        return
    if np.array_equal(targets, tokens) and not mask.all():
        fail(f"the target is the whole text: that is BART's target, not T5's. T5's target holds only the noise "
             f"spans, each run of non-noise tokens replaced by one sentinel: expected {want_tgt.tolist()} ({problem})")
    if not mask[-1] and np.array_equal(targets, want_tgt[:-1]):
        fail(f"the target misses its final sentinel: the text ends with non-noise tokens, and that last run becomes "
             f"a sentinel too ({want_tgt[-1]}): expected {want_tgt.tolist()}, received {targets.tolist()} ({problem})")
    if L - n_noise > len(runs(~mask)) and len(targets) == L and np.array_equal(targets[mask], tokens[mask]):
        fail(f"targets has {L} tokens, as many as the text: every non-noise token got its own sentinel. Each RUN of "
             f"non-noise tokens becomes one sentinel: expected {want_tgt.tolist()} ({problem})")
    if np.array_equal(targets, intuitive_target(tokens, mask, V)):
        fail(f"the target puts sentinel k before the k-th noise span and always ends with a sentinel: that is T5's "
             f"target only for a text that starts AND ends with non-noise. T5's code turns each run of NON-noise "
             f"tokens into a sentinel (nonnoise_span_to_unique_sentinel; T5's test vector: tokens [10..15], mask "
             f"TTFFTF -> [10, 11, 999, 14, 998]): expected {want_tgt.tolist()}, received {targets.tolist()} "
             f"({problem})")
    mistake = diagnose_sentinels("targets", targets, want_tgt, V)
    if mistake:
        fail(f"{mistake} ({problem})")
    expect_equal_ids("targets", targets, want_tgt,
                     hint=f"each run of non-noise tokens becomes one sentinel, numbered as in the input; {problem}")


@task1
def test_span_corruption_t5_test_vector(submission, homework_seed):
    """T5's own test vector; on the secret seed, one like it (a text that starts with noise) that no
    public run shows."""
    span_corruption = submission.function("span_corruption")
    v = T5_VECTOR
    check_span_corruption(span_corruption, v["tokens"].copy(), v["noise_mask"].copy(), v["vocab_size"])
    if homework_seed.secret:
        rng = homework_seed.rng("t5 test vector")
        mask = any_mask(rng, 6)
        mask[0] = True
        check_span_corruption(span_corruption, random_text(rng, 6, 1000), mask, 1000)


@task1
def test_span_corruption_t5_masks(submission, homework_seed):
    span_corruption = submission.function("span_corruption")
    rng = np.random.default_rng(homework_seed + 71)
    # the last: a text stored as uint16, as a pretraining corpus often is (T5's 32128 ids fit)
    for L, V, dtype in [(12, 100, np.int64), (30, 1000, np.int64), (7, 200, np.int32), (2, 80, np.int64),
                        (25, 32128, np.int64), (20, 32128, np.uint16)]:
        tokens = random_text(rng, L, V, dtype)
        check_span_corruption(span_corruption, tokens, t5_mask(rng, L), V)


@task1
def test_span_corruption_any_mask(submission, homework_seed):
    span_corruption = submission.function("span_corruption")
    rng = np.random.default_rng(homework_seed + 72)
    for L, V in shapes(homework_seed, [(10, 100), (16, 500), (9, 1000), (20, 300)], L=(1, 40), V=(150, 2000)):
        tokens = random_text(rng, L, V)
        mask = any_mask(rng, L)
        mask[0] = True  # the text starts with noise, as in T5's test vector
        check_span_corruption(span_corruption, tokens, mask, V)
    for L, V in [(13, 100), (8, 250)]:  # starts and ends with non-noise
        tokens, mask = random_text(rng, L, V), any_mask(rng, L)
        mask[[0, -1]] = False
        check_span_corruption(span_corruption, tokens, mask, V)
    tokens = random_text(rng, 6, 100)
    for mask in (np.zeros(6, bool), np.ones(6, bool), np.array([False]), np.array([True])):
        check_span_corruption(span_corruption, tokens[:len(mask)].copy(), mask, 100)
