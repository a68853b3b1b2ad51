"""Homework 1 (the RNN encoder-decoder): each classic mistake fails the right task with a message
naming it, a mistake costs nothing on the other tasks, calling minitf's own code gets no credit,
finite differences do not pass for a backward, a right answer written differently scores full
marks, and -- in this process, on many random problems, as fresh grading seeds would draw them --
the tests' tolerances hold for the reference and each mistake's numbers are recognised.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import base_name, expect_caught, expect_minitf_refused, graded, reference_path, submission_file, task_result  # noqa: F401

from minitf.course.l01_seq2seq.homework.tests import task1, task2, task3, task4, task5

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw01_lstm_forget_gate_missing", 1, "forgetting the forget gate's contribution to dc_{t-1}"),
    ("hw01_lstm_no_tanh_path", 1, "the path from dh to dc is missing"),
    ("hw01_lstm_gate_order", 1, "the gates were read in the order i, f, o, g"),
    ("hw01_lstm_sigmoid_prime", 1, "taken as s instead of s * (1 - s)"),
    # new in issue 28 (round 2)
    ("hw01_lstm_sigmoid_overflows", 1, "with saturated gates"),
    ("hw01_rnn_state_through_padding", 2, "the state was updated on padded steps"),
    ("hw01_rnn_grad_into_padding", 2, "gradient flowed into padded steps"),
    ("hw01_rnn_dW_not_accumulated", 2, "overwritten in the loop instead of accumulated"),
    ("hw01_rnn_final_at_last_step", 2, "h_final was taken at step T-1"),
    ("hw01_concat_first_step_only", 3, "concat's gradient was taken from the first step only"),
    ("hw01_bridge_transposed", 3, "the bridge weights were transposed"),
    ("hw01_ss_misaligned", 4, "the one-position misalignment"),
    ("hw01_ss_one_minus_eps", 4, "mixed with probability 1 - eps"),
    ("hw01_ss_grad_through_sample", 4, "the gradient flowed through the sampled token"),
    ("hw01_ss_repeated_tokens", 4, "repeated tokens lost their gradients"),
    ("hw01_attention_softmax_over_batch", 5, "the softmax ran over the batch axis"),
    ("hw01_attention_padding_unmasked", 5, "padding was not masked"),
    ("hw01_attention_no_tanh_derivative", 5, "the tanh derivative is missing"),
    ("hw01_attention_no_key_gradient", 5, "the gradient to the keys is missing"),
    # new in issue 28 (round 2)
    ("hw01_attention_softmax_without_max", 5, "Subtract each row's maximum"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw01_concat_h0_float64", 3, 'h0: expected dtype float32'),
    ("hw01_ss_bos_hardcoded", 4, 'step 0 reads the bos_id given'),
    ("hw01_attention_squeezed_scores", 5, 'your code raised ValueError'),
    ("hw01_attention_backward_squeezed", 5, 'your code raised ValueError'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """The state carried through the padding loses task 1.2's points only: the LSTM step and the
    conditioning are graded on their own functions."""
    result = graded(submission_file("hw01_rnn_state_through_padding"), tasks=[1, 2, 3])
    t2 = task_result(result, 2)
    assert t2.status == "failed" and t2.score < t2.max_score
    for number in (1, 3):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw01_calls_minitf"), tasks=[1, 2, 5])
    t1, t2, t5 = (task_result(result, k) for k in (1, 2, 5))
    assert t5.status == "no credit" and t5.score == 0, (t5.status, t5.message)
    assert "softmax_backward" in t5.message, t5.message  # in the source
    for t in (t1, t2):
        expect_minitf_refused(t)
        assert "minitf is not available" in t.message, t.message


def test_finite_differences_are_not_a_backward(submission_file):
    result = graded(submission_file("hw01_finite_differences"), tasks=[1])
    t1 = task_result(result, 1)
    assert t1.status == "failed" and t1.score < t1.max_score, (t1.status, t1.score, t1.message)
    failed = {base_name(x["name"]) for x in t1.tests if x["outcome"] != "passed"}
    assert failed == {"test_lstm_step_backward_input_gradients", "test_lstm_step_backward_weight_gradients",
                      "test_lstm_step_backward_without_upstream_cell_gradient"}, failed
    assert "rtol 1e-11" in t1.message, t1.message


def test_a_right_answer_written_differently_scores_full_marks(submission_file):
    """einsum, a hand-written sigmoid and softmax, np.split for the gates, BPTT accumulating step by
    step, np.roll for the shift: the tests check the numbers, not the style."""
    result = graded(submission_file("hw01_written_differently"), tasks=[1, 2, 3, 4, 5])
    for t in result.tasks:
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


# ---- in this process, on many random problems ------------------------------------------------------------
REFERENCE = None


def reference() -> dict:
    global REFERENCE
    if REFERENCE is None:
        REFERENCE = runpy.run_path(str(reference_path("hw01")))
    return REFERENCE


def caught(phrase: str, check, *args) -> None:
    """``check(*args)`` fails, and its message holds ``phrase``."""
    with pytest.raises(pytest.fail.Exception) as info:
        check(*args)
    assert phrase in str(info.value), str(info.value)


def test_reference_passes_every_check_on_many_shapes():
    """The checks the graded tests run, applied to the reference directly, on 40 random problems
    per task (B, T, S from 1 up, widths from 1, sources of every length, empty ones included)."""
    ref = reference()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        B, T, S, D, H, He, A = (int(n) for n in rng.integers(1, 6, size=7))
        # 1.1
        p = task1.make_problem(seed, B=B, D=D, Dr=H)
        task1.check_forward(ref["lstm_step_forward"](*p.args()), p)
        for dtype, top in ((np.float64, 2000.0), (np.float32, 300.0)):  # saturated gates
            p_sat = task1.saturated_problem(seed, dtype=dtype, top=top, B=B, D=D, Dr=H)
            task1.check_forward(ref["lstm_step_forward"](*p_sat.args()), p_sat)
        dh, dc = task1.upstream(p, seed)
        g = ref["lstm_step_backward"](dh, dc, *p.args())
        task1.check_backward(g, task1.minitf_backward(p, dh, dc), p, dh, dc, tuple(task1.GRAD_HINTS))
        # 1.2
        lengths = rng.integers(1, T + 1, size=B)
        p = task2.make_problem(seed, B=B, T=T, D=D, Dr=H, lengths=list(lengths))
        task2.check_forward(ref["rnn_forward"](*p.args()), p)
        do, dfin = task2.upstream(p, seed)
        g = ref["rnn_backward"](do, dfin, *p.args())
        task2.check_backward(g, task2.minitf_backward(p, do, dfin), p, do, dfin, tuple(task2.GRAD_HINTS))
        # 1.3
        p = task3.make_problem(seed, B=B, T=T, E=D, De=He, Dr=H, L=int(rng.integers(1, 4)))
        for conditioning in task3.MODES:
            task3.check_forward(ref["condition_decoder"](*p.args(conditioning)), p, conditioning)
            dh0, dX = task3.upstream(p, conditioning, seed)
            g = ref["condition_decoder_backward"](dh0, dX, p.h_enc, p.params, conditioning)
            task3.check_backward(g, task3.minitf_backward(p, conditioning, dh0, dX), p, conditioning, dh0, dX)
        # 1.5
        lengths = [int(n) for n in rng.integers(0 if seed % 4 == 0 else 1, S + 1, size=B)]
        p = task5.make_problem(seed, B=B, S=S, Hq=H, He=He, A=A, lengths=lengths)
        task5.check_forward(ref["additive_attention_forward"](*p.args()), p)
        if max(lengths) > 0:  # sharp scores: a v scaled until a real position scores +-1500
            p_sharp = task5.sharp_problem(seed, B=B, S=S, Hq=H, He=He, A=A, lengths=lengths)
            task5.check_forward(ref["additive_attention_forward"](*p_sharp.args()), p_sharp)
        dcontext = rng.normal(size=(B, He))
        g = ref["additive_attention_backward"](dcontext, *p.args())
        task5.check_backward(g, task5.minitf_backward(p, dcontext), p, dcontext, tuple(task5.GRAD_HINTS))
    # 1.4: minitf's own runs (a model each), fewer of them
    for seed in range(12):
        eps = (0.0, 0.3, 0.7, 1.0)[seed % 4]
        run = task4.discriminating_run(seed, eps, B=1 + seed % 4, T=2 + seed % 6)
        task4.check_inputs(ref["scheduled_sampling_inputs"](*run.args()), run)


def test_each_mistake_is_recognised_on_many_problems():
    """What each classic mistake computes, fed to the checks on 25 fresh problems each: every time the
    check fails naming it (the graded tests draw fresh problems every run; the names must not
    depend on a lucky draw)."""
    for seed in range(25):
        # 1.1
        p = task1.make_problem(seed)
        dh, dc = task1.upstream(p, seed)
        e = task1.minitf_backward(p, dh, dc)
        inputs = ("dc_prev", "dh_prev", "dx")
        for kw, phrase in [(dict(dc_prev="whole"), "forgetting the forget gate's contribution to dc_{t-1}"),
                           (dict(tanh_path=False), "the path from dh to dc is missing"),
                           (dict(sigmoid_prime="s"), "taken as s instead of s * (1 - s)"),
                           (dict(order="ifog"), "the gates were read in the order i, f, o, g")]:
            g = task1.lstm_variant(p, dh, dc, **kw)[2]
            caught(phrase, task1.check_backward, g, e, p, dh, dc, inputs)
        h, c, _ = task1.lstm_variant(p, order="ifog")
        caught("the gates were read in the order i, f, o, g", task1.check_forward, (h, c), p)
        # 1.2
        p = task2.make_problem(seed)
        outputs, h_final, _ = task2.rnn_variant(p, hold=False)
        caught("the state was updated on padded steps", task2.check_forward, (outputs, h_final), p)
        outputs, h_final, _ = task2.rnn_variant(p, final="output T-1")
        caught("h_final was taken at step T-1", task2.check_forward, (outputs, h_final), p)
        do, dfin = task2.upstream(p, seed)
        e = task2.minitf_backward(p, do, dfin)
        for kw, keys, phrase in [
                (dict(mask_backward=False), ("dx", "dh0"), "gradient flowed into padded steps"),
                (dict(accumulate="first"), ("dW_ih", "dW_hh", "db_ih", "db_hh"), "instead of accumulated"),
                (dict(accumulate="last"), ("dW_ih", "dW_hh", "db_ih", "db_hh"), "instead of accumulated"),
                (dict(pass_through=False), ("dx", "dh0"), "the state's gradient was dropped")]:
            g = task2.rnn_variant(p, do, dfin, **kw)[2]
            caught(phrase, task2.check_backward, g, e, p, do, dfin, keys)
        # 1.3
        p = task3.make_problem(seed, De=4, Dr=4, L=2)
        h0, X, _ = task3.conditioning_variant(p, "init", transposed=True)
        caught("the bridge weights were transposed", task3.check_forward, (h0, X), p, "init")
        for conditioning, kw, phrase in [
                ("concat", dict(steps="first"), "concat's gradient was taken from the first step only"),
                ("both", dict(steps="mean"), "averaged over the T steps"),
                ("both", dict(paths="init"), "the concat one is missing"),
                ("init", dict(layers="first"), "every one of the L = 2 decoder layers"),
                ("init", dict(tanh_prime=False), "the tanh of the bridge was not differentiated")]:
            dh0, dX = task3.upstream(p, conditioning, seed)
            e = task3.minitf_backward(p, conditioning, dh0, dX)
            g = task3.conditioning_variant(p, conditioning, dh0, dX, **kw)[2]
            caught(phrase, task3.check_backward, g, e, p, conditioning, dh0, dX)
        # 1.5
        p = task5.make_problem(seed)
        for kw, phrase in [(dict(softmax_axis=0), "the softmax ran over the batch axis"),
                           (dict(masked=False), "padding was not masked")]:
            context, a, _ = task5.attention_variant(p, **kw)
            caught(phrase, task5.check_forward, (context, a), p)
        dcontext = np.random.default_rng(seed).normal(size=(p.s.shape[0], p.H_enc.shape[2]))
        e = task5.minitf_backward(p, dcontext)
        for kw, phrase in [(dict(tanh_prime=False), "the tanh derivative is missing"),
                           (dict(paths="values"), "the gradient to the keys is missing")]:
            g = task5.attention_variant(p, dcontext, **kw)[2]
            caught(phrase, task5.check_backward, g, e, p, dcontext, ("dH_enc", "ds"))
    for seed in range(8):
        run = task4.discriminating_run(seed, 0.6)
        for kw, phrase in [(dict(own_at="t"), "the one-position misalignment"),
                           (dict(gold_at="t"), "label leakage"),
                           (dict(prob="1-eps"), "mixed with probability 1 - eps")]:
            fed, gold = task4.inputs_variant(run, **kw)
            caught(phrase, task4.check_inputs, (fed, gold), run)
