"""Homework 10 (fine-tuning on supervised pairs): each classic mistake fails the right task
with a message naming it, a mistake costs nothing on the other tasks, calling minitf's own
code gets no credit, and the reference agrees with minitf on many validation batches.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``, parametrized over every registered homework.
"""
from __future__ import annotations

import runpy

import numpy as np
import pytest
from grading.tools import expect_caught, expect_minitf_refused, graded, reference_path, submission_file, task_result  # noqa: F401

from minitf.grading.asserts import close
from minitf.course.l10_finetuning.homework.tests import common

# (submission, the task it must fail, a phrase its message must hold)
CLASSIC_MISTAKES = [
    ("hw10_tf_mean_over_padding", 1, "the loss was averaged over the padding"),
    ("hw10_tf_label_leakage", 1, "label leakage"),
    ("hw10_tf_dropout_on", 1, "dropout was on"),
    ("hw10_tf_mean_per_sequence", 1, "averaged per sequence"),
    ("hw10_tf_accuracy_over_padding", 1, "the token accuracy was averaged over the padding"),
    # new in issue 28 (round 2)
    ("hw10_tf_log_of_softmax", 1, "on a confident model"),
    ("hw10_tf_softmax_no_max", 1, "on a confident model"),
    ("hw10_fr_teacher_forced", 2, "fed the true prefix"),
    ("hw10_fr_exact_match_with_padding", 2, "exact match compared the padding"),
    ("hw10_fr_no_pad_after_eos", 2, "kept generating after its <eos>"),
    ("hw10_fr_stops_at_first_eos", 2, "stopped when the first row finished"),
    ("hw10_fr_accuracy_over_padding", 2, "the token accuracy was averaged over the padding"),
    ("hw10_fr_dropout_on", 2, "dropout was on"),
    ("hw10_es_mode_ignored", 3, "an accuracy was treated as a loss"),
    ("hw10_es_no_min_delta", 3, "min_delta was ignored"),
    ("hw10_es_patience_off_by_one", 3, "patience is off by one"),
    ("hw10_es_keeps_last", 3, "the last checkpoint was kept, not the best"),
    ("hw10_es_no_reset", 3, "was not reset at an improvement"),
]
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one, an empty or fully padded input
CONTRACT_MISTAKES = [
    ("hw10_tf_start_hardcoded", 1, "the decoder's first input is the start_id given"),
    ("hw10_fr_start_hardcoded", 2, 'step 0 feeds the start_id given'),
    ("hw10_fr_eos_hardcoded", 2, 'a row ends at the eos_id given'),
    ("hw10_fr_pad_hardcoded", 2, 'gets the pad_id given'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, number, phrase):
    expect_caught(graded(submission_file(name), tasks=[number], homework="hw10"), number, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """Generating with teacher forcing loses task 10.2's points only."""
    result = graded(submission_file("hw10_fr_teacher_forced"), tasks=[1, 2, 3], homework="hw10")
    t2 = task_result(result, 2)
    assert t2.status == "failed" and t2.score < t2.max_score
    for number in (1, 3):
        t = task_result(result, number)
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw10_calls_minitf"), tasks=[1, 2, 3], homework="hw10")
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    assert t1.status == "no credit" and t1.score == 0, (t1.status, t1.message)
    assert "forward_loss" in t1.message, t1.message
    assert t2.status == "no credit" and t2.score == 0, (t2.status, t2.message)
    assert "greedy_search" in t2.message or "sequence_metrics" in t2.message, t2.message
    expect_minitf_refused(t3)
    assert "minitf is not available" in t3.message, t3.message


# ---- the reference against minitf, in-process ------------------------------------------------------------
def test_reference_agrees_with_minitf_on_many_batches():
    ref = runpy.run_path(str(reference_path("hw10")))
    model = common.trained_model()
    assert model.training  # the tests send it in training mode
    for seed in range(6):
        input_ids, labels = common.validation_batch(seed, n=int(np.random.default_rng(seed).integers(1, 40)))
        max_len = labels.shape[1] + seed % 3
        want = common.minitf_eval(model, input_ids, labels, max_len)
        tf = ref["teacher_forced_eval"](model, input_ids, labels, common.START, common.PAD)
        assert close(tf["loss"], want["loss"], **common.TOL) and close(tf["token_accuracy"], want["tf_accuracy"],
                                                                        **common.TOL)
        fr = ref["free_running_eval"](model, input_ids, labels, common.START, common.EOS, common.PAD, max_len)
        assert np.array_equal(fr["predictions"], want["predictions"])
        assert close(fr["exact_match"], want["exact_match"], **common.TOL)
        assert close(fr["token_accuracy"], want["token_accuracy"], **common.TOL)
        assert model.training  # the mode is restored


def test_the_tests_model_shows_an_exposure_bias_gap():
    """The tests need a model whose teacher-forced and free-running numbers differ, and that
    gets some outputs exactly right."""
    model = common.trained_model()
    input_ids, labels = common.validation_batch(12345, n=64)
    want = common.minitf_eval(model, input_ids, labels, labels.shape[1] + 2)
    assert want["tf_accuracy"] - want["token_accuracy"] > 0.1
    assert 0.05 < want["exact_match"] < 0.9


def test_early_stopping_rule_matches_the_reference_and_keras_examples():
    ref = runpy.run_path(str(reference_path("hw10")))
    rng = np.random.default_rng(0)
    for _ in range(300):
        values = rng.normal(size=int(rng.integers(1, 30))).cumsum()
        mode = str(rng.choice(["min", "max"]))
        patience, delta = int(rng.integers(1, 5)), float(rng.choice([0.0, 0.1, 0.5]))
        assert ref["early_stopping"](values, mode, patience, delta) == common.early_stopping_rule(
            values, mode, patience, delta)
    # Keras's own test (test_EarlyStopping_reuse / patience): losses [.9, .8, .7, .71, .72, .73], patience 2
    assert common.early_stopping_rule([0.9, 0.8, 0.7, 0.71, 0.72, 0.73], "min", 2) == (2, 4)
