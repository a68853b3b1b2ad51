"""Homework 8, task 8.3 (masked cross-entropy): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX
from minitf.gradcheck import numerical_gradient
from minitf.grading.asserts import (as_array, as_float, close, expect_close, fail, returned_arg, same_array,
                                    softmax_overflow)
from minitf.grading.problems import shapes
from minitf.grading.wire import Student
from minitf.loss import cross_entropy as minitf_cross_entropy

from .common import expect_same_curve, random_labels, reference_losses, student_losses

HOMEWORK = "hw08"
task3 = pytest.mark.hw08_task3


# =====================================================================================
# Task 8.3 -- masked cross-entropy
# =====================================================================================
def loss_problem(seed: int, B=3, T=6, V=7, dtype=np.float64):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 2.0, size=(B, T, V)).astype(dtype)
    labels = random_labels(rng, B, T, V=V, min_len=2, low=0)  # every class may be a label
    return logits, labels


def call_loss(fn, logits, labels, *ignore_index):
    given_logits, given_labels = logits.copy(), labels.copy()
    out = fn(logits, labels, *ignore_index)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"masked_cross_entropy: expected a pair (loss, dlogits), received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    if not same_array(returned_arg(fn, 0), given_logits) or not same_array(returned_arg(fn, 1), given_labels):
        fail("masked_cross_entropy changed its inputs in place; work on new arrays")
    if np.ndim(out[0]) == 0 and np.isreal(out[0]) and not np.isfinite(out[0]):
        fail(f"the loss is {float(out[0])} for logits up to {np.abs(logits).max():.3g}: exp overflowed? Compute the "
             f"log-softmax stably, subtracting each row's maximum before exp")
    loss = as_float("loss", out[0])
    dlogits = as_array("dlogits", out[1], shape=logits.shape, kind="f")
    if not np.isfinite(dlogits).all():
        fail(softmax_overflow(f"dlogits holds non-finite values for logits up to {np.abs(logits).max():.3g}", "logits"))
    return loss, dlogits


def per_position_nll(logits, labels):
    """(B, T) -log softmax(z)[y], with label 0 at ignored positions (what a forgotten mask computes)."""
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    y = np.where(labels == IGNORE_INDEX, 0, labels)
    return -np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]


def diagnose_loss(loss, logits, labels) -> str | None:
    ref, _ = minitf_cross_entropy(logits, labels)
    real = labels != IGNORE_INDEX
    n_real, n_all, B = int(real.sum()), labels.size, labels.shape[0]
    total = ref * n_real
    tol = dict(rtol=1e-6, atol=1e-9)
    if close(loss, ref, **tol):
        return None
    if close(loss, total / n_all, **tol):
        return (f"the loss is divided by the padded length B*T = {n_all} instead of the number of real target "
                f"tokens n_real = {n_real}: expected {ref:.6g}, received {loss:.6g}")
    if close(loss, per_position_nll(logits, labels).mean(), **tol):
        return (f"the loss is averaged over the padding positions too: expected the mean over the {n_real} real "
                f"tokens, {ref:.6g}; received {loss:.6g}, the mean over all {n_all} positions. Padding must add "
                f"nothing to the sum and nothing to the count")
    if close(loss, total, **tol):
        return f"the loss is the sum over real tokens ({total:.6g}), not their mean: divide by n_real = {n_real}"
    if close(loss, total / B, **tol):
        return f"the loss is divided by the batch size B = {B}, not by the number of real tokens n_real = {n_real}"
    if close(loss, -ref, **tol):
        return "the loss has the wrong sign: cross-entropy is -log p_hat[y], a positive number"
    return None


def diagnose_grad(dlogits, logits, labels) -> str | None:
    _, ref = minitf_cross_entropy(logits, labels)
    real = labels != IGNORE_INDEX
    n_real, n_all = int(real.sum()), labels.size
    tol = dict(rtol=1e-6, atol=1e-12)
    if close(dlogits, ref, **tol):
        return None
    pad_grad = np.abs(dlogits[~real]).max() if (~real).any() else 0.0
    if close(dlogits, ref * n_real, **tol):
        return (f"the gradient is missing the 1/n_real: it is n_real = {n_real} times too large. The loss is the "
                f"mean over real tokens, so each real position's gradient is (p_hat - y) / n_real")
    if close(dlogits, ref * n_real / n_all, **tol):
        return (f"the gradient is divided by the padded length B*T = {n_all} instead of n_real = {n_real}: "
                f"(p_hat - y) / n_real at each real position")
    if close(dlogits, -ref, **tol):
        return "the gradient has the wrong sign: dL/dz = p_hat - y, not y - p_hat"
    if pad_grad > 1e-12:
        b, t = np.argwhere(~real)[int(np.argmax(np.abs(dlogits[~real]).max(axis=-1)))]
        return (f"padding positions get a gradient (dlogits[{b}, {t}] is nonzero, up to {pad_grad:.3g}): an ignored "
                f"label contributes no loss, so its gradient must be exactly 0")
    if close(dlogits[real], ref[real] * n_real / n_all, **tol) or close(dlogits[real], ref[real] * n_real, **tol):
        return f"the gradient at real positions is scaled wrong: each is (p_hat - y) / n_real, n_real = {n_real}"
    return None


def check_against_minitf(submission, seed: int, part: int, name: str, diagnose, hint: str) -> None:
    """The loss (``part`` 0) or dlogits (1) of the student's masked_cross_entropy on three
    problems: a recognised mistake is named, anything else compared with minitf's own."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    for k, (B, T, V) in enumerate(shapes(seed, [(3, 6, 7)] * 3, B=(1, 5), T=(2, 9), V=(2, 12))):
        logits, labels = loss_problem(seed + k, B=B, T=T, V=V)
        received = call_loss(masked_cross_entropy, logits, labels)[part]
        mistake = diagnose(received, logits, labels)
        if mistake:
            fail(mistake)
        expected = minitf_cross_entropy(logits, labels)[part]
        expect_close(name, received, expected, rtol=1e-7, atol=1e-12, hint=hint)


