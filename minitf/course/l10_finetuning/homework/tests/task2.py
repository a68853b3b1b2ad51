"""Homework 10, task 10.2 (evaluating with a self-fed run): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX
from minitf.grading.asserts import as_array, as_float, call, close, expect_close, expect_equal_ids, fail
from minitf.grading.problems import shapes

from .common import (EOS, PAD, READ_ONLY, START, TOL, as_metrics, minitf_eval, pad_more, relabel_ids, relabelled,
                     reseeded, trained_model,
                     validation_batch)

HOMEWORK = "hw10"
task2 = pytest.mark.hw10_task2
KEYS = ("predictions", "exact_match", "token_accuracy")
NAMES = ["model", "input_ids", "labels", "start_id", "eos_id", "pad_id", "max_len"]


# =====================================================================================
# Task 10.2 -- free_running_eval
# =====================================================================================
def _pad_after_eos(tokens):
    after = np.cumsum(tokens == EOS, axis=1) - (tokens == EOS) > 0  # (B, n) strictly after the first <eos>
    return np.where(after, PAD, tokens)


def check_predictions(pred, want, labels, max_len, tf_argmax) -> None:
    B = labels.shape[0]
    if pred.ndim != 2 or pred.shape[0] != B:
        fail(f"predictions: expected shape (B, T') with B = {B}, received {pred.shape}")
    if np.array_equal(pred, want):
        return
    if pred.shape[1] >= 1 and (pred[:, 0] == START).all() and np.array_equal(pred[:, 1:1 + want.shape[1]], want):
        fail("predictions begin with the start token: return the generated tokens only, without it")
    if any(pred.shape == tf.shape and np.array_equal(pred, tf) for tf in (tf_argmax, _pad_after_eos(tf_argmax))):
        fail("the predictions are the argmax of the teacher-forced logits: the decoder was fed the true prefix (the "
             "labels). At generation there is no teacher: feed the model's own previous outputs, and use the labels "
             "only to score the finished outputs")
    if pred.shape[1] > want.shape[1] and np.array_equal(pred[:, :want.shape[1]], want):
        fail(f"decoding went on after every row had produced <eos> ({pred.shape[1]} tokens, {want.shape[1]} "
             f"needed): stop as soon as every row has finished")
    if pred.shape[1] < want.shape[1] and np.array_equal(pred, want[:, :pred.shape[1]]):
        fail(f"decoding stopped after {pred.shape[1]} tokens while some rows had not produced <eos>: it stopped when "
             f"the first row finished. A row is finished when IT has produced <eos>; stop when every row has "
             f"(or after max_len = {max_len})")
    if pred.shape == want.shape and np.array_equal(_pad_after_eos(pred), want):
        fail("a row kept generating after its <eos>: once a row has produced <eos> it is finished; its later "
             "positions get pad_id")
    expect_equal_ids("predictions", pred, want,
                     hint="greedy decoding fed its own outputs, pad_id after a row's <eos>")


def check_free_running(fn, model, input_ids, labels, max_len, expected=None) -> None:
    out = as_metrics(call(fn, model, input_ids, labels, START, EOS, PAD, max_len, names=NAMES, why=READ_ONLY), KEYS,
                     "free_running_eval")
    pred = as_array("predictions", out["predictions"], kind="i")
    em, acc = as_float("exact_match", out["exact_match"]), as_float("token_accuracy", out["token_accuracy"])
    want = minitf_eval(model, input_ids, labels, max_len) if expected is None else expected
    if not (np.array_equal(pred, want["predictions"]) and close(em, want["exact_match"], **TOL)
            and close(acc, want["token_accuracy"], **TOL)):
        again = as_metrics(fn(reseeded(model), input_ids, labels, START, EOS, PAD, max_len), KEYS,
                           "free_running_eval")
        if not np.array_equal(np.asarray(again["predictions"]), pred):
            fail("two calls on the same weights and batch (only the dropout seed changed) generated different outputs: dropout was on. The model "
                 "arrives in training mode; generate in eval mode (with model.evaluating(): ... or model.eval())")
    real = labels != IGNORE_INDEX
    if close(acc, want["tf_accuracy"], **TOL) and not close(want["token_accuracy"], want["tf_accuracy"], **TOL):
        fail(f"your free-running token accuracy ({acc:.4f}) is the teacher-forced accuracy: the decoder was fed the "
             f"true prefix (the labels). At generation there is no teacher: feed the model's own outputs "
             f"(expected {want['token_accuracy']:.4f})")
    check_predictions(pred, want["predictions"], labels, max_len, want["logits"].argmax(-1))
    B, T = labels.shape
    P = np.full((B, T), -1, np.int64)
    n = min(T, pred.shape[1])
    P[:, :n] = pred[:, :n]
    correct = (P == labels) & real
    n_real = real.sum(axis=1)
    exact_rows = correct.sum(axis=1) == n_real
    if not close(em, want["exact_match"], **TOL):
        if close(em, float((exact_rows & (n_real == T)).mean()), **TOL):
            fail(f"exact match compared the padding too: a padded row never matches (its output has pad_id where "
                 f"the labels have -100). Compare the real target positions only (exact_match {em:.4f}, expected "
                 f"{want['exact_match']:.4f})")
        expect_close("exact_match", em, want["exact_match"], **TOL,
                     hint="the share of rows whose every real target token (<eos> included) is right")
    if not close(acc, want["token_accuracy"], **TOL):
        if close(acc, float(correct.sum() / (B * T)), **TOL):
            fail(f"the token accuracy was averaged over the padding: divide by the number of real target tokens, "
                 f"not by B * T (token_accuracy {acc:.6f}, expected {want['token_accuracy']:.6f})")
        if close(acc, float((correct.sum(axis=1) / n_real).mean()), **TOL):
            fail(f"the token accuracy was averaged per row, then over the rows: it is the share of ALL real target "
                 f"tokens of the batch (token_accuracy {acc:.6f}, expected {want['token_accuracy']:.6f})")
        expect_close("token_accuracy", acc, want["token_accuracy"], **TOL,
                     hint="generated token t against label t, over the real label positions of the whole batch")


@task2
def test_free_running_eval_validation_batch(submission, homework_seed):
    free_running_eval = submission.function("free_running_eval")
    model = trained_model()
    (n,), = shapes(homework_seed, [(32,)], n=(1, 48))
    input_ids, labels = validation_batch(homework_seed + 201, n=n)
    check_free_running(free_running_eval, model, input_ids, labels, labels.shape[1] + 2)


@task2
def test_free_running_eval_short_max_len(submission, homework_seed):
    free_running_eval = submission.function("free_running_eval")
    model = trained_model()
    input_ids, labels = validation_batch(homework_seed + 202, n=16)
    for max_len in (3, 1):
        check_free_running(free_running_eval, model, input_ids, labels, max_len)


@task2
def test_free_running_eval_ignores_extra_padding(submission, homework_seed):
    free_running_eval = submission.function("free_running_eval")
    model = trained_model()
    input_ids, labels = validation_batch(homework_seed + 203, n=16)
    more_src, more_labels = pad_more(input_ids, labels, 2, 4)
    out = as_metrics(call(free_running_eval, model, more_src, more_labels, START, EOS, PAD, 12, names=NAMES, why=READ_ONLY), KEYS,
                     "free_running_eval")
    want = minitf_eval(model, input_ids, labels, 12)
    for key in ("exact_match", "token_accuracy"):
        value = as_float(key, out[key])
        if not close(value, want[key], **TOL):
            check_free_running(free_running_eval, model, more_src, more_labels, 12)  # names the mistake, if it can
            fail(f"padding the batch further (4 more -100 columns, 2 more source pad columns) changed {key} from "
                 f"{want[key]:.6f} to {value:.6f}: padding must change nothing")
    check_free_running(free_running_eval, model, more_src, more_labels, 12)


@task2
def test_free_running_eval_under_other_special_ids(submission, homework_seed):
    """The same model under a tokenizer whose <pad>, <bos>, <eos> are 7, 3, 5 (every id relabelled),
    start_id, eos_id, pad_id given as such: the same metrics, the predictions relabelled -- 5 ends
    a row and 7 fills it after (a constant 1, 2 or 0 shows)."""
    free_running_eval = submission.function("free_running_eval")
    model = trained_model()
    (n,), = shapes(homework_seed, [(16,)], n=(1, 24))
    input_ids, labels = validation_batch(homework_seed + 204, n=n)
    max_len = labels.shape[1] + 2
    want = minitf_eval(model, input_ids, labels, max_len)
    twin, relabel = relabelled(model)
    start, eos, pad = int(relabel[START]), int(relabel[EOS]), int(relabel[PAD])
    out = as_metrics(call(free_running_eval, twin, relabel_ids(input_ids, relabel), relabel_ids(labels, relabel), start,
                          eos, pad, max_len, names=NAMES, why=READ_ONLY), KEYS, "free_running_eval")
    hint = (f"step 0 feeds the start_id given ({start}), a row ends at the eos_id given ({eos}) and gets the pad_id "
            f"given ({pad}) after it: not the constants of one tokenizer")
    pred = as_array("predictions", out["predictions"], kind="i")
    expect_equal_ids("predictions (start_id 3, eos_id 5, pad_id 7)", pred, relabel_ids(want["predictions"], relabel),
                     hint=hint)
    for key in ("exact_match", "token_accuracy"):
        expect_close(f"{key} (start_id 3, eos_id 5, pad_id 7)", as_float(key, out[key]), want[key], **TOL, hint=hint)
