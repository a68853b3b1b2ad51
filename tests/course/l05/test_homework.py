"""Homework 5 (the block): each classic mistake fails the right task with a message naming
it, a mistake costs nothing on the other tasks, calling minitf's own code gets no credit,
finite differences do not pass for a backward, and the tests' tolerances hold for the
reference on many shapes.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import base_name, expect_caught, expect_minitf_refused, graded, reference_path, submission_file, task_result  # noqa: F401

from minitf.course.l05_block.homework.tests import common, task1, task2, task3, task4

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw05_ln_over_batch", 1, "normalised over the batch axis"),
    ("hw05_ln_eps_outside_sqrt", 1, "eps sits outside the square root"),
    ("hw05_ln_unbiased_variance", 1, "the variance is the unbiased one"),
    ("hw05_ln_backward_constants", 1, "treated mu and sigma as constants"),
    ("hw05_ln_backward_no_mean_term", 1, "the term through the mean is missing"),
    ("hw05_ln_dgamma_not_summed", 1, "dgamma has shape (4, 8): it was not summed over every leading axis"),
    ("hw05_preln_normalises_stream", 2, "pre-LN (norm_first=True): the residual stream itself was normalised"),
    ("hw05_residual_no_identity_grad", 2, "dx misses the identity path's gradient"),
    ("hw05_postln_norm_backward_wrong_point", 2, "post-LN (norm_first=False): LayerNorm's backward at the wrong point"),
    ("hw05_preln_dW_uses_x", 2, "dW uses x, but in pre-LN f reads LN(x)"),
    ("hw05_relu_prime_at_zero", 3, "ReLU's derivative at a = 0 was taken as 1"),
    ("hw05_relu_prime_sign", 3, "ReLU's derivative was taken as sign(a)"),
    ("hw05_gelu_missing_pdf_term", 3, "GELU's derivative misses the a * phi(a) term"),
    ("hw05_gelu_tanh", 3, "GELU was computed with its tanh approximation"),
    ("hw05_ffn_dW1_transposed", 3, "dW_1 is transposed"),
    ("hw05_ffn_bias_not_summed", 3, "it was not summed over the batch and the positions"),
    ("hw05_sin_cos_halves", 4, "put in two halves"),
    ("hw05_sin_exponent_i_over_d", 4, "the exponent is 10000^(i/D)"),
    ("hw05_positions_from_one", 4, "the positions start at 1"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw05_sublayer_forward_default_eps", 2, 'pass the eps given on to your layernorm'),
    ("hw05_sublayer_backward_default_eps", 2, 'pass the eps given on to your layernorm'),
    ("hw05_layernorm_backward_in_float64", 1, 'expected dtype float32'),
    ("hw05_sublayer_dW_float64_accumulator", 2, 'dW: expected dtype float32'),
    ("hw05_gelu_density_np_sqrt", 3, 'expected dtype float32'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """A backward without the identity path loses task 5.2's points only: tasks 5.1, 5.3 and
    5.4 are graded on their own functions."""
    result = graded(submission_file("hw05_residual_no_identity_grad"), tasks=[1, 2, 3, 4])
    t2 = task_result(result, 2)
    assert t2.status == "failed" and t2.score < t2.max_score
    for number in (1, 3, 4):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_a_layernorm_mistake_is_pointed_at_from_task_2(submission_file):
    """Task 5.2 builds on the student's own LayerNorm (the reference reuses it): when that is
    wrong, task 5.2's message says so, and that minitf's LayerNorm may be used there."""
    result = graded(submission_file("hw05_ln_eps_outside_sqrt"), tasks=[2])
    t2 = task_result(result, 2)
    assert t2.status == "failed" and "your layernorm_forward of task 5.1 does not agree" in t2.message, t2.message


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw05_calls_minitf"), tasks=[1, 2, 3, 4])
    t1, t2, t3, t4 = (task_result(result, k) for k in (1, 2, 3, 4))
    assert t3.status == "no credit" and t3.score == 0, (t3.status, t3.message)
    assert "relu_backward" in t3.message, t3.message  # in the source
    for t in (t1, t2, t4):
        expect_minitf_refused(t)
        assert "minitf is not available" in t.message, t.message


def test_finite_differences_are_not_a_backward(submission_file):
    result = graded(submission_file("hw05_finite_differences"), tasks=[1])
    t1 = task_result(result, 1)
    assert t1.status == "failed" and t1.score < t1.max_score, (t1.status, t1.score, t1.message)
    failing = {base_name(x["name"]) for x in t1.tests if x["outcome"] != "passed"}
    assert {"test_layernorm_backward", "test_layernorm_backward_one_row"} <= failing, failing
    # depending on the drawn problem, the first check to catch the noise of finite differences is
    # the comparison at rtol 1e-10 or the exact property that each row of dx sums to 0
    assert "rtol 1e-10" in t1.message or "sums to" in t1.message, t1.message


def test_a_right_answer_written_differently_scores_full_marks(submission_file):
    """einsum, an explicit Jacobian, minitf's LayerNorm in task 5.2, np.where, stacked sines:
    the tests check the numbers, not the style."""
    result = graded(submission_file("hw05_written_differently"), tasks=[1, 2, 3, 4])
    for t in result.tasks:
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


# ---- the tests' tolerances, on many shapes: the reference passes every check in-process -------------------
def test_reference_passes_every_check_on_many_shapes():
    """The checks that the graded tests run, applied to the reference directly, on 40 random
    problems (1 to 3 axes, D from 1 to 12, both arrangements, both activations, eps from
    1e-6 to 1e-2)."""
    ref = runpy.run_path(str(reference_path("hw05")))
    for seed in range(40):
        rng = np.random.default_rng(seed)
        D = int(rng.integers(1, 13))
        shape = [(D,), (int(rng.integers(1, 6)), D), (int(rng.integers(1, 4)), int(rng.integers(1, 6)), D)][seed % 3]
        eps = float(10.0 ** rng.uniform(-6, -2))
        x = common.stream(shape, seed)
        gamma, beta = common.norm_params(D, seed)
        task1.check_forward(ref["layernorm_forward"](x, gamma, beta, eps), x, gamma, beta, eps)
        dy = common.upstream(shape, seed + 1)
        task1.check_backward(ref["layernorm_backward"](dy, x, gamma, eps), dy, x, gamma, eps)
        if len(shape) == 3:
            p = task2.make_problem(seed, bool(seed % 2), shape=shape)
            task2.check_forward(ref["sublayer_forward"](*p.args()), p, None)
            task2.check_backward(ref["sublayer_backward"](dy, *p.args()), p, dy, None)
        F = int(rng.integers(1, 13))
        p = task3.make_problem(seed, ("relu", "gelu")[seed % 2], shape=shape if len(shape) > 1 else (3, D), F=F,
                               zeros=seed % 4 == 0)
        task3.check_forward(ref["feedforward_forward"](*p.args()), p)
        dy = common.upstream(p.x.shape, seed + 2)
        task3.check_backward(ref["feedforward_backward"](dy, *p.args()), p, dy)
        max_len = int(rng.integers(1, 80))
        task4.check_table(ref["sinusoidal_positions"](max_len, D), max_len, D)
