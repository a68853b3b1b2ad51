"""Homework 9, task 9.4 (the coverage loss and its gradient): the public tests.

Expected values: minitf's ``coverage_loss`` (``minitf.models.pointer_generator``), the loss
that trains its pointer-generator.  The gradient is checked in float64 at rtol 1e-11 on the
real source positions (padded source positions hold a = c = 0, where the min has no
derivative): a derivative written out agrees with minitf's to about 1e-16.

The loss is piecewise linear, so finite differences away from a kink are exact but for
rounding (and, rounded to the nearest multiple of weight / n_real, exact): every problem
therefore holds exact ties, step 1 attending exactly as step 0 did (a_1 = a_0 = c_1), where
the template's rule (on a tie the min's derivative goes to c) decides the gradient and a
difference quotient lands halfway between the two sides."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, as_float, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.layers.softmax import softmax
from minitf.models.pointer_generator import coverage_loss as minitf_coverage_loss

from .common import first_index

HOMEWORK = "hw09"
task4 = pytest.mark.hw09_task4
IGNORE = -100
TOL64 = {"rtol": 1e-11, "atol": 1e-14}


# =====================================================================================
# Task 9.4 -- problems and what classic mistakes compute
# =====================================================================================
def coverage_problem(seed: int, B=3, T=6, S=5, dtype=np.float64, ties=False):
    """a (B, T, S): attention rows over S source positions (the last ones padded in some examples,
    a = 0 there), and labels (B, T) right-padded with -100 (row 0 not padded).  ``ties``: step 1
    attends exactly as step 0 (a_1 = a_0, so a_1 = c_1 at every source position: exact ties of the
    min, at real target positions since every target has at least two)."""
    rng = np.random.default_rng(seed)
    src_len = rng.integers(S - 2, S + 1, size=B)
    src_len[0] = S
    src_pad = np.arange(S)[None, :] >= src_len[:, None]  # (B, S)
    a = softmax(rng.normal(0.0, 1.5, size=(B, T, S)) - 1e9 * src_pad[:, None, :]) * ~src_pad[:, None, :]
    if ties:
        a[:, 1] = a[:, 0]  # a copy, bit for bit (in every dtype): c_1 = a_0 = a_1
    tgt_len = rng.integers(2, T + 1, size=B)
    tgt_len[0] = T
    labels = rng.integers(3, 20, size=(B, T))
    labels[np.arange(T)[None, :] >= tgt_len[:, None]] = IGNORE
    return a.astype(dtype), labels.astype(np.int64), src_pad


def loss_of(a, labels, weight, c, direct=True, through_c=True):
    """The loss with a coverage ``c``, and its gradient along the paths asked for."""
    real = labels != IGNORE
    n = real.sum()
    loss = weight * (np.minimum(a, c).sum(-1) * real).sum() / n
    g = (weight * real / n)[..., None]
    da = g * (a < c) if direct else np.zeros_like(a)
    if through_c:
        dc = g * (a >= c)
        da = da + np.cumsum(dc[:, ::-1], axis=1)[:, ::-1] - dc
    return float(loss), da


def diagnose(loss, da, a, labels, weight, src_pad) -> str | None:
    c = np.zeros_like(a)
    c[:, 1:] = np.cumsum(a[:, :-1], axis=1)
    c_incl = np.cumsum(a, axis=1)
    exp_loss, exp_da = minitf_coverage_loss(a, labels, weight, IGNORE)
    real_src = ~src_pad[:, None, :] & np.ones_like(a, dtype=bool)
    if np.isclose(loss, loss_of(a, labels, weight, c_incl)[0], rtol=1e-9) and not np.isclose(loss, exp_loss, rtol=1e-9):
        return ("the coverage includes the current step: c_t = sum_{t' <= t} a_t' is always >= a_t, so "
                "min(a_t, c_t) = a_t and the loss is just the total attention. c_t must be the attention "
                "received BEFORE step t: c_t = sum_{t' < t} a_t' (c_0 = 0)")
    real = labels != IGNORE
    if np.isclose(loss, weight * (np.minimum(a, c).sum(-1)).sum() / real.size, rtol=1e-9) \
            and not np.isclose(loss, exp_loss, rtol=1e-9):
        return (f"the loss is averaged over all B * T = {real.size} target positions, padding included: divide by "
                f"the number of real positions, n_real = {int(real.sum())}, and add nothing at padded ones")
    if not np.isclose(loss, exp_loss, rtol=1e-9):
        return None
    direct_only = loss_of(a, labels, weight, c, through_c=False)[1]
    if close(da[real_src], direct_only[real_src], **TOL64) and not close(da[real_src], exp_da[real_src], **TOL64):
        return ("the gradient misses the path through the coverage: c_t = sum_{t' < t} a_t' depends on the earlier "
                "attention, so a_t' also receives, from every later step t > t', the min's derivative with respect "
                "to c_t (where c_t <= a_t). Only the direct path (where a_t < c_t) is there")
    # ties (a = c exactly): the direct path on a <= c and the coverage path on c < a
    g = (weight * real / real.sum())[..., None]
    ties_to_a = g * (a <= c) + np.cumsum((g * (a > c))[:, ::-1], axis=1)[:, ::-1] - g * (a > c)
    tied = (a == c) & real_src & real[..., None]
    if tied.any() and not close(da[real_src], exp_da[real_src], **TOL64):
        if close(da[real_src], ties_to_a[real_src], **TOL64):
            return ("on a tie (a_t,i = c_t,i: here step 1 attends exactly as step 0 did, so a_1 = c_1) the min's "
                    "derivative went to a_t. The rule is minitf's (and the template's): on a tie it goes to c, "
                    "so the direct path takes a_t < c_t and the path through the coverage c_t <= a_t")
        if close(da[real_src], ((exp_da + ties_to_a) / 2)[real_src], rtol=1e-5, atol=1e-8):
            return ("at the ties (a_t,i = c_t,i: step 1 attends exactly as step 0 did) the gradient is halfway "
                    "between the two sides of the min: what a difference quotient gives at a kink, where the "
                    "precision of finite differences is no help. The task is the derivative written out, with "
                    "the template's rule for a tie (the min's derivative goes to c)")
    if close(da[real_src], exp_da[real_src], rtol=1e-5, atol=1e-8):
        err = float(np.max(np.abs(da - exp_da)[real_src]))
        return (f"the gradient agrees with minitf's only to about {err:.1g}: the precision of finite differences, "
                f"not of a derivative written out in float64 (about 1e-16). The task is the gradient itself")
    return None


# =====================================================================================
# Task 9.4 -- checks
# =====================================================================================
def call_coverage(fn, a, labels, weight):
    out = call(fn, a, labels, weight, names=["a", "labels"], returns=2)
    loss = as_float("loss", out[0])
    da = as_array("da", out[1], shape=a.shape, kind="f", dtype=a.dtype)
    return loss, da


def check_coverage(fn, a, labels, weight, src_pad, what):
    loss, da = call_coverage(fn, a, labels, weight)
    exp_loss, exp_da = minitf_coverage_loss(a, labels, weight, IGNORE)
    real_src = np.broadcast_to(~src_pad[:, None, :], a.shape)
    tol = TOL64 if a.dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-7}
    if not (np.isclose(loss, exp_loss, rtol=tol["rtol"], atol=tol["atol"])
            and close(da[real_src], exp_da[real_src], **tol)):
        mistake = diagnose(loss, da, a.astype(np.float64), labels, weight, src_pad)
        if mistake:
            fail(f"coverage_loss ({what}): {mistake}")
    expect_close(f"the loss ({what})", np.float64(loss), np.float64(exp_loss), **tol,
                 hint="L = (weight / n_real) sum_{t real} sum_i min(a_t,i, c_t,i), c_t = sum_{t' < t} a_t'")
    expect_close(f"da on the real source positions ({what})", np.where(real_src, da, 0.0),
                 np.where(real_src, exp_da, 0.0), **tol,
                 hint="dL/da_t = g_t [a_t < c_t] + sum_{t'' > t} g_t'' [c_t'' <= a_t''], g_t = weight / n_real at "
                      "real t, 0 at padding")
    return loss, da


# =====================================================================================
# Task 9.4 -- the tests
# =====================================================================================
@task4
@pytest.mark.parametrize("weight", [1.0, 0.5])
def test_coverage_loss_matches_minitf(submission, homework_seed, weight):
    """float64, padded targets and padded source positions; loss and da at rtol 1e-11."""
    fn = submission.function("coverage_loss")
    (B, T, S), = shapes(homework_seed, [(3, 6, 5)], B=(2, 5), T=(2, 8), S=(2, 7))
    a, labels, src_pad = coverage_problem(homework_seed + 400 + int(weight * 10), B=B, T=T, S=S, ties=True)
    check_coverage(fn, a, labels, weight, src_pad, f"weight {weight:g}")


@task4
def test_coverage_gradient_reaches_earlier_steps(submission, homework_seed):
    """Attention that returns to one source position: the earlier steps' weights are what made the
    coverage, and get the gradient through it."""
    fn = submission.function("coverage_loss")
    rng = np.random.default_rng(homework_seed + 410)
    for B, T, S in ((2, 5, 4), (1, 4, 3)):  # a batch of one too
        scores = rng.normal(0.0, 0.5, size=(B, T, S))
        scores[:, :, 1] += 2.0  # every step looks at position 1 again
        a = softmax(scores)
        a[:, 1] = a[:, 0]  # step 1 repeats step 0 exactly: ties, decided by the template's rule
        labels = np.full((B, T), 7, dtype=np.int64)
        check_coverage(fn, a, labels, 1.0, np.zeros((B, S), bool), f"repeated attention, B = {B}")


@task4
def test_coverage_padding_gets_nothing(submission, homework_seed):
    """Padded target positions (label -100) add no loss, and their attention gets zero gradient."""
    fn = submission.function("coverage_loss")
    a, labels, src_pad = coverage_problem(homework_seed + 420, B=4, ties=True)
    _, da = check_coverage(fn, a, labels, 1.0, src_pad, "padded targets")
    pad = labels == IGNORE
    if (da[pad] != 0).any():
        b, t = first_index(pad & (da != 0).any(-1))
        fail(f"da at the padded target position ({b}, {t}) is not zero: padding adds no loss and, coming after "
             f"the real positions, feeds no real position's coverage")


@task4
def test_coverage_loss_float32_in_float32_out(submission, homework_seed):
    fn = submission.function("coverage_loss")
    a, labels, src_pad = coverage_problem(homework_seed + 430, dtype=np.float32, ties=True)
    check_coverage(fn, a, labels, 1.0, src_pad, "float32")
