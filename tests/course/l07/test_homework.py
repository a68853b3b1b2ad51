"""Homework 7 (pretraining objectives): each classic mistake fails the right task with a
message naming it, a mistake costs nothing on the other tasks, calling minitf's own code
gets no credit, and the tests' checks hold for the reference on many random problems.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import expect_caught, expect_minitf_refused, graded, reference_path, submission_file, task_result  # noqa: F401

from minitf.data.noise import (
    noise_span_to_unique_sentinel,
    nonnoise_span_to_unique_sentinel,
    random_spans_noise_mask,
    text_infilling,
)
from minitf.course.l07_pretraining.homework.tests import common

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw07_t5_target_whole_text", 1, "the target is the whole text"),
    ("hw07_t5_sentinel_per_token", 1, "every noise token got its own sentinel"),
    ("hw07_t5_sentinels_ascending", 1, "the sentinels are in the wrong order"),
    ("hw07_t5_sentinel_off_by_one", 1, "the sentinels are off by one"),
    ("hw07_t5_sentinel_before_each_span", 1, "puts sentinel k before the k-th noise span"),
    ("hw07_t5_no_final_sentinel", 1, "the target misses its final sentinel"),
    # new in issue 28 (round 2)
    ("hw07_t5_placeholder_minus_one", 1, "on ids stored as unsigned integers"),
    ("hw07_rebuild_reverse_order", 2, "filled in in reverse order"),
    ("hw07_rebuild_by_sentinel_id", 2, "the span after the SAME sentinel id"),
    ("hw07_rebuild_sentinels_left", 2, "was left in the rebuilt text"),
    ("hw07_rebuild_at_end", 2, "the spans were put at the end"),
    # new in issue 28 (round 2)
    ("hw07_rebuild_holes_minus_one", 2, "a negative placeholder wrapped around"),
    ("hw07_infill_mask_per_token", 3, "a <mask> per token"),
    ("hw07_infill_zero_length_skipped", 3, "the spans of length 0 were skipped"),
    ("hw07_infill_zero_length_replaces", 3, "replaced the token at its start instead of inserting"),
    ("hw07_infill_deletes_span", 3, "deleted without leaving a <mask>"),
    ("hw07_infill_span_end_included", 3, "one token too many"),
    # new in issue 28 (round 2)
    ("hw07_infill_placeholder_zero", 3, "the document's own 0s disappeared"),
    ("hw07_infill_placeholder_minus_one", 3, "a negative placeholder wrapped around"),
    ("hw07_infill_end_inserts_once", 3, "only one <mask> was inserted at the end"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw07_rebuild_sentinel_boundary", 2, 'was left in the rebuilt text'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number], homework="hw07"), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """A target that is the whole text loses task 7.1's points only."""
    result = graded(submission_file("hw07_t5_target_whole_text"), tasks=[1, 2, 3], homework="hw07")
    t1 = task_result(result, 1)
    assert t1.status == "failed" and t1.score < t1.max_score
    for number in (2, 3):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw07_calls_minitf"), tasks=[1, 2, 3], homework="hw07")
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    assert t1.status == "no credit" and t1.score == 0, (t1.status, t1.message)
    assert "noise_span_to_unique_sentinel" in t1.message, t1.message
    assert t2.status == "no credit" and t2.score == 0, (t2.status, t2.message)
    assert "rebuild_from_span_corruption" in t2.message, t2.message
    expect_minitf_refused(t3)
    assert "minitf is not available" in t3.message, t3.message


# ---- the reference against minitf on many problems (in-process, no grading) ---------------------------------
def test_reference_agrees_with_minitf_on_many_problems():
    ref = runpy.run_path(str(reference_path("hw07")))
    rng = np.random.default_rng(0)
    for seed in range(300):
        L = int(rng.integers(1, 40))
        V = int(rng.choice([100, 1000, 32128]))
        tokens = common.random_text(rng, L, V)
        mask = common.t5_mask(rng, L) if seed % 2 else common.any_mask(rng, L)
        inputs, targets = ref["span_corruption"](tokens, mask, V)
        assert np.array_equal(inputs, noise_span_to_unique_sentinel(tokens, mask, V))
        assert np.array_equal(targets, nonnoise_span_to_unique_sentinel(tokens, mask, V))
        assert np.array_equal(ref["rebuild"](inputs, targets, V, common.N_SENTINELS), tokens)
        starts, lengths = common.random_spans(rng, L)
        out = ref["text_infilling"](tokens, starts, lengths, 4)
        assert np.array_equal(out, common.expected_infilling(tokens, starts, lengths, 4))
        variants = common.infilling_variants(tokens, starts, lengths, 4)
        assert (lengths == 0).sum() + (lengths > 1).sum() == 0 or any(
            not np.array_equal(out, v) for v in variants.values())


def test_the_tests_expected_infilling_is_minitfs_text_infilling():
    """The tests' answer for given spans equals what minitf's text_infilling does with the
    spans it draws itself (replayed from the same generator)."""
    from minitf.data.noise import _how_many, poisson_span_lengths
    for seed in range(200):
        rng = np.random.default_rng(seed)
        tokens = common.random_text(rng, int(rng.integers(2, 40)), 200)
        want = text_infilling(tokens, np.random.default_rng(seed + 1000), 4)
        r = np.random.default_rng(seed + 1000)  # replay its draws
        lengths = poisson_span_lengths(_how_many(len(tokens), 0.3), r, 3.0)
        spans = lengths[lengths > 0]
        starts = r.permutation(len(tokens))[:len(spans)]
        overlapping = np.any(np.diff(np.sort(starts)) < spans[np.argsort(starts)][:-1]) if len(spans) > 1 else False
        if overlapping or (starts + spans > len(tokens)).any() or (lengths == 0).any():
            continue  # minitf merges overlaps and places inserts by the result's index: not this task's input
        assert np.array_equal(common.expected_infilling(tokens, starts, spans, 4), want)


def test_t5_vector_and_random_masks_match_t5s_reference_semantics():
    v = common.T5_VECTOR
    ref = runpy.run_path(str(reference_path("hw07")))
    inputs, targets = ref["span_corruption"](v["tokens"], v["noise_mask"], v["vocab_size"])
    assert inputs.tolist() == v["inputs"].tolist() and targets.tolist() == v["targets"].tolist()
    mask = random_spans_noise_mask(20, 0)
    assert not mask[0] and mask[-1]  # T5's masks start with non-noise and end with noise
