"""Homework 2, task 2.1 (the softmax and its backward): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail, softmax_overflow
from minitf.grading.problems import shapes
from minitf.layers.softmax import softmax as minitf_softmax
from minitf.layers.softmax import softmax_backward as minitf_softmax_backward
from minitf.masks import MASK_VALUE

from .common import (
    BACKWARD64,
    FLOAT32,
    FORWARD64,
    ROUGH,
    SHAPES_HINT,
    expect_untouched,
    python_loops,
    submission_source,
)

HOMEWORK = "hw02"
task1 = pytest.mark.hw02_task1


# =====================================================================================
# Task 2.1 (a) -- the softmax
# =====================================================================================
def _quiet(f):
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        return f()


def softmax_candidates(z: np.ndarray) -> dict:
    """The classic wrong softmaxes of ``z``, by the mistake's description."""
    out = {}
    for axis in range(z.ndim - 1):
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        out[f"the softmax was taken over axis {axis} (of size {z.shape[axis]}), not over the last axis: in "
            f"attention each query's row of weights (the last axis, the keys) must sum to 1"] = \
            e / e.sum(axis=axis, keepdims=True)
    if z.ndim > 1:
        e = _quiet(lambda: np.exp(z - z.max()))
        out["the softmax was normalised over the whole array (one sum for everything): each row, along the last "
            "axis, must sum to 1 on its own"] = _quiet(lambda: e / e.sum())
    return out


def diagnose_softmax(z: np.ndarray, p: np.ndarray, tol: dict) -> str | None:
    """Name the classic mistake in ``p = softmax(z)``, if it is one."""
    if not np.isfinite(p).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(p))[0])
        row = z[bad[:-1]]
        where = (f"p{list(bad)} is {p[bad]} (its row's scores run from {row.min():.4g} to {row.max():.4g}, "
                 f"dtype {z.dtype})")
        naive = _quiet(lambda: np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True))
        shifted = _quiet(lambda: np.exp(z - z.max()))
        global_max = _quiet(lambda: shifted / shifted.sum(axis=-1, keepdims=True))
        if np.array_equal(np.isfinite(p), np.isfinite(naive)):
            return softmax_overflow(where, "z", also=f"The same shift keeps a row of very negative scores (a masked "
                                                    f"row holds {MASK_VALUE:g}) from underflowing to 0 / 0")
        mean_shifted = _quiet(lambda: np.exp(z - z.mean(axis=-1, keepdims=True)))
        mean_shift = _quiet(lambda: mean_shifted / mean_shifted.sum(axis=-1, keepdims=True))
        if not np.isfinite(mean_shift).all() and np.array_equal(np.isfinite(p), np.isfinite(mean_shift)):
            return (f"{where}: you shifted each row by a constant other than its maximum (its mean, say). "
                    f"softmax(z - c) = softmax(z) holds for any c constant along the row, but only c = max z keeps "
                    f"every exponent <= 0: in a partly masked row (some keys {MASK_VALUE:g}, the others ordinary "
                    f"scores, as key padding gives) the mean lies far below the ordinary scores, and their exp "
                    f"overflows to inf / inf. Subtract the maximum of each row (over the last axis, keepdims=True)")
        if np.array_equal(np.isfinite(p), np.isfinite(global_max)):
            return (f"{where}: you subtracted the maximum of the whole array, not each row's own (max over the last "
                    f"axis, keepdims=True): a row whose scores all lie far below the global maximum (a masked row of "
                    f"{MASK_VALUE:g}, or just a row of smaller scores) underflows to 0 / 0")
        return (f"{where}: the softmax must stay finite for any finite scores. Subtract each row's maximum before "
                f"exp: softmax(z - max z) = softmax(z), and every exponent is then <= 0")
    for mistake, candidate in softmax_candidates(z).items():
        if candidate.shape == p.shape and close(p, candidate, **tol):
            return mistake
    sums = p.sum(axis=-1)
    if not np.allclose(sums, 1.0, rtol=1e-4, atol=0):
        i = tuple(int(k) for k in np.unravel_index(int(np.argmax(np.abs(sums - 1))), sums.shape))
        return (f"the row p{list(i)} sums to {sums[i]:.6g}, not 1: each row (along the last axis) of a softmax is a "
                f"probability distribution")
    return None


