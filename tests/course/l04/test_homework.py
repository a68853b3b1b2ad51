"""Homework 4 (cross-attention): each classic mistake fails the right task with a message
naming it, a mistake costs nothing on the other tasks, calling minitf's own code gets no
credit, finite differences do not pass for a backward, and the tests' tolerances hold for
the reference on many shapes.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import (expect_caught, expect_minitf_refused, graded, reference_path, submission_file,  # noqa: F401
                           submission_path, task_result)

from minitf.course.l04_cross_attention.homework.tests import common, task1, task2, task3

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw04_causal_cross", 1, "a causal mask was applied to cross-attention"),
    ("hw04_padding_ignored", 1, "the source padding mask was ignored"),
    ("hw04_kv_from_decoder", 1, "the keys and values came from the decoder stream"),
    ("hw04_mask_on_query_axis", 1, "the padding mask was put on the query axis"),
    ("hw04_softmax_over_queries", 1, "the softmax ran over the queries"),
    ("hw04_empty_source_softmax", 1, "has no real source token"),
    ("hw04_split_by_reshape", 2, "split into heads by reshape(B, H, S, Dh) alone"),
    ("hw04_kv_without_bias", 2, "misses the bias b_k"),
    ("hw04_step_without_mask", 2, "the step ignores src_mask"),
    ("hw04_step_heads_interleaved", 2, "the heads were merged in the wrong order"),
    ("hw04_backward_no_dV", 3, "the dV path is missing"),
    ("hw04_backward_no_scale", 3, "misses the 1/sqrt(Dh)"),
    ("hw04_dW_o_transposed", 3, "dW_o is transposed"),
    ("hw04_backward_forgets_mask", 3, "dX_kv reaches padded source positions"),
    ("hw04_backward_inputs_swapped", 3, "dX_q and dX_kv are swapped"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw04_step_scaled_by_np_sqrt", 2, 'y_t: expected dtype float32'),
    # new in issue 28 (round 2): inputs the tests never sent -- large scores (a key bias), padding not at the end,
    # a decoding step for a source without a real token
    ("hw04_softmax_overflows", 1, "each row's maximum before np.exp"),
    ("hw04_empty_judged_by_first_position", 1, "padding need not be at the end"),
    ("hw04_step_empty_source_softmax", 2, "which has no real source token"),
    ("hw04_step_cache_cut_to_length", 2, "attends to the first L cached positions"),
    ("hw04_step_softmax_overflows", 2, "each row's maximum before np.exp"),
    ("hw04_backward_softmax_overflows", 3, "each row's maximum before np.exp"),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """One wrong forward (a causal mask) loses task 4.1's points only: tasks 4.2 and 4.3 are
    graded on their own functions."""
    result = graded(submission_file("hw04_causal_cross"), tasks=[1, 2, 3])
    t1 = task_result(result, 1)
    assert t1.status == "failed" and t1.score < t1.max_score
    for number in (2, 3):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw04_calls_minitf"), tasks=[1, 2, 3])
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    assert t3.status == "no credit" and t3.score == 0, (t3.status, t3.message)
    assert "scaled_dot_product_attention_backward" in t3.message, t3.message  # in the source
    for t in (t1, t2):
        expect_minitf_refused(t)
        assert "minitf is not available" in t.message, t.message


def test_finite_differences_are_not_a_backward(submission_file):
    result = graded(submission_file("hw04_finite_differences"), tasks=[3])
    t3 = task_result(result, 3)
    assert t3.status == "failed" and t3.score == 0, (t3.status, t3.score, t3.message)
    assert "rtol 1e-10" in t3.message, t3.message


# ---- the tests' tolerances, on many shapes: the reference passes every check in-process -------------------
def test_reference_passes_every_check_on_many_shapes():
    """The checks that the graded tests run, applied to the reference directly, on 60 random
    problems (T and S from 1 to 7, H from 1 to 4, empty sources included)."""
    ref = runpy.run_path(str(reference_path("hw04")))
    for seed in range(60):
        rng = np.random.default_rng(seed)
        T, S = (int(n) for n in rng.integers(1, 8, size=2))
        H = int(rng.choice([1, 2, 4]))
        D = H * int(rng.integers(1, 4))
        lengths = [S, 0, int(rng.integers(1, S + 1))] if seed % 3 == 0 else None
        problem = common.make_problem(seed, B=3, T=T, S=S, D=D, H=H, lengths=lengths)
        out = ref["cross_attention_forward"](*problem.args())
        task1.check_forward(out, problem)
        Y_e, A_e, _, _ = common.minitf_forward(problem)
        K, V = ref["encoder_keys_values"](problem.X_kv, problem.params, H)
        task2.check_keys_values((K, V), problem)
        for t in range(T):
            y_t = ref["cross_attention_step"](problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask)
            task2.check_step(y_t, problem, t, Y_e, A_e, V)
        dY = common.upstream(problem, seed)
        grads = ref["cross_attention_backward"](dY, *problem.args())
        expected = common.minitf_backward(problem, dY)
        task3.check_input_gradients(grads, expected, problem, dY)
        task3.check_weight_gradients(grads, expected, problem)


def test_right_answers_pass_the_unusual_inputs_on_many_shapes(tmp_path):
    """The reference and the written-differently submission, in-process, on 60 random problems of each unusual
    input the tests send (issue 28): padding anywhere in the source with an empty one, and scores of ~1e3 (a key
    bias), against the tolerances the graded tests use there."""
    ref = runpy.run_path(str(reference_path("hw04")))
    other = runpy.run_path(str(submission_path("hw04_written_differently", tmp_path)))
    for seed in range(60):
        rng = np.random.default_rng(1000 + seed)
        T, S = int(rng.integers(1, 8)), int(rng.integers(2, 9))
        H = int(rng.choice([1, 2, 4]))
        D = H * int(rng.integers(1, 4))
        lengths = [int(rng.integers(1, S)), 0, int(rng.integers(1, S + 1))]
        moved = common.with_padding_anywhere(common.make_problem(seed, B=3, T=T, S=S, D=D, H=H, lengths=lengths),
                                             seed)
        large = common.with_large_scores(common.make_problem(seed, B=3, T=T, S=S, D=D, H=H))
        for problem in (moved, large):
            Y_e, A_e, _, _ = common.minitf_forward(problem)
            dY = common.upstream(problem, seed)
            expected = common.minitf_backward(problem, dY)
            for m in (ref, other):
                task1.check_forward(m["cross_attention_forward"](*problem.args()), problem)
                K, V = m["encoder_keys_values"](problem.X_kv, problem.params, H)
                for t in range(T):
                    y_t = m["cross_attention_step"](problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask)
                    task2.check_step(y_t, problem, t, Y_e, A_e, V)
                grads = m["cross_attention_backward"](dY, *problem.args())
                if problem is moved:
                    task3.check_input_gradients(grads, expected, problem, dY)
                    task3.check_weight_gradients(grads, expected, problem)
                else:
                    for name, value in expected.items():
                        assert common.close(grads[name], value, **common.LARGE_SCORES_BACKWARD_TOL), (seed, name)


def test_a_right_answer_written_differently_scores_full_marks(submission_file):
    """einsum, a hand-written softmax, np.where for the empty source, a fused K/V projection:
    the tests check the numbers, not the style."""
    result = graded(submission_file("hw04_written_differently"), tasks=[1, 2, 3])
    for t in result.tasks:
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)
