"""Homework 7, task 7.2 (rebuilding the text from T5's input and target): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data.noise import noise_span_to_unique_sentinel, nonnoise_span_to_unique_sentinel
from minitf.grading.asserts import expect_equal_ids, fail
from minitf.grading.problems import shapes

from .common import N_SENTINELS, T5_VECTOR, any_mask, call_ids, check_ids, check_not_wrapped, random_text, runs, t5_mask

HOMEWORK = "hw07"
task2 = pytest.mark.hw07_task2


# =====================================================================================
# Task 7.2 -- rebuild
# =====================================================================================
def _spans(targets, first_sentinel) -> list[np.ndarray]:
    """The target's runs of ordinary tokens, in order."""
    return [targets[s:e] for s, e in runs(targets < first_sentinel)]


def _fill(inputs, pieces, first_sentinel) -> np.ndarray:
    out, k = [], 0
    for t in inputs.tolist():
        if t >= first_sentinel:
            out += pieces[k].tolist() if k < len(pieces) else []
            k += 1
        else:
            out.append(t)
    return np.array(out, dtype=np.int64)


def rebuild_variants(inputs, targets, V, n_sentinels) -> dict:
    """What each classic mistake returns instead, by the phrase that names it."""
    first = V - n_sentinels
    spans = _spans(targets, first)
    out = {"the spans were filled in in reverse order: the input's FIRST sentinel (V - 1, the highest id) takes "
           "the target's FIRST run of ordinary tokens; sorting the sentinel ids in increasing order reverses them":
           _fill(inputs, spans[::-1], first)}
    at_end = np.concatenate([inputs[inputs < first], targets[targets < first]]).astype(np.int64)
    out["the spans were put at the end instead of where the input's sentinels are"] = at_end
    by_id = []  # the span right after the same sentinel id in the target
    for t in inputs.tolist():
        if t >= first:
            where = np.flatnonzero(targets == t)
            if where.size:
                rest = targets[where[0] + 1:]
                stop = np.flatnonzero(rest >= first)
                by_id += rest[:stop[0] if stop.size else len(rest)].tolist()
        else:
            by_id.append(t)
    out["each input sentinel was filled with the span after the SAME sentinel id in the target: that holds only "
        "when the text starts with non-noise. In T5's test vector (input [999, 12, 13, 998, 15], target [10, 11, "
        "999, 14, 998]) the input's 999 is filled with 10 11, which come BEFORE the target's 999: the k-th sentinel "
        "of the input takes the k-th run of ordinary tokens of the target"] = np.array(by_id, dtype=np.int64)
    return out


def check_rebuild(fn, tokens, mask, V, n_sentinels=N_SENTINELS, dtype=np.int64) -> None:
    """``dtype``: the pair's, as the caller stores it (uint16: a pretraining corpus's)."""
    inputs = noise_span_to_unique_sentinel(tokens, mask, V).astype(dtype)
    targets = nonnoise_span_to_unique_sentinel(tokens, mask, V).astype(dtype)
    out = check_ids("tokens", call_ids(fn, inputs, targets, V, n_sentinels,
                                       names=["inputs", "targets", "vocab_size", "n_sentinels"], ids_dtype=dtype))
    expected = tokens.astype(np.int64)
    if np.array_equal(out, expected):
        return
    problem = (f"inputs {inputs.tolist()}, targets {targets.tolist()} ({np.dtype(dtype)}), V = {V}, "
               f"n_sentinels = {n_sentinels}")
    check_not_wrapped("tokens", out, expected, dtype, problem)
    if (out >= V - n_sentinels).any():
        fail(f"a sentinel ({out[out >= V - n_sentinels][0]}) was left in the rebuilt text: sentinels are "
             f"placeholders, in the input and in the target; the original text has none. Expected "
             f"{expected.tolist()}, received {out.tolist()} ({problem})")
    for phrase, variant in rebuild_variants(inputs, targets, V, n_sentinels).items():
        if np.array_equal(out, variant):
            fail(f"{phrase}: expected {expected.tolist()}, received {out.tolist()} ({problem})")
    expect_equal_ids("tokens", out, expected,
                     hint=f"the k-th sentinel of the input takes the k-th run of ordinary tokens of the target; "
                          f"{problem}")


@task2
def test_rebuild_t5_test_vector(submission, homework_seed):
    """T5's own test vector; on the secret seed, one like it that no public run shows."""
    rebuild = submission.function("rebuild")
    v = T5_VECTOR
    check_rebuild(rebuild, v["tokens"].copy(), v["noise_mask"].copy(), v["vocab_size"], 16)
    if homework_seed.secret:
        rng = homework_seed.rng("t5 test vector")
        mask = any_mask(rng, 6)
        mask[0] = True
        check_rebuild(rebuild, random_text(rng, 6, 1000), mask, 1000, 16)


@task2
def test_rebuild_t5_masks(submission, homework_seed):
    rebuild = submission.function("rebuild")
    rng = np.random.default_rng(homework_seed + 73)
    for L, V in [(12, 100), (30, 1000), (7, 200), (2, 80), (40, 32128)]:
        check_rebuild(rebuild, random_text(rng, L, V), t5_mask(rng, L), V)
    # a pair stored as uint16, as a pretraining corpus often is (T5's 32128 ids fit)
    check_rebuild(rebuild, random_text(rng, 30, 32128), t5_mask(rng, 30), 32128, dtype=np.uint16)


@task2
def test_rebuild_any_mask(submission, homework_seed):
    rebuild = submission.function("rebuild")
    rng = np.random.default_rng(homework_seed + 74)
    for L, V in shapes(homework_seed, [(10, 100), (16, 500), (9, 1000), (20, 300)], L=(1, 40), V=(150, 2000)):
        tokens, mask = random_text(rng, L, V), any_mask(rng, L)
        mask[0] = True  # starts with noise
        check_rebuild(rebuild, tokens, mask, V)
    tokens = random_text(rng, 6, 100)
    for mask in (np.zeros(6, bool), np.ones(6, bool), np.array([True, False] * 3)):
        check_rebuild(rebuild, tokens, mask, 100)


@task2
def test_rebuild_with_every_sentinel_used(submission, homework_seed):
    """``n_sentinels`` at its smallest: exactly the sentinels the pair uses, so the lowest of them is
    V - n_sentinels itself, and the text holds the largest ordinary id, V - n_sentinels - 1 (an
    off-by-one in "ids >= V - n_sentinels are sentinels" shows)."""
    rebuild = submission.function("rebuild")
    rng = np.random.default_rng(homework_seed + 75)
    for L, V in shapes(homework_seed, [(9, 40), (14, 60)], L=(2, 30), V=(40, 300)):
        mask = any_mask(rng, L)
        mask[rng.integers(0, L)] = not mask.all()  # noise and non-noise both
        n_sentinels = max(len(runs(mask)), len(runs(~mask)))
        tokens = rng.integers(3, V - n_sentinels, size=L).astype(np.int64)
        tokens[rng.integers(0, L)] = V - n_sentinels - 1  # the largest ordinary id
        check_rebuild(rebuild, tokens, mask, V, n_sentinels)
