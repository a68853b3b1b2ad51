"""Homework 3 (The causal mask): each classic mistake fails the right task with a message that
names it, a mistake costs nothing elsewhere, and calling minitf's own implementation gets no
credit.  (The checks every homework must pass -- reference 100, blank 0, files, key, scan -- are
in tests/grading/test_homeworks.py, parametrized over all homeworks.)"""
from __future__ import annotations

import ast

import pytest
from grading.tools import base_name, expect_caught, expect_minitf_refused, graded, submission_file, task_result  # noqa: F401

from minitf.grading import get_homework

HW03 = get_homework("hw03")

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw03_causal_blocks_diagonal", 1, "the diagonal is blocked"),
    ("hw03_causal_ignores_offset", 1, "ignores the offset"),
    ("hw03_mask_minus_inf", 1, "holds -inf"),
    ("hw03_padding_on_queries", 1, "masks padded *queries*"),
    ("hw03_padding_keep_mask", 1, "1/0 'keep' mask"),
    # new in issue 28 (round 2)
    ("hw03_mask_float32_min", 1, "overflows float32"),
    ("hw03_mask_after_softmax", 2, "applied after the softmax"),
    ("hw03_fully_masked_rows_averaged", 2, "is fully masked (every key blocked), yet its weights sum to 1"),
    ("hw03_forward_minus_inf", 2, "-inf - (-inf) = nan"),
    # new in issue 28 (round 2)
    ("hw03_softmax_without_max", 2, "np.exp(scores) overflowed to inf"),
    ("hw03_max_before_mask", 2, "taken before the mask was added"),
    ("hw03_fully_masked_by_row_sum", 2, "taken for a fully masked row"),
    ("hw03_fully_masked_only_for_padding_shape", 2, "whatever the mask's shape"),
    ("hw03_backward_recomputes_unmasked", 3, "WITHOUT the mask"),
    ("hw03_backward_diagonal_softmax", 3, "only its diagonal"),
    ("hw03_backward_missing_scale", 3, "miss the 1/sqrt(Dh)"),
    ("hw03_finite_differences", 3, "precision of finite differences"),
    ("hw03_leak_changes_position_t", 4, "own input was replaced"),
    ("hw03_leak_in_training_mode", 4, "dropout"),
    ("hw03_leak_in_place", 4, "changed its input decoder_input_ids in place"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw03_leak_in_the_logits_dtype", 4, 'expected a float64 array'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_fails_its_task(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_classic_mistake_costs_nothing_elsewhere(submission_file):
    result = graded(submission_file("hw03_mask_after_softmax"))
    assert [t.ok for t in result.tasks] == [True, False, True, True, True]
    assert all(t.score == t.max_score for t in result.tasks if t.task.number != 2)


def test_the_mask_after_the_softmax_is_measured(submission_file):
    """The message gives the row sum it measured, and the leak test names the denominator."""
    t2 = task_result(graded(submission_file("hw03_mask_after_softmax"), tasks=[2]), 2)
    assert "a row sums to as little as 0." in t2.message, t2.message
    leak = [x for x in t2.tests if base_name(x["name"]) == "test_changing_a_future_key_changes_nothing_before_it"]
    assert leak and "the future leaks in" in leak[0]["message"] and "denominator" in leak[0]["message"]


def test_ignoring_the_offset_costs_only_the_offset_tests(submission_file):
    t1 = task_result(graded(submission_file("hw03_causal_ignores_offset"), tasks=[1]), 1)
    failed = {base_name(x["name"]) for x in t1.tests if x["outcome"] != "passed"}
    assert failed == {"test_causal_mask_with_an_offset", "test_a_chunk_of_queries_agrees_with_the_full_causal_pass"}


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw03_calls_minitf"), tasks=[1, 2, 3, 4])
    t1, t2, t3, t4 = (task_result(result, k) for k in (1, 2, 3, 4))
    for t, name in ((t1, "causal_mask"), (t2, "scaled_dot_product_attention")):
        assert t.status == "no credit" and t.score == 0, (t.label, t.status)
        assert "no credit" in t.message and name in t.message, t.message
    for t in (t3, t4):
        expect_minitf_refused(t)
        assert "minitf is not available" in t.message, t.message


def test_test_names_are_unique_across_the_task_modules():
    """The grader's report keys tests by name (the modules sit outside its rootdir): two tests of
    the same name in two task modules would share one result."""
    names = [node.name for path in HW03.test_files for node in ast.parse(path.read_text()).body
             if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
