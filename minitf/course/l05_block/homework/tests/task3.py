"""Homework 5, task 5.3 (the feed-forward network with ReLU and GELU): the public tests.

minitf's answer is its ``FeedForward`` (no dropout) loaded with the same weights.  D and F
differ in every problem, so that a transposed weight gradient shows in its shape.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.layers import FeedForward
from minitf.layers.activations import erf, gelu_tanh_backward, gelu_tanh_forward

from .common import BACKWARD_TOL, FORWARD_TOL, READ_ONLY, expect_dict, upstream

HOMEWORK = "hw05"
task3 = pytest.mark.hw05_task3
ARGS = ["x", "params", "activation"]
BACKWARD_ARGS = ["dy"] + ARGS
GRAD_SHAPES = {"dW_1": "DF", "db_1": "F", "dW_2": "FD", "db_2": "D"}


class Problem(NamedTuple):
    x: np.ndarray  # (B, T, D)
    params: dict  # W_1 (D, F), b_1 (F,), W_2 (F, D), b_2 (D,)
    activation: str

    @property
    def dims(self) -> tuple:
        """(D, F)"""
        return self.params["W_1"].shape

    def args(self) -> tuple:
        return self.x, self.params, self.activation


def make_problem(seed: int, activation: str, shape=(3, 4, 6), F: int = 10, dtype=np.float64,
                 zeros: bool = False) -> Problem:
    """Random weights and input.  ``zeros``: position 0 of example 0 is the zero vector and a
    third of b_1 is exactly 0, so that some pre-activations a are exactly 0 (ReLU's kink)."""
    rng = np.random.default_rng(seed)
    D = shape[-1]
    params = {"W_1": rng.normal(0.0, 1.0 / math.sqrt(D), size=(D, F)), "b_1": rng.normal(0.0, 0.5, size=F),
              "W_2": rng.normal(0.0, 1.0 / math.sqrt(F), size=(F, D)), "b_2": rng.normal(0.0, 0.5, size=D)}
    x = rng.normal(size=shape)
    if zeros:
        x[(0,) * (x.ndim - 1)] = 0.0  # a zero input vector: a = b_1 there
        params["b_1"][rng.permutation(F)[: F // 3]] = 0.0  # ... and exactly 0 where b_1 is
    return Problem(x.astype(dtype), {k: v.astype(dtype) for k, v in params.items()}, activation)


# ---- minitf's answers --------------------------------------------------------------------------------------
def minitf_ffn(p: Problem) -> FeedForward:
    D, F = p.dims
    ff = FeedForward(D, F, p.activation, 0.0, rng=np.random.default_rng(0), dtype=p.x.dtype)
    for lin, k in ((ff.linear1, "1"), (ff.linear2, "2")):
        lin.params["W"][...] = p.params["W_" + k]
        lin.params["b"][...] = p.params["b_" + k]
    return ff


def minitf_forward(p: Problem) -> np.ndarray:
    return minitf_ffn(p).forward(p.x)[0]


def minitf_backward(p: Problem, dy: np.ndarray) -> dict:
    ff = minitf_ffn(p)
    _, cache = ff.forward(p.x)
    ff.zero_grad()
    dx = ff.backward(dy, cache)
    return {"dx": dx, "dW_1": ff.linear1.grads["W"].copy(), "db_1": ff.linear1.grads["b"].copy(),
            "dW_2": ff.linear2.grads["W"].copy(), "db_2": ff.linear2.grads["b"].copy()}


# ---- what the classic mistakes compute ---------------------------------------------------------------------
def _Phi(a):
    return 0.5 * (1.0 + erf(a / math.sqrt(2.0)))


def _phi(a):
    return np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)


def derivative_variants(activation: str, a: np.ndarray, dh: np.ndarray) -> dict:
    """act'(a) as each classic mistake computes it (name -> (..., F))."""
    if activation == "relu":
        return {"at zero": (a >= 0).astype(a.dtype), "sign": np.sign(a), "wrong side": (a < 0).astype(a.dtype),
                "output": a * (a > 0), "gradient sign": (dh > 0).astype(a.dtype), "none": np.ones_like(a)}
    return {"Phi only": _Phi(a), "pdf without a": _Phi(a) + _phi(a), "tanh": gelu_tanh_backward(np.ones_like(a), a),
            "none": np.ones_like(a)}


DERIVATIVE_MESSAGES = {
    "at zero": "ReLU's derivative at a = 0 was taken as 1 (a >= 0): at the kink minitf and PyTorch take 0, "
               "act'(a) = 1[a > 0]; pre-activations exactly 0 happen (a zero input with a zero bias)",
    "sign": "ReLU's derivative was taken as sign(a): it is 0 for a < 0, not -1; act'(a) = 1[a > 0]",
    "wrong side": "ReLU's derivative is on the wrong side, 1[a < 0]: ReLU passes the gradient where a > 0",
    "output": "ReLU's derivative was taken as relu(a), the output itself: it is the indicator 1[a > 0]",
    "gradient sign": "ReLU's mask came from the sign of the incoming gradient dh: it comes from the pre-activation, "
                     "act'(a) = 1[a > 0], whatever the sign of dh",
    "none": "the activation's derivative is missing: da = dh * act'(a), not dh",
    "Phi only": "GELU's derivative misses the a * phi(a) term: GELU(a) = a * Phi(a), so by the product rule "
                "GELU'(a) = Phi(a) + a * phi(a), phi the standard normal density",
    "pdf without a": "GELU's derivative is Phi(a) + a * phi(a): the second term is a times the density, not phi(a) "
                     "alone",
    "tanh": "GELU's derivative is that of the tanh approximation: minitf's 'gelu' is the exact a * Phi(a), "
            "Phi(a) = (1 + erf(a / sqrt 2)) / 2, with derivative Phi(a) + a * phi(a)",
}


# ---- the checks ------------------------------------------------------------------------------------------
def check_forward(y, p: Problem) -> None:
    tol = FORWARD_TOL[p.x.dtype]
    y = as_array("feedforward_forward's y", y, shape=p.x.shape, kind="f", dtype=p.x.dtype)
    expected = minitf_forward(p)
    if close(y, expected, **tol):
        return
    q = p.params
    a = p.x.astype(np.float64) @ q["W_1"] + q["b_1"]
    if p.activation == "gelu":
        if close(y, gelu_tanh_forward(a)[0] @ q["W_2"] + q["b_2"], **tol):
            fail("GELU was computed with its tanh approximation: minitf's (and PyTorch's default) 'gelu' is exact, "
                 "a * Phi(a) with Phi(a) = (1 + erf(a / sqrt 2)) / 2")
        if close(y, (a * (a > 0)) @ q["W_2"] + q["b_2"], **tol):
            fail("activation='gelu' computed ReLU: GELU(a) = a * Phi(a)")
    elif close(y, (a * _Phi(a)) @ q["W_2"] + q["b_2"], **tol):
        fail("activation='relu' computed GELU: ReLU(a) = max(0, a)")
    expect_close(f"feedforward_forward's y ({p.activation})", y, expected, **tol,
                 hint="y = act(x @ W_1 + b_1) @ W_2 + b_2")


def check_backward(out, p: Problem, dy: np.ndarray, tol=BACKWARD_TOL) -> None:
    D, F = p.dims
    size = {"D": D, "F": F}
    g = expect_dict("feedforward_backward", out, ("dx",) + tuple(GRAD_SHAPES))
    for key, letters in GRAD_SHAPES.items():
        shape = tuple(size[c] for c in letters)
        received = getattr(g[key], "shape", None)
        if len(shape) == 2 and shape[0] != shape[1] and received == shape[::-1]:
            weight = "W" + key[2:]
            fail(f"{key} is transposed, shape {received}: {weight} is stored {shape} (D_in, D_out) for x @ {weight}, "
                 f"and its gradient has its shape: {key} = (the layer's input)^T (the gradient at its output)")
        if len(shape) == 1 and received is not None and received != shape and len(received) > 1 \
                and received[-1] == shape[0]:
            fail(f"{key} has shape {received}: it was not summed over the batch and the positions. One bias is added "
                 f"at every position of every example, so its gradient is the sum over all of them, shape {shape}")
        if len(shape) == 1 and received is not None and received != shape:
            fail(f"{key} has shape {received}, expected {shape}: a bias gradient sums over the batch and the "
                 f"positions (every axis but the last)")
    got = {"dx": as_array("dx", g["dx"], shape=p.x.shape, kind="f", dtype=p.x.dtype)}
    for key, letters in GRAD_SHAPES.items():
        got[key] = as_array(key, g[key], shape=tuple(size[c] for c in letters), kind="f", dtype=p.x.dtype)
    e = minitf_backward(p, dy)
    q = p.params
    a = p.x @ q["W_1"] + q["b_1"]  # (..., F)
    dh = dy @ q["W_2"].T  # (..., F)
    # the second linear layer
    if not close(got["dW_2"], e["dW_2"], **tol):
        if close(got["dW_2"], a.reshape(-1, F).T @ dy.reshape(-1, D), **tol):
            fail("dW_2 used the pre-activation a: the second layer reads h = act(a), so dW_2 = h^T dy")
        expect_close("dW_2", got["dW_2"], e["dW_2"], **tol, hint="dW_2 = h^T dy, h = act(x W_1 + b_1)")
    expect_close("db_2", got["db_2"], e["db_2"], **tol, hint="db_2 = dy summed over the batch and the positions")
    # the activation, through dx, dW_1 and db_1
    if not (close(got["dx"], e["dx"], **tol) and close(got["db_1"], e["db_1"], **tol)):
        for key, prime in derivative_variants(p.activation, a, dh).items():
            da = dh * prime
            if close(got["dx"], da @ q["W_1"].T, **tol) and close(got["db_1"], da.reshape(-1, F).sum(0), **tol):
                fail(f"{p.activation}: {DERIVATIVE_MESSAGES[key]}")
    hint = "da = (dy @ W_2^T) * act'(a), a = x @ W_1 + b_1"
    expect_close("dx", got["dx"], e["dx"], **tol, hint=f"dx = da @ W_1^T, {hint}")
    if not close(got["dW_1"], e["dW_1"], **tol) and D == F and close(got["dW_1"], e["dW_1"].T, **tol):
        fail("dW_1 is transposed: dW_1 = x^T da, shaped (D, F) like W_1")
    expect_close("dW_1", got["dW_1"], e["dW_1"], **tol, hint=f"dW_1 = x^T da summed over every position, {hint}")
    expect_close("db_1", got["db_1"], e["db_1"], **tol, hint="db_1 = da summed over the batch and the positions")


@task3
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feedforward_forward(submission, homework_seed, activation):
    feedforward_forward = submission.function("feedforward_forward")
    (B, T, D, F), = shapes(homework_seed, [(3, 4, 6, 10)], B=(1, 4), T=(1, 6), D=(1, 8), F=(1, 12))
    p = make_problem(homework_seed + 300 + (activation == "gelu"), activation, shape=(B, T, D), F=F)
    y = call(feedforward_forward, *p.args(), names=ARGS, why=READ_ONLY)
    check_forward(y, p)


@task3
def test_feedforward_forward_float32(submission, homework_seed):
    feedforward_forward = submission.function("feedforward_forward")
    for k, activation in enumerate(("relu", "gelu")):
        p = make_problem(homework_seed + 310 + k, activation, shape=(2, 5, 8), F=12, dtype=np.float32)
        y = call(feedforward_forward, *p.args(), names=ARGS, why=READ_ONLY)
        check_forward(y, p)


@task3
def test_feedforward_backward_relu(submission, homework_seed):
    """float64, some pre-activations exactly 0 (a zero input vector, zero biases)."""
    feedforward_backward = submission.function("feedforward_backward")
    p = make_problem(homework_seed + 320, "relu", zeros=True)
    dy = upstream(p.x.shape, homework_seed + 321)
    check_backward(call(feedforward_backward, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY), p, dy)


@task3
def test_feedforward_backward_gelu(submission, homework_seed):
    feedforward_backward = submission.function("feedforward_backward")
    (B, T, D, F), = shapes(homework_seed, [(3, 4, 6, 10)], B=(1, 4), T=(1, 6), D=(1, 8), F=(1, 12))
    p = make_problem(homework_seed + 330, "gelu", shape=(B, T, D), F=F)
    dy = upstream(p.x.shape, homework_seed + 331)
    check_backward(call(feedforward_backward, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY), p, dy)


@task3
def test_feedforward_backward_two_dims(submission, homework_seed):
    """x (N, D): the same network on a 2-d input, both activations."""
    feedforward_backward = submission.function("feedforward_backward")
    for k, activation in enumerate(("relu", "gelu")):
        p = make_problem(homework_seed + 340 + k, activation, shape=(7, 5), F=9)
        dy = upstream(p.x.shape, homework_seed + 345 + k)
        check_backward(call(feedforward_backward, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY), p, dy)


@task3
def test_feedforward_backward_float32(submission, homework_seed):
    """float32 in, float32 out, ReLU and GELU: every gradient in x's dtype (the template)."""
    feedforward_backward = submission.function("feedforward_backward")
    for k, activation in enumerate(("relu", "gelu")):
        p = make_problem(homework_seed + 340 + k, activation, shape=(2, 3, 5), F=7, dtype=np.float32)
        dy = upstream(p.x.shape, homework_seed + 345 + k, np.float32)
        check_backward(call(feedforward_backward, dy, *p.args(), names=BACKWARD_ARGS, why=READ_ONLY), p, dy,
                       tol=dict(rtol=1e-3, atol=1e-4))
