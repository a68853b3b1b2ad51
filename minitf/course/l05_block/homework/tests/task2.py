"""Homework 5, task 5.2 (the residual sub-layer, pre-LN and post-LN): the public tests.

minitf's answer is ``minitf.blocks.sublayer_forward`` / ``sublayer_backward`` with a
``Linear`` as the sub-layer's function f, a ``LayerNorm`` and no dropout: the very code of
every encoder and decoder block.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from minitf.blocks import sublayer_backward, sublayer_forward
from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.layers import Dropout, Linear

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, expect_dict, layernorm, layernorm_grads, minitf_layernorm,
                     norm_params, stream, upstream)

HOMEWORK = "hw05"
task2 = pytest.mark.hw05_task2
ARGS = ["x", "W", "b", "gamma", "beta", "norm_first", "eps"]
BACKWARD_ARGS = ["dy"] + ARGS
GRAD_KEYS = ("dx", "dW", "db", "dgamma", "dbeta")
EPS = 1e-5
NAME = {True: "pre-LN (norm_first=True)", False: "post-LN (norm_first=False)"}


class Problem(NamedTuple):
    x: np.ndarray  # (B, T, D) the residual stream
    W: np.ndarray  # (D, D) f(h) = h @ W + b
    b: np.ndarray  # (D,)
    gamma: np.ndarray  # (D,)
    beta: np.ndarray  # (D,)
    norm_first: bool
    eps: float = EPS  # the norm's eps: the default, or another value (every argument at another value)

    def args(self) -> tuple:
        return self.x, self.W, self.b, self.gamma, self.beta, self.norm_first, self.eps


def make_problem(seed: int, norm_first: bool, shape=(3, 4, 8), dtype=np.float64, eps: float = EPS) -> Problem:
    D = shape[-1]
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, 0.7, size=(D, D)).astype(dtype)  # a branch as large as the stream: both paths matter
    b = rng.normal(0.0, 0.5, size=D).astype(dtype)
    gamma, beta = norm_params(D, seed + 1, dtype)
    return Problem(stream(shape, seed + 2, dtype, small_rows=False), W, b, gamma, beta, norm_first, eps)


# ---- minitf's answers -------------------------------------------------------------------------------------
def _parts(p: Problem):
    D = p.x.shape[-1]
    lin = Linear(D, D, rng=np.random.default_rng(0), dtype=p.x.dtype)
    lin.params["W"][...] = p.W
    lin.params["b"][...] = p.b
    return lin, minitf_layernorm(p.gamma, p.beta, p.eps), Dropout(0.0, rng=np.random.default_rng(0))


def minitf_forward(p: Problem) -> np.ndarray:
    lin, norm, drop = _parts(p)
    return sublayer_forward(p.x, lin.forward, norm, drop, p.norm_first)[0]


def minitf_backward(p: Problem, dy: np.ndarray) -> dict:
    lin, norm, drop = _parts(p)
    _, cache = sublayer_forward(p.x, lin.forward, norm, drop, p.norm_first)
    lin.zero_grad(), norm.zero_grad()
    dx, _ = sublayer_backward(dy, cache, lambda dout, c: (lin.backward(dout, c), None), norm, drop, p.norm_first)
    return {"dx": dx, "dW": lin.grads["W"].copy(), "db": lin.grads["b"].copy(),
            "dgamma": norm.grads["gamma"].copy(), "dbeta": norm.grads["beta"].copy()}


# ---- what the classic mistakes compute ----------------------------------------------------------------------
def forward_variants(p: Problem) -> dict:
    x, W, b, g, be = p.x.astype(np.float64), p.W, p.b, p.gamma, p.beta

    def LN(a):
        return layernorm(a, g.astype(np.float64), be.astype(np.float64), p.eps)

    def f(a):
        return a @ W + b

    pre, post = x + f(LN(x)), LN(x + f(x))
    out = {"swapped": post if p.norm_first else pre}
    if p.norm_first:
        out["stream normalised"] = LN(x) + f(LN(x))
        out["no residual"] = f(LN(x))
        out["branch input not normalised"] = x + f(x)
    else:
        out["branch normalised"] = x + LN(f(x))
        out["no residual"] = LN(f(x))
        out["normalised input"] = LN(x) + f(LN(x))
    return out


FORWARD_MESSAGES = {
    "swapped": "y is the other arrangement: norm_first=True is pre-LN, y = x + f(LN(x)); norm_first=False is "
               "post-LN, y = LN(x + f(x))",
    "stream normalised": "the residual stream itself was normalised, y = LN(x) + f(LN(x)): in pre-LN only the branch "
                         "reads LN(x); the stream x passes to y untouched, y = x + f(LN(x))",
    "no residual": "the residual x was not added: the sub-layer's output is the branch alone",
    "branch input not normalised": "the branch read x, not LN(x): pre-LN is y = x + f(LN(x))",
    "branch normalised": "the branch alone was normalised, y = x + LN(f(x)): post-LN normalises the sum, "
                         "y = LN(x + f(x))",
    "normalised input": "the input was normalised before the branch, y = LN(x) + f(LN(x)): post-LN normalises after "
                        "the residual sum, y = LN(x + f(x))",
}


def backward_variants(p: Problem, dy: np.ndarray) -> dict:
    """dx as each classic mistake computes it (every other step right)."""
    x, W, b, g = p.x, p.W, p.b, p.gamma

    def LN_back(d, at):
        return layernorm_grads(d, at, g, p.eps)[0]

    if p.norm_first:
        z_like = x + (layernorm(x, g, p.beta, p.eps) @ W + b)
        return {
            "no identity": LN_back(dy @ W.T, x),
            "wrong point: both paths": LN_back(dy + dy @ W.T, x),
            "norm skipped": dy + dy @ W.T,
            "wrong point: output statistics": dy + LN_back(dy @ W.T, z_like),
        }
    z = x + (x @ W + b)
    dz = LN_back(dy, z)
    return {
        "no identity": dz @ W.T,
        "wrong point: branch only": dy + LN_back(dy @ W.T, z),
        "wrong point: identity only": dz + dy @ W.T,
        "wrong point: as pre-LN": dy + LN_back(dy @ W.T, x),
        "norm skipped": dy + dy @ W.T,
        "wrong point: input statistics": LN_back(dy, x) + LN_back(dy, x) @ W.T,
    }


def backward_messages(norm_first: bool) -> dict:
    if norm_first:
        right = "dx = dy + LN_backward(dy @ W^T) at x"
        return {
            "no identity": f"dx misses the identity path's gradient: x reaches y directly (y = x + ...), so dy flows "
                           f"into dx unchanged as well as through the branch; {right}",
            "wrong point: both paths": f"LayerNorm's backward at the wrong point: in pre-LN only the branch went "
                                       f"through the norm, so only the branch's gradient goes through its backward; "
                                       f"the identity path adds dy itself; {right}",
            "norm skipped": f"LayerNorm's backward is missing from the branch: the branch read LN(x), so its "
                            f"gradient goes through the norm's backward before reaching x; {right}",
            "wrong point: output statistics": f"LayerNorm's backward at the wrong point: it used the statistics of y, "
                                              f"but the norm's input is x; {right}",
        }
    right = "dz = LN_backward(dy) at z = x + f(x), then dx = dz + dz @ W^T"
    return {
        "no identity": f"dx misses the identity path's gradient: z = x + f(x), so dz flows into dx directly as well as "
                       f"through the branch; {right}",
        "wrong point: branch only": f"LayerNorm's backward at the wrong point: post-LN normalises the sum z, so both "
                                    f"paths start after the norm's backward; {right}",
        "wrong point: identity only": f"LayerNorm's backward at the wrong point: the branch's gradient must go "
                                      f"through the norm's backward too, as the identity's; {right}",
        "wrong point: as pre-LN": f"LayerNorm's backward at the wrong point: this is pre-LN's backward; post-LN's "
                                  f"norm comes after the sum; {right}",
        "norm skipped": f"LayerNorm's backward is missing: post-LN's output is LN(z); {right}",
        "wrong point: input statistics": f"LayerNorm's backward at the wrong point: it used the statistics of x, but "
                                         f"post-LN's norm reads z = x + f(x); {right}",
    }


# ---- the checks ------------------------------------------------------------------------------------------
def task1_note(submission, p: Problem) -> str:
    """A pointer to task 5.1 when the student's own LayerNorm disagrees with minitf's on this problem."""
    try:
        y = submission.function("layernorm_forward")(p.x, p.gamma, p.beta, p.eps)
        if isinstance(y, np.ndarray) and close(y, layernorm(p.x, p.gamma, p.beta, p.eps), **FORWARD_TOL[p.x.dtype]):
            return ""
    except Exception:  # not written yet, or failing: nothing to point at
        return ""
    return (" (your layernorm_forward of task 5.1 does not agree with minitf's LayerNorm either: fix it first, or use "
            "minitf.layers.LayerNorm here)")


def check_forward(y, p: Problem, submission) -> None:
    tol = FORWARD_TOL[p.x.dtype]
    y = as_array("sublayer_forward's y", y, shape=p.x.shape, kind="f", dtype=p.x.dtype)
    expected = minitf_forward(p)
    if close(y, expected, **tol):
        return
    for key, value in forward_variants(p).items():
        if close(y, value, **tol):
            fail(f"{NAME[p.norm_first]}: {FORWARD_MESSAGES[key]}")
    expect_close(f"{NAME[p.norm_first]}: y", y, expected, **tol,
                 hint="pre-LN: y = x + f(LN(x)); post-LN: y = LN(x + f(x)); f(h) = h @ W + b"
                 + task1_note(submission, p))


def check_backward(out, p: Problem, dy: np.ndarray, submission, base_tol=BACKWARD_TOL) -> None:
    tol, D, name = base_tol, p.x.shape[-1], NAME[p.norm_first]
    g = expect_dict("sublayer_backward", out, GRAD_KEYS)
    got = {"dx": as_array("dx", g["dx"], shape=p.x.shape, kind="f", dtype=p.x.dtype)}
    for key, shape in (("dW", (D, D)), ("db", (D,)), ("dgamma", (D,)), ("dbeta", (D,))):
        got[key] = as_array(key, g[key], shape=shape, kind="f", dtype=p.x.dtype)
    e = minitf_backward(p, dy)
    if not close(got["dx"], e["dx"], **tol):
        for key, value in backward_variants(p, dy).items():
            if close(got["dx"], value, **tol):
                fail(f"{name}: {backward_messages(p.norm_first)[key]}")
        expect_close(f"{name}: dx", got["dx"], e["dx"], **tol,
                     hint="every path from x to y adds its share to dx" + task1_note(submission, p))
    x = p.x
    branch_in = "LN(x)" if p.norm_first else "x"
    branch_grad = "dy" if p.norm_first else "dz = LN_backward(dy) at z"
    if not close(got["dW"], e["dW"], **tol):
        if close(got["dW"], e["dW"].T, **tol):
            fail(f"{name}: dW is transposed: with W stored (D_in, D_out) for h @ W, dW = h^T (gradient at f's output), "
                 f"summed over every position")
        if p.norm_first and close(got["dW"], x.reshape(-1, D).T @ dy.reshape(-1, D), **tol):
            fail(f"{name}: dW uses x, but in pre-LN f reads LN(x): dW = LN(x)^T dy")
        if not p.norm_first and close(got["dW"], x.reshape(-1, D).T @ dy.reshape(-1, D), **tol):
            fail(f"{name}: dW uses dy, but in post-LN the gradient at f's output is dz, after the norm's backward: "
                 f"dW = x^T dz")
        expect_close(f"{name}: dW", got["dW"], e["dW"], **tol, hint=f"dW = {branch_in}^T ({branch_grad})")
    if not close(got["db"], e["db"], **tol) and not p.norm_first and close(got["db"], dy.sum(axis=(0, 1)), **tol):
        fail(f"{name}: db sums dy, but in post-LN the gradient at f's output is dz, after the norm's backward")
    expect_close(f"{name}: db", got["db"], e["db"], **tol, hint=f"db = ({branch_grad}) summed over B and T")
    for key in ("dgamma", "dbeta"):
        if not close(got[key], e[key], **tol) and p.norm_first:
            wrong = layernorm_grads(dy, x, p.gamma, p.eps)[1 if key == "dgamma" else 2]
            if close(got[key], wrong, **tol):
                fail(f"{name}: {key} used dy as the norm's upstream gradient: in pre-LN the norm feeds the branch, "
                     f"so its upstream gradient is dh = dy @ W^T")
        expect_close(f"{name}: {key}", got[key], e[key], **tol,
                     hint="the norm's gradients, from its own upstream gradient (pre-LN: dy @ W^T at x; post-LN: dy "
                          "at z)")


@task2
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_sublayer_forward(submission, homework_seed, norm_first):
    sublayer_forward_ = submission.function("sublayer_forward")
    shape, = shapes(homework_seed, [(3, 4, 8)], B=(1, 4), T=(1, 6), D=(2, 10))
    p = make_problem(homework_seed + 200 + int(norm_first), norm_first, shape=shape)
    y = call(sublayer_forward_, *p.args(), names=ARGS, why=READ_ONLY)
    check_forward(y, p, submission)


@task2
def test_sublayer_forward_float32(submission, homework_seed):
    sublayer_forward_ = submission.function("sublayer_forward")
    for norm_first in (True, False):
        p = make_problem(homework_seed + 210 + int(norm_first), norm_first, shape=(2, 3, 16), dtype=np.float32)
        y = call(sublayer_forward_, *p.args(), names=ARGS, why=READ_ONLY)
        check_forward(y, p, submission)


@task2
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_sublayer_backward(submission, homework_seed, norm_first):
    """float64, a random upstream gradient: dx, dW, db, dgamma, dbeta."""
    sublayer_backward_ = submission.function("sublayer_backward")
    shape, = shapes(homework_seed, [(3, 5, 8)], B=(1, 4), T=(1, 6), D=(2, 10))
    p = make_problem(homework_seed + 220 + int(norm_first), norm_first, shape=shape)
    dy = upstream(p.x.shape, homework_seed + 230 + int(norm_first))
    out = call(sublayer_backward_, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    check_backward(out, p, dy, submission)


@task2
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_sublayer_with_another_eps_and_one_position(submission, homework_seed, norm_first):
    """``eps`` at another value than the default (0.5: the norm's output moves by a few percent), on a
    batch of one example of one position: the eps given reaches the norm, forward and backward."""
    sublayer_forward_ = submission.function("sublayer_forward")
    sublayer_backward_ = submission.function("sublayer_backward")
    for k, shape in enumerate(shapes(homework_seed, [(2, 3, 6), (1, 1, 4)], B=(1, 4), T=(1, 6), D=(2, 10))):
        p = make_problem(homework_seed + 240 + 2 * k + int(norm_first), norm_first, shape=shape, eps=0.5)
        y = call(sublayer_forward_, *p.args(), names=ARGS, why=READ_ONLY)
        y = as_array("sublayer_forward's y", y, shape=p.x.shape, kind="f", dtype=p.x.dtype)
        hint = "pass the eps given on to your layernorm (eps = 0.5 here): the default 1e-5 gives another y"
        expect_close(f"{NAME[norm_first]}, eps = 0.5, shape {shape}: y", y, minitf_forward(p), **FORWARD_TOL[p.x.dtype],
                     hint=hint)
        dy = upstream(p.x.shape, homework_seed + 250 + 2 * k + int(norm_first))
        out = call(sublayer_backward_, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY)
        g = expect_dict("sublayer_backward", out, GRAD_KEYS)
        for key, value in minitf_backward(p, dy).items():
            expect_close(f"{NAME[norm_first]}, eps = 0.5, shape {shape}: {key}", g[key], value, **BACKWARD_TOL,
                         hint="pass the eps given on to your layernorm's backward (eps = 0.5 here)")


@task2
def test_sublayer_backward_float32(submission, homework_seed):
    """float32 in, float32 out: every gradient in x's dtype (the template), close to minitf's."""
    sublayer_backward_ = submission.function("sublayer_backward")
    for norm_first in (True, False):
        p = make_problem(homework_seed + 260 + int(norm_first), norm_first, shape=(2, 3, 8), dtype=np.float32)
        dy = upstream(p.x.shape, homework_seed + 270 + int(norm_first), np.float32)
        out = call(sublayer_backward_, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY)
        check_backward(out, p, dy, submission, base_tol=dict(rtol=1e-3, atol=1e-4))