@task3
def test_loss_value(submission, homework_seed):
    check_against_minitf(submission, homework_seed, 0, "loss", diagnose_loss,
                         hint="the mean of -log softmax(z)[y] over the real target tokens")


@task3
def test_gradient_is_p_hat_minus_y(submission, homework_seed):
    check_against_minitf(submission, homework_seed, 1, "dlogits", diagnose_grad,
                         hint="(p_hat - onehot(y)) / n_real at real positions, 0 at padding")


@task3
def test_gradient_against_finite_differences(submission, homework_seed):
    """Your gradient must be the derivative of your loss (float64 finite differences)."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(homework_seed + 5, B=2, T=4, V=5)
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    # a loss and gradient that agree with each other must also be the loss (a constant 0 agrees with its 0 gradient)
    expect_close("loss", loss, minitf_cross_entropy(logits, labels)[0], rtol=1e-7, atol=1e-12,
                 hint="the mean of -log softmax(z)[y] over the real target tokens")
    x = logits.copy()
    numeric = numerical_gradient(lambda: float(masked_cross_entropy(x, labels)[0]), x, h=1e-3)
    expect_close("dlogits vs finite differences of your loss", dlogits, numeric, rtol=1e-6, atol=1e-9,
                 hint="the fourth-order centred difference of your own loss; a gradient must be the derivative "
                      "of the loss it comes with")


@task3
def test_padding_changes_nothing(submission, homework_seed):
    """A padded batch gives the loss and gradients of its real tokens, whatever the padding."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(homework_seed + 7)
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    expected_loss, expected = minitf_cross_entropy(logits, labels)  # invariance alone would pass a constant
    expect_close("loss", loss, expected_loss, rtol=1e-7, atol=1e-12, hint="the mean over the real target tokens")
    expect_close("dlogits", dlogits, expected, rtol=1e-7, atol=1e-12,
                 hint="(p_hat - onehot(y)) / n_real at real positions, 0 at padding")
    B, T, V = logits.shape
    rng = np.random.default_rng(homework_seed)
    more_logits = np.concatenate([logits, rng.normal(0, 5, size=(B, 4, V))], axis=1)  # (B, T+4, V)
    more_labels = np.concatenate([labels, np.full((B, 4), IGNORE_INDEX)], axis=1)  # 4 more padding columns
    loss2, dlogits2 = call_loss(masked_cross_entropy, more_logits, more_labels)
    if not close(loss2, loss, rtol=1e-9, atol=1e-12):
        fail(f"adding 4 padding positions to every row changed the loss from {loss:.8g} to {loss2:.8g}: padding "
             f"must add nothing to the sum and nothing to the count (divide by n_real, not by B*T)")
    expect_close("dlogits at the real positions after adding padding", dlogits2[:, :T], dlogits, rtol=1e-9,
                 atol=1e-14, hint="padding must not change the gradient of real tokens")
    expect_close("dlogits at the added padding positions", dlogits2[:, T:], np.zeros((B, 4, V)), rtol=0,
                 atol=1e-14, hint="an ignored label gets exactly zero gradient")


