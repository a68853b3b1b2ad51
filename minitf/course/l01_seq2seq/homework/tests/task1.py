"""Homework 1, task 1.1 (one LSTM step, forward and backward): the public tests.

minitf's answer is ``minitf.rnn.LSTMCell`` holding the problem's weights.  The classic
mistakes are recognised by computing what each one gives (:func:`lstm_variant`): another
gate order, the forget gate left out of dc_{t-1}, the path from dh to dc through
h = o * tanh(c) left out, the sigmoid's derivative taken as s.
"""
from __future__ import annotations

from itertools import permutations
from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.rnn.cells import LSTMCell, LSTMState, sigmoid

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, gradient_dict, load, matches_variant, pair, rng_for,
                     uniform_params, wrong_keys)

HOMEWORK = "hw01"
task1 = pytest.mark.hw01_task1
FORWARD_ARGS = ["x", "h_prev", "c_prev", "params"]
BACKWARD_ARGS = ["dh", "dc"] + FORWARD_ARGS
RIGHT_ORDER = "ifgo"  # torch's order of the four gates along the 4Dr columns
GRAD_HINTS = {
    "dx": "dx = da W_ih^T, da (B, 4Dr) the gates' pre-activation gradients in the order i, f, g, o",
    "dh_prev": "dh_prev = da W_hh^T",
    "dc_prev": "dc_prev = (dc + dh * o * (1 - tanh(c)^2)) * f",
    "dW_ih": "dW_ih = x^T da (D, 4Dr)", "dW_hh": "dW_hh = h_prev^T da (Dr, 4Dr)",
    "db_ih": "db_ih = da summed over the batch", "db_hh": "db_hh = da summed over the batch (the same as db_ih)",
}


class Problem(NamedTuple):
    x: np.ndarray  # (B, D)
    h_prev: np.ndarray  # (B, Dr)
    c_prev: np.ndarray  # (B, Dr)
    params: dict  # W_ih (D, 4Dr), W_hh (Dr, 4Dr), b_ih, b_hh (4Dr,)

    @property
    def dims(self) -> tuple:
        """(B, D, Dr)"""
        return self.x.shape + (self.h_prev.shape[1],)

    def args(self) -> tuple:
        return self.x, self.h_prev, self.c_prev, self.params


def make_problem(seed: int, *, B=3, D=4, Dr=5, dtype=np.float64) -> Problem:
    """Weights U(-0.6, 0.6) (gates away from saturation, where every mistake shows), a cell state of a few units."""
    rng = rng_for(seed)
    params = uniform_params(rng, {"W_ih": (D, 4 * Dr), "W_hh": (Dr, 4 * Dr), "b_ih": (4 * Dr,), "b_hh": (4 * Dr,)}, 0.6,
                            dtype)
    x = rng.normal(size=(B, D)).astype(dtype)
    h_prev = rng.uniform(-0.9, 0.9, size=(B, Dr)).astype(dtype)
    c_prev = rng.normal(0.0, 1.5, size=(B, Dr)).astype(dtype)
    return Problem(x, h_prev, c_prev, params)


def upstream(problem: Problem, seed: int) -> tuple:
    """(dh, dc), random (B, Dr) each."""
    rng = rng_for(seed)
    return rng.normal(size=problem.h_prev.shape), rng.normal(size=problem.c_prev.shape)


# ---- minitf's answers ----------------------------------------------------------------------------------------
def minitf_cell(problem: Problem) -> LSTMCell:
    B, D, Dr = problem.dims
    cell = LSTMCell(D, Dr, rng=np.random.default_rng(0), dtype=problem.x.dtype)
    load(cell, problem.params)
    return cell


def minitf_forward(problem: Problem) -> tuple:
    """(h, c) of minitf's LSTMCell."""
    state, _ = minitf_cell(problem).forward(problem.x, LSTMState(problem.h_prev, problem.c_prev))
    return state.h, state.c


def minitf_backward(problem: Problem, dh, dc) -> dict:
    """minitf's gradients, named as the template's dict."""
    cell = minitf_cell(problem)
    _, cache = cell.forward(problem.x, LSTMState(problem.h_prev, problem.c_prev))
    cell.zero_grad()
    dx, (dh_prev, dc_prev) = cell.backward(LSTMState(dh, dc), cache)
    out = {"dx": dx, "dh_prev": dh_prev, "dc_prev": dc_prev}
    out.update({"d" + name: cell.grads[name].copy() for name in ("W_ih", "W_hh", "b_ih", "b_hh")})
    return out


