"""Homework 5, task 5.1 (LayerNorm forward and backward): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, layernorm, layernorm_backward_variants, layernorm_grads,
                     norm_params, scaled, stream, upstream, variant_layernorm)

HOMEWORK = "hw05"
task1 = pytest.mark.hw05_task1
FORWARD_ARGS = ["x", "gamma", "beta", "eps"]
BACKWARD_ARGS = ["dy", "x", "gamma", "eps"]


# =====================================================================================
# Task 5.1 (a) -- the forward
# =====================================================================================
def check_forward(y, x, gamma, beta, eps) -> None:
    """The student's y against minitf's LayerNorm; a classic mistake is named."""
    tol = FORWARD_TOL[x.dtype]
    y = as_array("layernorm_forward's y", y, shape=x.shape, kind="f", dtype=x.dtype)
    expected = layernorm(x, gamma, beta, eps)
    if close(y, expected, **tol):
        return
    x64, g64, b64 = (a.astype(np.float64) for a in (x, gamma, beta))
    leading = tuple(range(x.ndim - 1))
    mistakes = []
    if x.ndim >= 2:
        mistakes.append((dict(axis=0), "y was normalised over the batch axis (axis 0): that is BatchNorm. LayerNorm "
                                       "takes mu and sigma over the last axis, the D features of one position of one "
                                       "example, so that no other example of the batch changes its output"))
    if x.ndim >= 3:
        mistakes.append((dict(axis=leading), "y was normalised over the batch axis and the positions (every axis "
                                             "but the last), one mu and sigma per feature: that is BatchNorm. "
                                             "LayerNorm takes them over the last axis, per position"))
        mistakes.append((dict(axis=1), "y was normalised over the positions (axis 1). LayerNorm takes mu and sigma "
                                       "over the last axis, the D features of one position"))
    mistakes += [
        (dict(ddof=1), "the variance is the unbiased one (divided by D - 1): LayerNorm's sigma^2 is the biased "
                       "mean((x - mu)^2), divided by D, as in the paper, minitf and PyTorch"),
        (dict(eps_where="outside"), "eps sits outside the square root, (x - mu) / (sigma + eps): it belongs inside, "
                                    "(x - mu) / sqrt(sigma^2 + eps); the two differ most on rows of small variance"),
        (dict(eps_where="none"), "eps was left out: x_hat = (x - mu) / sqrt(sigma^2 + eps), which keeps a constant "
                                 "row finite and rows of small variance from blowing up"),
    ]
    for kwargs, message in mistakes:
        if close(y, variant_layernorm(x64, g64, b64, eps, **kwargs), **tol):
            fail(message)
    if close(y, variant_layernorm(x64, g64, b64, 1e-5), **tol) and eps != 1e-5:
        fail(f"y was computed with eps = 1e-5 whatever the argument eps (here {eps:g}): use the eps given")
    if close(y, variant_layernorm(x64, np.ones_like(g64), np.zeros_like(b64), eps), **tol):
        fail("y is x_hat alone: gamma and beta were not applied (y = gamma * x_hat + beta)")
    expect_close("layernorm_forward's y", y, expected, **tol,
                 hint="y = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, mu and sigma^2 over the last axis")


@task1
def test_layernorm_forward(submission, homework_seed):
    """(B, T, D) and (N, D) inputs in float64, rows of very different scales, a constant row."""
    layernorm_forward = submission.function("layernorm_forward")
    drawn = shapes(homework_seed, [(3, 4, 8), (2, 3, 7)], B=(1, 4), T=(1, 6), D=(2, 9))
    for k, (shape, eps) in enumerate([(drawn[0], 1e-5), ((5, 6), 1e-3), (drawn[1], 1e-5)]):
        x = stream(shape, homework_seed + 10 + k)
        gamma, beta = norm_params(shape[-1], homework_seed + 20 + k)
        y = call(layernorm_forward, x, gamma, beta, eps, names=FORWARD_ARGS, why=READ_ONLY)
        if not isinstance(y, np.ndarray) and isinstance(y, tuple) and y and isinstance(y[0], np.ndarray):
            fail("layernorm_forward: expected the array y alone, received a tuple (return y, not (y, cache))")
        check_forward(y, x, gamma, beta, eps)


@task1
def test_layernorm_forward_float32(submission, homework_seed):
    """float32 in, float32 out."""
    layernorm_forward = submission.function("layernorm_forward")
    x = stream((2, 5, 16), homework_seed + 30, dtype=np.float32, small_rows=False)
    gamma, beta = norm_params(16, homework_seed + 31, dtype=np.float32)
    y = call(layernorm_forward, x, gamma, beta, 1e-5, names=FORWARD_ARGS, why=READ_ONLY)
    check_forward(y, x, gamma, beta, 1e-5)


# =====================================================================================
# Task 5.1 (b) -- the backward
# =====================================================================================
def check_backward(out, dy, x, gamma, eps, base_tol=BACKWARD_TOL) -> None:
    """The student's (dx, dgamma, dbeta) against minitf's LayerNorm.backward, at ``base_tol``."""
    D = x.shape[-1]
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        fail(f"layernorm_backward: expected a tuple (dx, dgamma, dbeta), received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    dx, dgamma, dbeta = out
    for name, g in (("dgamma", dgamma), ("dbeta", dbeta)):
        shape = getattr(g, "shape", None)
        if shape is not None and shape != (D,) and len(shape) > 1 and shape[-1] == D:
            fail(f"{name} has shape {shape}: it was not summed over every leading axis. gamma and beta are shared by "
                 f"every position of every example, so their gradients sum over all of them: shape (D,) = {(D,)}")
    dx = as_array("dx", dx, shape=x.shape, kind="f", dtype=x.dtype)
    dgamma = as_array("dgamma", dgamma, shape=(D,), kind="f", dtype=x.dtype)
    dbeta = as_array("dbeta", dbeta, shape=(D,), kind="f", dtype=x.dtype)
    e_dx, e_dgamma, e_dbeta = layernorm_grads(dy, x, gamma, eps)
    tol = base_tol
    expect_close("dbeta", dbeta, e_dbeta, **tol, hint="dbeta = dy summed over every leading axis")
    if not close(dgamma, e_dgamma, **tol):
        leading = tuple(range(x.ndim - 1))
        if close(dgamma, (dy * x).sum(axis=leading), **tol):
            fail("dgamma = sum of dy * x: gamma multiplies x_hat, the normalised input, so dgamma = sum of dy * x_hat")
        expect_close("dgamma", dgamma, e_dgamma, **tol, hint="dgamma = dy * x_hat summed over every leading axis")
    tol = scaled(base_tol, e_dx)  # dx's entries cancel to near 0 in places
    if close(dx, e_dx, **tol):
        return
    variants = layernorm_backward_variants(dy, x, gamma, eps)
    messages = {
        "constants": "dx treated mu and sigma as constants (dx = dx_hat / sqrt(sigma^2 + eps)): both are functions "
                     "of x, and x_j reaches y through them too. dx = rstd * (dx_hat - mean(dx_hat) - x_hat * "
                     "mean(dx_hat * x_hat)): the two mean-of-gradient terms are missing",
        "no mean term": "the term through the mean is missing: dx = rstd * (dx_hat - mean(dx_hat) - x_hat * "
                        "mean(dx_hat * x_hat)); without -mean(dx_hat) a row of dx does not sum to 0, although "
                        "adding a constant to a row of x changes nothing",
        "no variance term": "the term through the variance is missing: dx = rstd * (dx_hat - mean(dx_hat) - x_hat * "
                            "mean(dx_hat * x_hat)); sigma is a function of x as well",
        "no gamma": "dx ignores gamma: the gradient reaching x_hat is dx_hat = dy * gamma, not dy",
    }
    for key, message in messages.items():
        if close(dx, variants[key], **tol):
            fail(message)
    row_sums = np.abs(dx.sum(axis=-1)).max()
    if row_sums > 1e-8 * max(1.0, float(np.abs(e_dx).max())):
        fail(f"a row of dx sums to {row_sums:.3g}, not 0: adding a constant to a row of x changes nothing after the "
             f"normalisation, so the gradient has no component along (1, ..., 1). Check the term through the mean")
    expect_close("dx", dx, e_dx, **tol,
                 hint="dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat)), dx_hat = dy * gamma, "
                      "means over the last axis")


@task1
def test_layernorm_backward(submission, homework_seed):
    """float64, a random upstream gradient, random gamma: (B, T, D) and (N, D), eps 1e-5 and 1e-3."""
    layernorm_backward = submission.function("layernorm_backward")
    drawn = shapes(homework_seed, [(3, 4, 8)], B=(1, 4), T=(1, 6), D=(2, 9))
    for k, (shape, eps) in enumerate([(drawn[0], 1e-5), ((6, 5), 1e-3)]):
        x = stream(shape, homework_seed + 40 + k)
        gamma, _ = norm_params(shape[-1], homework_seed + 50 + k)
        dy = upstream(shape, homework_seed + 60 + k)
        out = call(layernorm_backward, dy, x, gamma, eps, names=BACKWARD_ARGS, why=READ_ONLY)
        check_backward(out, dy, x, gamma, eps)


@task1
def test_layernorm_backward_one_row(submission, homework_seed):
    """A single row x (D,): no leading axis at all; a narrow one (spread ~0.05, 1/sigma ~ 20)."""
    layernorm_backward = submission.function("layernorm_backward")
    rng = np.random.default_rng(homework_seed + 70)
    x = rng.normal(0.0, 0.5) + 0.05 * rng.normal(size=9)
    gamma, _ = norm_params(9, homework_seed + 71)
    dy = upstream((9,), homework_seed + 72)
    out = call(layernorm_backward, dy, x, gamma, 1e-5, names=BACKWARD_ARGS, why=READ_ONLY)
    check_backward(out, dy, x, gamma, 1e-5)


@task1
def test_layernorm_backward_float32(submission, homework_seed):
    """float32 in, float32 out: dx, dgamma and dbeta in x's dtype (the template), close to minitf's."""
    layernorm_backward = submission.function("layernorm_backward")
    shape, = shapes(homework_seed, [(2, 3, 6)], B=(1, 4), T=(1, 6), D=(2, 9))
    x = stream(shape, homework_seed + 80, np.float32, small_rows=False)
    gamma, _ = norm_params(shape[-1], homework_seed + 81, np.float32)
    dy = upstream(shape, homework_seed + 82, np.float32)
    out = call(layernorm_backward, dy, x, gamma, 1e-5, names=BACKWARD_ARGS, why=READ_ONLY)
    check_backward(out, dy, x, gamma, 1e-5, base_tol=dict(rtol=1e-3, atol=1e-4))