@task3
def test_float32_in_float32_out(submission, homework_seed):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(homework_seed + 9, dtype=np.float32)
    logits *= 30  # large logits: a softmax without the max subtracted overflows
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    as_array("dlogits", dlogits, dtype=np.float32)
    expected_loss, expected = minitf_cross_entropy(logits, labels)
    expect_close("loss (float32, logits up to ~200)", loss, expected_loss, rtol=1e-4, atol=1e-5,
                 hint="compute the softmax stably: subtract each row's maximum before exp")
    expect_close("dlogits (float32, logits up to ~200)", dlogits, expected, rtol=1e-4, atol=1e-6)


@task3
def test_training_with_your_loss(submission, homework_seed):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(homework_seed + 1)
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    mistake = diagnose_loss(loss, logits, labels) or diagnose_grad(dlogits, logits, labels)
    if mistake:
        fail(mistake)
    expect_same_curve("your masked_cross_entropy",
                      student_losses(submission, homework_seed, loss_fn=Student("masked_cross_entropy")),
                      reference_losses(homework_seed))


@task3
def test_another_ignore_index_and_a_batch_of_one(submission, homework_seed):
    """The template's every argument at another value: ``ignore_index`` other than -100 (the
    padding of these labels is -1, or an id past the vocabulary), and a batch of one row."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    for k, ((B, T, V), ignore_index) in enumerate(zip(shapes(homework_seed, [(1, 6, 7), (3, 5, 4)], B=(1, 4),
                                                             T=(2, 9), V=(2, 12)), (-1, 10_000))):
        logits, labels = loss_problem(homework_seed + 20 + k, B=B, T=T, V=V)
        labels = np.where(labels == IGNORE_INDEX, ignore_index, labels)
        if B == 1:
            labels[0, -1] = ignore_index  # a row of one with padding of its own
        loss, dlogits = call_loss(masked_cross_entropy, logits, labels, ignore_index)
        expected_loss, expected = minitf_cross_entropy(logits, labels, ignore_index=ignore_index)
        hint = (f"the labels equal to ignore_index={ignore_index} are the padding: read the ignore_index argument, "
                f"not the constant IGNORE_INDEX (-100)")
        expect_close(f"loss (B={B}, ignore_index={ignore_index})", loss, expected_loss, rtol=1e-7, atol=1e-12,
                     hint=hint)
        expect_close(f"dlogits (B={B}, ignore_index={ignore_index})", dlogits, expected, rtol=1e-7, atol=1e-12,
                     hint=hint)