def check_softmax(softmax, z: np.ndarray, tol: dict | None = None) -> None:
    original = z.copy()
    p = call(softmax, z, shape_hint=SHAPES_HINT)
    p = as_array("p = softmax(z)", p, shape=z.shape, kind="f")
    expect_untouched(softmax, {0: ("z", original)})
    if p.dtype != z.dtype:
        fail(f"p = softmax(z): expected dtype {z.dtype} (the dtype of z), received {p.dtype}")
    tol = tol or (FORWARD64 if z.dtype == np.float64 else FLOAT32)
    expected = minitf_softmax(original.copy())
    if not close(p, expected, **tol):
        mistake = diagnose_softmax(original, p, tol)
        if mistake:
            fail(mistake)
    expect_close("p = softmax(z)", p, expected, **tol,
                 hint="p = exp(z - max z) / sum exp(z - max z), the max and the sum over the last axis")


@task1
def test_softmax_values(submission, homework_seed):
    softmax = submission.function("softmax")
    rng = np.random.default_rng(homework_seed + 21)
    drawn = shapes(homework_seed, [(2, 3, 4, 6), (3, 5, 8, 1)], B=(1, 3), H=(1, 4), T=(1, 5), S=(1, 9))
    for shape, dtype in [(drawn[0], np.float64), ((5, 7), np.float64), ((9,), np.float64),
                         (drawn[1][:3], np.float32), ((4, 1), np.float64)]:
        z = (3.0 * rng.standard_normal(shape)).astype(dtype)  # (..., S)
        check_softmax(softmax, z)


EXTREME64 = dict(rtol=1e-6, atol=1e-9)
EXTREME32 = dict(rtol=1e-3, atol=1e-5)