# ---- what the classic mistakes compute -----------------------------------------------------------------------
def lstm_variant(problem: Problem, dh=None, dc=None, *, order: str = RIGHT_ORDER, tanh_path: bool = True,
                 dc_prev: str = "whole * f", sigmoid_prime: str = "s(1-s)", biases: str = "both",
                 squash_c: bool = True):
    """The LSTM step with one thing changed: (h, c, grads or None).

    order: which gate each block of 4Dr columns holds ("ifgo" is right); tanh_path: dc gets
    dh * o * tanh'(c) (right) or not; dc_prev: "whole * f" (right), "whole" (the forget gate
    left out) or "incoming * f" (the dc that arrived, without the path through h);
    sigmoid_prime: "s(1-s)" (right) or "s"; biases: "both" (right), "ih" or "hh" alone;
    squash_c: h = o * tanh(c) (right) or o * c (forward only).
    """
    p = problem.params
    B, D, Dr = problem.dims
    x, h_prev, c_prev = problem.x, problem.h_prev, problem.c_prev
    a = x @ p["W_ih"] + h_prev @ p["W_hh"]  # (B, 4Dr)
    a = a + (p["b_ih"] if biases in ("both", "ih") else 0.0) + (p["b_hh"] if biases in ("both", "hh") else 0.0)
    cols = {gate: slice(k * Dr, (k + 1) * Dr) for k, gate in enumerate(order)}
    i, f, o = (sigmoid(a[:, cols[n]]) for n in "ifo")
    g = np.tanh(a[:, cols["g"]])
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    h = o * tanh_c if squash_c else o * c
    if dh is None:
        return h, c, None
    do = dh * tanh_c
    dc_whole = dc + dh * o * (1.0 - tanh_c ** 2) if tanh_path else dc
    dprev = {"whole * f": dc_whole * f, "whole": dc_whole, "incoming * f": dc * f}[dc_prev]
    di, df, dg = dc_whole * g, dc_whole * c_prev, dc_whole * i

    def sp(s):
        return s * (1.0 - s) if sigmoid_prime == "s(1-s)" else s

    parts = {"i": di * sp(i), "f": df * sp(f), "g": dg * (1.0 - g ** 2), "o": do * sp(o)}
    da = np.concatenate([parts[n] for n in order], axis=1)  # (B, 4Dr)
    grads = {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dprev,
             "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}
    return h, c, grads


def other_orders():
    return ["".join(o) for o in permutations("ifgo") if "".join(o) != RIGHT_ORDER]


def order_message(order: str) -> str:
    return (f"the gates were read in the order {', '.join(order)}: torch's order (minitf's, and the layout of "
            f"W_ih, W_hh, b_ih, b_hh) is i, f, g, o -- columns 0..Dr-1 the input gate i, Dr..2Dr-1 the forget gate f, "
            f"2Dr..3Dr-1 the candidate g (the tanh one), 3Dr..4Dr-1 the output gate o. Some papers and libraries "
            f"order them differently; the weights you are given follow torch")


# =====================================================================================
# Task 1.1 -- one LSTM step, forward and backward
# =====================================================================================
def check_forward(out, problem: Problem) -> None:
    """The student's (h, c) against minitf's, naming the mistake where it is recognised."""
    B, D, Dr = problem.dims
    dtype = problem.x.dtype
    tol = FORWARD_TOL[np.dtype(dtype)]
    h, c = pair(out, "lstm_step_forward", "(h, c)")
    h = as_array("h", h, shape=(B, Dr), kind="f", dtype=dtype)
    c = as_array("c", c, shape=(B, Dr), kind="f", dtype=dtype)
    h_e, c_e = minitf_forward(problem)
    if close(h, h_e, **tol) and close(c, c_e, **tol):
        return
    for order in other_orders():
        h_v, c_v, _ = lstm_variant(problem, order=order)
        if close(h, h_v, **tol) and close(c, c_v, **tol):
            fail(order_message(order))
    for biases in ("ih", "hh"):
        h_v, c_v, _ = lstm_variant(problem, biases=biases)
        if close(h, h_v, **tol) and close(c, c_v, **tol):
            fail(f"only b_{biases} was added: the pre-activations are a = x W_ih + b_ih + h_prev W_hh + b_hh, "
                 f"both biases (torch keeps two; their sum is all the LSTM sees)")
    h_v, _, _ = lstm_variant(problem, squash_c=False)
    if close(c, c_e, **tol) and close(h, h_v, **tol):
        fail("h = o * c: the output squashes the cell state first, h = o * tanh(c)")
    expect_close("c", c, c_e, **tol, hint="c = f * c_prev + i * g, with i, f, o = sigmoid and g = tanh of the "
                                          "pre-activations, gates in the order i, f, g, o")
    expect_close("h", h, h_e, **tol, hint="h = o * tanh(c)")


@task1
def test_lstm_step_forward(submission, homework_seed):
    """h and c of one step, in float64, on three shapes (D < Dr, D > Dr, a batch of one)."""
    lstm_step_forward = submission.function("lstm_step_forward")
    for k, (B, D, Dr) in enumerate(shapes(homework_seed, [(3, 4, 5), (2, 6, 3), (1, 3, 2)], B=(1, 5), D=(1, 6),
                                          Dr=(1, 6))):
        problem = make_problem(homework_seed + 10 + k, B=B, D=D, Dr=Dr)
        check_forward(call(lstm_step_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task1
def test_lstm_step_forward_keeps_float32(submission, homework_seed):
    lstm_step_forward = submission.function("lstm_step_forward")
    problem = make_problem(homework_seed + 20, B=2, D=3, Dr=4, dtype=np.float32)
    check_forward(call(lstm_step_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


def saturated_problem(seed: int, *, dtype=np.float64, top: float = 2000.0, **sizes) -> Problem:
    """A problem whose inputs are scaled up until the largest pre-activation x W_ih reaches ``top``:
    saturated gates (sigmoid exactly 0 or 1, tanh +-1), as a large input or a large weight gives."""
    p = make_problem(seed, **sizes)
    xW = p.x @ p.params["W_ih"]  # (B, 4Dr)
    x = p.x * (top / xW.max() if xW.max() > 0 else -top / xW.min())
    return Problem(x.astype(dtype), p.h_prev.astype(dtype), p.c_prev.astype(dtype),
                   {k: v.astype(dtype) for k, v in p.params.items()})


@task1
def test_lstm_step_forward_with_saturated_gates(submission, homework_seed):
    """Pre-activations in the thousands (float64) and hundreds (float32): every gate saturates, the
    sigmoid gives 0 or 1, and h and c stay finite."""
    lstm_step_forward = submission.function("lstm_step_forward")
    sizes = shapes(homework_seed, [(3, 4, 5)], B=(1, 5), D=(1, 6), Dr=(1, 6))[0]
    for k, (dtype, top) in enumerate(((np.float64, 2000.0), (np.float32, 300.0))):
        B, D, Dr = sizes
        problem = saturated_problem(homework_seed + 25 + k, dtype=dtype, top=top, B=B, D=D, Dr=Dr)
        out = call(lstm_step_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY)
        h, c = pair(out, "lstm_step_forward", "(h, c)")
        h = as_array("h", h, shape=(B, Dr), kind="f", dtype=dtype)
        c = as_array("c", c, shape=(B, Dr), kind="f", dtype=dtype)
        if not (np.isfinite(h).all() and np.isfinite(c).all()):
            a = np.abs(problem.x @ problem.params["W_ih"]).max()
            fail(f"h or c holds nan or inf in {np.dtype(dtype).name} with saturated gates (pre-activations up to "
                 f"{a:.0f}): exp(a) overflows to inf beyond 709 (88 in float32), and exp(a) / (1 + exp(a)) is then "
                 f"inf / inf = nan, where the sigmoid is simply 1. Write the sigmoid so that exp never overflows: "
                 f"0.5 * (1 + tanh(a / 2)), or 1 / (1 + exp(-a)) on a >= 0 and exp(a) / (1 + exp(a)) on a < 0")
        check_forward((h, c), problem)


def backward(fn, problem: Problem, seed: int):
    """The student's gradients (checked for keys, shapes, dtypes), minitf's, and (dh, dc)."""
    B, D, Dr = problem.dims
    dh, dc = upstream(problem, seed)
    out = call(fn, dh, dc, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"dx": (B, D), "dh_prev": (B, Dr), "dc_prev": (B, Dr), "dW_ih": (D, 4 * Dr), "dW_hh": (Dr, 4 * Dr),
              "db_ih": (4 * Dr,), "db_hh": (4 * Dr,)}
    return gradient_dict(out, "lstm_step_backward", shapes), minitf_backward(problem, dh, dc), (dh, dc)


def diagnose_backward(g: dict, e: dict, problem: Problem, dh, dc, keys) -> None:
    """Fail naming the classic mistake that ``g`` computes in ``keys``, if one is recognised."""
    wrong = [k for k in wrong_keys(g, e) if k in keys]
    if not wrong:
        return

    def variant(**kw):
        return lstm_variant(problem, dh, dc, **kw)[2]

    if wrong == ["dc_prev"]:
        if close(g["dc_prev"], variant(dc_prev="whole")["dc_prev"], **BACKWARD_TOL):
            fail("dc_prev misses the forget gate: forgetting the forget gate's contribution to dc_{t-1}. The forward "
                 "is c_t = f * c_{t-1} + i * g, so dc_{t-1} = dc_t * f -- you passed dc_t back as if f were 1. "
                 "The forget gate is the cell state's path back in time: where f is near 0 the past is cut off, "
                 "where it is near 1 the gradient flows on undiminished (Lesson 1, section 2)")
        if close(g["dc_prev"], variant(dc_prev="incoming * f")["dc_prev"], **BACKWARD_TOL):
            fail("dc_prev = dc * f used the dc that arrived, not the cell state's whole gradient: c_t also reaches "
                 "the loss through h_t = o * tanh(c_t), so first dc_t = dc + dh * o * (1 - tanh(c_t)^2), and "
                 "dc_{t-1} = dc_t * f (your other gradients already use the whole dc_t)")
    if matches_variant(g, variant(tanh_path=False), wrong):
        fail("the path from dh to dc is missing: c_t reaches the loss directly (dc) and through h_t = o * tanh(c_t), "
             "so the cell state's gradient is dc + dh * o * (1 - tanh(c_t)^2) -- tanh'(c_t) = 1 - tanh(c_t)^2 -- "
             "before it reaches the gates and c_{t-1}")
    if matches_variant(g, variant(sigmoid_prime="s"), wrong):
        fail("the sigmoid's derivative was taken as s instead of s * (1 - s): for s = sigmoid(a), "
             "ds/da = s * (1 - s) (for the gates i, f and o; g is a tanh: 1 - g^2)")
    for order in other_orders():
        if matches_variant(g, variant(order=order), wrong):
            fail(order_message(order))
    if wrong == ["dc_prev"] and close(g["dc_prev"], variant(tanh_path=False, dc_prev="whole")["dc_prev"],
                                      **BACKWARD_TOL):
        fail("dc_prev = dc: forgetting the forget gate's contribution to dc_{t-1}, and the path through "
             "h_t = o * tanh(c_t): dc_{t-1} = (dc + dh * o * (1 - tanh(c_t)^2)) * f")
    if "db_hh" in wrong and "db_ih" not in wrong and np.abs(g["db_hh"]).max() == 0:
        fail("db_hh is zero: b_hh is added to the same pre-activations as b_ih, so each gets the whole gradient "
             "da summed over the batch (db_hh = db_ih)")


def check_backward(g: dict, e: dict, problem: Problem, dh, dc, keys) -> None:
    diagnose_backward(g, e, problem, dh, dc, keys)
    for k in keys:
        expect_close(k, g[k], e[k], **BACKWARD_TOL, hint=GRAD_HINTS[k])


@task1
def test_lstm_step_backward_input_gradients(submission, homework_seed):
    """dx, dh_prev and dc_prev, in float64 to 1e-11 (finite differences do not get there)."""
    lstm_step_backward = submission.function("lstm_step_backward")
    for k, (B, D, Dr) in enumerate(shapes(homework_seed, [(3, 4, 5), (2, 6, 3), (1, 3, 2)], B=(1, 5), D=(1, 6),
                                          Dr=(1, 6))):
        problem = make_problem(homework_seed + 30 + k, B=B, D=D, Dr=Dr)
        g, e, (dh, dc) = backward(lstm_step_backward, problem, homework_seed + 40 + k)
        check_backward(g, e, problem, dh, dc, ("dc_prev", "dh_prev", "dx"))


@task1
def test_lstm_step_backward_weight_gradients(submission, homework_seed):
    """dW_ih, dW_hh, db_ih and db_hh, gates in the order i, f, g, o."""
    lstm_step_backward = submission.function("lstm_step_backward")
    problem = make_problem(homework_seed + 50, B=4, D=3, Dr=4)
    g, e, (dh, dc) = backward(lstm_step_backward, problem, homework_seed + 51)
    check_backward(g, e, problem, dh, dc, ("dW_ih", "dW_hh", "db_ih", "db_hh"))


@task1
def test_lstm_step_backward_without_upstream_cell_gradient(submission, homework_seed):
    """dc = 0 (the last step of a sequence whose c is not read): the cell state still gets a gradient
    through h = o * tanh(c), and it still goes back through the forget gate."""
    lstm_step_backward = submission.function("lstm_step_backward")
    problem = make_problem(homework_seed + 60, B=3, D=2, Dr=3)
    B, D, Dr = problem.dims
    dh = rng_for(homework_seed + 61).normal(size=(B, Dr))
    dc = np.zeros((B, Dr))
    out = call(lstm_step_backward, dh, dc, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"dx": (B, D), "dh_prev": (B, Dr), "dc_prev": (B, Dr), "dW_ih": (D, 4 * Dr), "dW_hh": (Dr, 4 * Dr),
              "db_ih": (4 * Dr,), "db_hh": (4 * Dr,)}
    g = gradient_dict(out, "lstm_step_backward", shapes)
    e = minitf_backward(problem, dh, dc)
    if np.abs(g["dc_prev"]).max() == 0:
        fail("with dc = 0 your dc_prev is zero: the path from dh to dc is missing. c_t reaches the loss through "
             "h_t = o * tanh(c_t) too, so dc_{t-1} = dh * o * (1 - tanh(c_t)^2) * f here")
    check_backward(g, e, problem, dh, dc, tuple(shapes))
