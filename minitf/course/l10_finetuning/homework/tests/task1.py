"""Homework 10, task 10.1 (the teacher-forced validation loss): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX
from minitf.grading.asserts import as_float, call, close, expect_close, fail
from minitf.grading.problems import shapes

from .common import (PAD, READ_ONLY, START, TOL, as_metrics, minitf_eval, pad_more, relabel_ids, relabelled,
                     reseeded, sharpened, trained_model,
                     validation_batch)

HOMEWORK = "hw10"
task1 = pytest.mark.hw10_task1
KEYS = ("loss", "token_accuracy")


# =====================================================================================
# Task 10.1 -- teacher_forced_eval
# =====================================================================================
def _log_softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def loss_variants(model, input_ids, labels) -> dict:
    """What each classic mistake gives instead, by the phrase that names it."""
    real = labels != IGNORE_INDEX
    B, T = labels.shape
    as_ids = np.where(real, labels, PAD)
    with model.evaluating():
        leaky, _ = model.forward(input_ids, as_ids)  # the labels themselves as decoder inputs
        logits, _ = model.forward(input_ids, np.concatenate([np.full((B, 1), START), as_ids[:, :-1]], axis=1))
    nll = -np.take_along_axis(_log_softmax(logits), as_ids[..., None], axis=-1)[..., 0]  # (B, T)
    nll_leaky = -np.take_along_axis(_log_softmax(leaky), as_ids[..., None], axis=-1)[..., 0]
    padding = ("the loss was averaged over the padding: -100 positions must add nothing AND not be counted; "
               "divide by the number of real target tokens, not by B * T")
    return {
        padding: [float((nll * real).sum() / (B * T)), float(nll.mean())],
        "label leakage: the decoder was fed the labels themselves, not the labels shifted right (start token "
        "first), so each position sees the token it must predict": [float((nll_leaky * real).sum() / real.sum())],
        "the loss was averaged per sequence, then over the batch: short targets then weigh as much as long ones; "
        "the validation loss is the mean over all real target tokens of the batch":
            [float(((nll * real).sum(axis=1) / real.sum(axis=1)).mean())],
    }


def accuracy_variants(model, input_ids, labels, logits) -> dict:
    real = labels != IGNORE_INDEX
    correct = (logits.argmax(-1) == labels) & real
    B, T = labels.shape
    return {"the token accuracy was averaged over the padding: count real target tokens only, in the numerator "
            "and the denominator": [float(correct.sum() / (B * T)),
                                    float((logits.argmax(-1) == np.where(real, labels, PAD)).mean())]}


def check_teacher_forced(fn, model, input_ids, labels, expected=None) -> None:
    out = as_metrics(call(fn, model, input_ids, labels, START, PAD, names=["model", "input_ids", "labels", "start_id", "pad_id"], why=READ_ONLY), KEYS, "teacher_forced_eval")
    want = minitf_eval(model, input_ids, labels) if expected is None else expected
    raw, top = out["loss"], float(np.abs(want["logits"]).max())
    if (isinstance(raw, (float, np.floating, np.ndarray)) and np.ndim(raw) == 0
            and np.issubdtype(np.asarray(raw).dtype, np.floating) and not np.isfinite(raw) and top > 100):
        fail(f"the loss is {float(raw)} on a confident model (its logits reach {top:.0f} in size): once logits pass "
             f"a few hundred, exp(z) overflows (inf / inf = nan) and a wrong label's softmax probability underflows "
             f"to 0 (log 0 = -inf). Compute the log-softmax stably, (z - max z) - log(sum(exp(z - max z))), never "
             f"the log of a probability (expected {want['loss']:.8g})")
    loss, acc = as_float("loss", out["loss"]), as_float("token_accuracy", out["token_accuracy"])
    if close(loss, want["loss"], **TOL) and close(acc, want["tf_accuracy"], **TOL):
        return
    again = as_metrics(fn(reseeded(model), input_ids, labels, START, PAD), KEYS, "teacher_forced_eval")
    if not close(as_float("loss", again["loss"]), loss, rtol=1e-12, atol=0):
        fail(f"two calls on the same weights and batch (only the dropout seed changed) gave two losses ({loss:.10g}, {float(again['loss']):.10g}): "
             f"dropout was on. The model arrives in training mode; evaluate it in eval mode (with "
             f"model.evaluating(): ... or model.eval())")
    if not close(loss, want["loss"], **TOL):
        for phrase, values in loss_variants(model, input_ids, labels).items():
            if any(close(loss, v, **TOL) for v in values):
                fail(f"{phrase} (loss {loss:.8g}, expected {want['loss']:.8g})")
        expect_close("loss", loss, want["loss"], **TOL,
                     hint="mean cross-entropy over the real target tokens, decoder fed the labels shifted right, "
                          "eval mode")
    for phrase, values in accuracy_variants(model, input_ids, labels, want["logits"]).items():
        if any(close(acc, v, **TOL) for v in values) and not close(acc, want["tf_accuracy"], **TOL):
            fail(f"{phrase} (token_accuracy {acc:.8g}, expected {want['tf_accuracy']:.8g})")
    expect_close("token_accuracy", acc, want["tf_accuracy"], **TOL,
                 hint="the share of real target tokens whose argmax, given the true prefix, is right")


@task1
def test_teacher_forced_eval_validation_batch(submission, homework_seed):
    teacher_forced_eval = submission.function("teacher_forced_eval")
    model = trained_model()
    (n,), = shapes(homework_seed, [(32,)], n=(1, 48))
    input_ids, labels = validation_batch(homework_seed + 101, n=n)
    check_teacher_forced(teacher_forced_eval, model, input_ids, labels)
    # an overconfident model (the same weights, every logit 1000 times as large): the log-softmax must be stable
    input_ids, labels = validation_batch(homework_seed + 105, n=32)
    check_teacher_forced(teacher_forced_eval, sharpened(model, 1000.0), input_ids, labels)


@task1
def test_teacher_forced_eval_ignores_extra_padding(submission, homework_seed):
    teacher_forced_eval = submission.function("teacher_forced_eval")
    model = trained_model()
    input_ids, labels = validation_batch(homework_seed + 102, n=12)
    expected = minitf_eval(model, input_ids, labels)
    more_src, more_labels = pad_more(input_ids, labels, 2, 5)
    out = as_metrics(call(teacher_forced_eval, model, more_src, more_labels, START, PAD, names=["model", "input_ids", "labels", "start_id", "pad_id"], why=READ_ONLY), KEYS, "teacher_forced_eval")
    loss = as_float("loss", out["loss"])
    if not close(loss, expected["loss"], **TOL):
        check_teacher_forced(teacher_forced_eval, model, more_src, more_labels)  # names the mistake, if it can
        fail(f"padding the batch further (5 more -100 columns, 2 more source pad columns) changed the loss from "
             f"{expected['loss']:.8g} to {loss:.8g}: the loss was averaged over the padding, or the padding was "
             f"not masked")
    check_teacher_forced(teacher_forced_eval, model, more_src, more_labels, expected)


@task1
def test_teacher_forced_eval_single_pair_and_full_rows(submission, homework_seed):
    teacher_forced_eval = submission.function("teacher_forced_eval")
    model = trained_model()
    input_ids, labels = validation_batch(homework_seed + 103, n=8)
    check_teacher_forced(teacher_forced_eval, model, input_ids[:1].copy(), labels[:1].copy())
    full = (labels != IGNORE_INDEX).all(axis=1)
    if full.any():
        check_teacher_forced(teacher_forced_eval, model, input_ids[full].copy(), labels[full].copy())


@task1
def test_teacher_forced_eval_under_other_special_ids(submission, homework_seed):
    """The same model under a tokenizer whose <pad>, <bos>, <eos> are 7, 3, 5 (every id relabelled):
    the same loss and accuracy, with start_id = 3 and pad_id = 7 given (a constant 1 or 0 shows)."""
    teacher_forced_eval = submission.function("teacher_forced_eval")
    model = trained_model()
    (n,), = shapes(homework_seed, [(12,)], n=(1, 24))
    input_ids, labels = validation_batch(homework_seed + 104, n=n)
    want = minitf_eval(model, input_ids, labels)
    twin, relabel = relabelled(model)
    out = as_metrics(call(teacher_forced_eval, twin, relabel_ids(input_ids, relabel), relabel_ids(labels, relabel),
                          int(relabel[START]), int(relabel[PAD]),
                          names=["model", "input_ids", "labels", "start_id", "pad_id"], why=READ_ONLY),
                     KEYS, "teacher_forced_eval")
    hint = (f"the decoder's first input is the start_id given ({int(relabel[START])} here), and -100 becomes the "
            f"pad_id given ({int(relabel[PAD])}): not the constants of one tokenizer")
    expect_close("loss (start_id 3, pad_id 7)", as_float("loss", out["loss"]), want["loss"], **TOL, hint=hint)
    expect_close("token_accuracy (start_id 3, pad_id 7)", as_float("token_accuracy", out["token_accuracy"]),
                 want["tf_accuracy"], **TOL, hint=hint)