def extreme_scores(rng, S: int, big: float, dtype) -> np.ndarray:
    """(2, 5, S) scores, five kinds of rows: ordinary; fully masked (all MASK_VALUE, as a padded
    query's); all far below zero; all far above zero; partly masked (its last keys MASK_VALUE, as
    key padding gives, the others ordinary).  Without the max subtraction the second to fourth give
    NaN; with the maximum of the whole array subtracted, the first three do; shifted by the row's
    mean (or any constant but its maximum), the partly masked one does."""
    z = rng.standard_normal((2, 5, S)) * 3.0
    z[:, 1] = MASK_VALUE
    z[:, 2] -= big
    z[:, 3] += big
    z[0, 4, S // 2:] = MASK_VALUE  # half the keys padded
    z[1, 4, S - 1:] = MASK_VALUE  # one key padded
    return z.astype(dtype)


@task1
def test_softmax_is_stable_for_large_and_masked_scores(submission, homework_seed):
    softmax = submission.function("softmax")
    rng = np.random.default_rng(homework_seed + 22)
    # scores of size |z| carry a rounding of |z| * eps in any formula (1e-7 for z = -1e9 in float64): the
    # tolerances allow for it; what this test is after is NaN and inf
    check_softmax(softmax, extreme_scores(rng, 6, 1000.0, np.float64), tol=EXTREME64)
    check_softmax(softmax, extreme_scores(rng, 5, 150.0, np.float32), tol=EXTREME32)


# =====================================================================================
# Task 2.1 (b) -- the softmax backward
# =====================================================================================
def softmax_backward_candidates(dp: np.ndarray, p: np.ndarray) -> dict:
    """The classic wrong softmax backwards of (dp, p), by the mistake's description."""
    inner = (dp * p).sum(axis=-1, keepdims=True)  # (..., 1) <dp, p> per row
    out = {
        "dz = p * dp keeps only the diagonal of the Jacobian diag(p) - p p^T: every p_j depends on every z_i, and "
        "the off-diagonal terms -p_i p_j give the missing '- <dp, p>': dz = p * (dp - <dp, p>)": p * dp,
        "dz = p(1-p) * dp is the sigmoid's derivative, only the diagonal of the softmax's Jacobian diag(p) - p p^T: "
        "the off-diagonal terms -p_i p_j are missing. The whole product is dz = p * (dp - <dp, p>)": p * (1 - p) * dp,
        "the inner product <dp, p> = sum_j dp_j p_j lost its weights p_j (you subtracted the plain sum of dp): "
        "dz = p * (dp - sum(dp * p))": p * (dp - dp.sum(axis=-1, keepdims=True)),
        "dz = dp - <dp, p> misses the leading factor p: dz_i = p_i (dp_i - <dp, p>)": dp - inner,
        "the sign is flipped: dz = p * (dp - <dp, p>)": p * (inner - dp),
    }
    for axis in range(dp.ndim - 1):
        out[f"the inner product <dp, p> was summed over axis {axis}, not over each row (the last axis, the one the "
            f"softmax normalises)"] = p * (dp - (dp * p).sum(axis=axis, keepdims=True))
    if dp.ndim > 1:
        out["the inner product <dp, p> was summed over the whole array, not over each row (the last axis, the one "
            "the softmax normalises)"] = p * (dp - (dp * p).sum())
    return out


def check_softmax_backward(softmax_backward, dp: np.ndarray, p: np.ndarray, tol: dict) -> None:
    sent = {0: ("dp", dp.copy()), 1: ("p", p.copy())}
    dz = call(softmax_backward, dp, p, shape_hint=SHAPES_HINT)
    dz = as_array("dz = softmax_backward(dp, p)", dz, shape=p.shape, kind="f")
    expect_untouched(softmax_backward, sent)
    if dz.dtype != p.dtype:
        fail(f"dz = softmax_backward(dp, p): expected dtype {p.dtype} (the dtype of p), received {dz.dtype}")
    dp, p = sent[0][1], sent[1][1]
    expected = minitf_softmax_backward(dp, p)
    if not close(dz, expected, **tol):
        for mistake, candidate in softmax_backward_candidates(dp, p).items():
            if close(dz, candidate, **tol) and not close(candidate, expected, **tol):
                fail(mistake)
        if p.dtype == np.float64 and close(dz, expected, **ROUGH):
            fail(f"dz agrees with the softmax backward only to about {np.abs(dz - expected).max():.1g}, the accuracy "
                 f"of finite differences or of float32 arithmetic; the formula p * (dp - <dp, p>) in float64 is "
                 f"exact to about 1e-16 (tolerance rtol {tol['rtol']:g})")
    expect_close("dz = softmax_backward(dp, p)", dz, expected, **tol,
                 hint="dz = p * (dp - <dp, p>), the inner product over the last axis")


@task1
def test_softmax_backward_values(submission, homework_seed):
    softmax_backward = submission.function("softmax_backward")
    rng = np.random.default_rng(homework_seed + 23)
    for shape in [*shapes(homework_seed, [(2, 3, 4, 6)], B=(1, 3), H=(1, 4), T=(1, 5), S=(1, 9)), (5, 7), (9,)]:
        p = minitf_softmax(2.0 * rng.standard_normal(shape))  # (..., S)
        dp = rng.standard_normal(shape)  # a random upstream gradient (all ones would give dz = 0)
        check_softmax_backward(softmax_backward, dp, p, BACKWARD64)


@task1
def test_softmax_backward_float32_saturated_and_empty_rows(submission, homework_seed):
    """float32 in, float32 out; a one-hot (saturated) row passes no gradient; a row of zeros
    (a query with nothing to attend to, Lesson 3) gives zeros, never NaN."""
    softmax_backward = submission.function("softmax_backward")
    rng = np.random.default_rng(homework_seed + 24)
    z = 2.0 * rng.standard_normal((3, 4, 6))
    z[0, 1, 2] = 80.0  # one score far above the rest: p is one-hot in float64
    p = minitf_softmax(z)
    p[1, 2] = 0.0  # a fully masked query's row of weights
    dp = rng.standard_normal(p.shape)
    check_softmax_backward(softmax_backward, dp, p, BACKWARD64)
    dz = call(softmax_backward, dp, p, shape_hint=SHAPES_HINT)
    if np.abs(dz[0, 1]).max() > 1e-12:
        fail(f"a one-hot row p = {np.round(p[0, 1], 3).tolist()} got a gradient of up to {np.abs(dz[0, 1]).max():.3g}: "
             f"a saturated softmax passes (almost) no gradient, since diag(p) - p p^T = 0 for a one-hot p")
    check_softmax_backward(softmax_backward, dp.astype(np.float32), p.astype(np.float32), FLOAT32)


@task1
def test_softmax_and_its_backward_have_no_python_loop(submission, homework_seed, request):
    """Whole arrays at once: the max, the sum and the inner product over the last axis, never a
    Python loop over the rows (nor an (S, S) Jacobian built row by row)."""
    softmax = submission.function("softmax")
    softmax_backward = submission.function("softmax_backward")
    rng = np.random.default_rng(homework_seed + 25)
    z = 2.0 * rng.standard_normal((2, 3, 4, 5))
    check_softmax(softmax, z)
    p = minitf_softmax(z)
    check_softmax_backward(softmax_backward, rng.standard_normal(p.shape), p, BACKWARD64)
    loops = python_loops(submission_source(request), ("softmax", "softmax_backward"))
    if loops:
        fail(f"a Python loop over the rows: {'; '.join(loops)}. Neither function needs one: the softmax is "
             f"exp(z - z.max(axis=-1, keepdims=True)) over its sum on the same axis, and its backward "
             f"p * (dp - (dp * p).sum(axis=-1, keepdims=True)), one inner product per row for all rows at once")
