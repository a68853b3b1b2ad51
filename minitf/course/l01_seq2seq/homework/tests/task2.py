"""Homework 1, task 1.2 (a tanh RNN over a padded batch, and BPTT): the public tests.

minitf's answer is ``minitf.rnn.Recurrent("rnn", ...)`` (one layer, one direction) holding
the problem's weights, run with the problem's ``lengths`` and initial state.  The classic
mistakes are recognised by computing what each one gives (:func:`rnn_variant`): the state
updated on padded steps, outputs left at padded steps, the final state read at step T-1,
gradient entering the cell at padded steps, the weights' gradient of one step only.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.rnn import Recurrent, RecurrentOutput

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, gradient_dict, load, matches_variant, pair, rng_for,
                     uniform_params, wrong_keys)

HOMEWORK = "hw01"
task2 = pytest.mark.hw01_task2
FORWARD_ARGS = ["x", "lengths", "h0", "params"]
BACKWARD_ARGS = ["doutputs", "dh_final"] + FORWARD_ARGS
GRAD_HINTS = {
    "dx": "dx_t = da_t W_ih^T, da_t = dh_t * (1 - h_t^2) at real steps, 0 at padded ones",
    "dh0": "dh0: the state's gradient after the walk back to step 0 (passed unchanged through padded steps)",
    "dW_ih": "dW_ih = sum over t of x_t^T da_t", "dW_hh": "dW_hh = sum over t of h_{t-1}^T da_t",
    "db_ih": "db_ih = sum over t and the batch of da_t", "db_hh": "db_hh = sum over t and the batch of da_t",
}


class Problem(NamedTuple):
    x: np.ndarray  # (B, T, D), arbitrary (nonzero) at padded steps
    lengths: np.ndarray  # (B,) ints in [1, T]
    h0: np.ndarray  # (B, Dr)
    params: dict  # W_ih (D, Dr), W_hh (Dr, Dr), b_ih, b_hh (Dr,)

    @property
    def dims(self) -> tuple:
        """(B, T, D, Dr)"""
        return self.x.shape + (self.h0.shape[1],)

    @property
    def padded(self) -> np.ndarray:
        """(B, T) True at padded steps."""
        return np.arange(self.x.shape[1])[None, :] >= self.lengths[:, None]

    def args(self) -> tuple:
        return self.x, self.lengths, self.h0, self.params

    def describe(self) -> str:
        B, T, D, Dr = self.dims
        return f"B={B}, T={T}, D={D}, Dr={Dr}, lengths {self.lengths.tolist()}"


def make_problem(seed: int, *, B=4, T=6, D=3, Dr=5, lengths=None, dtype=np.float64) -> Problem:
    """Weights U(-0.5, 0.5), a nonzero initial state; ``lengths`` defaults to one full row, one of
    length 1 and the rest random, so that padding is always there."""
    rng = rng_for(seed)
    params = uniform_params(rng, {"W_ih": (D, Dr), "W_hh": (Dr, Dr), "b_ih": (Dr,), "b_hh": (Dr,)}, 0.5, dtype)
    x = rng.normal(size=(B, T, D)).astype(dtype)
    h0 = rng.uniform(-0.5, 0.5, size=(B, Dr)).astype(dtype)
    if lengths is None:
        lengths = [T, 1] + list(rng.integers(1, max(T, 2), size=max(B - 2, 0)))  # B = 1: the full row alone
    return Problem(x, np.asarray(lengths[:B], dtype=np.int64), h0, params)


def upstream(problem: Problem, seed: int) -> tuple:
    """(doutputs (B, T, Dr), dh_final (B, Dr)), random everywhere -- padded steps included."""
    B, T, D, Dr = problem.dims
    rng = rng_for(seed)
    return rng.normal(size=(B, T, Dr)), rng.normal(size=(B, Dr))


# ---- minitf's answers ----------------------------------------------------------------------------------------
def minitf_layer(problem: Problem) -> Recurrent:
    B, T, D, Dr = problem.dims
    layer = Recurrent("rnn", D, Dr, rng=np.random.default_rng(0), dtype=problem.x.dtype)
    load(layer.forward_cells[0], problem.params)
    return layer


def minitf_forward(problem: Problem) -> tuple:
    """(outputs (B, T, Dr), h_final (B, Dr)) of minitf's Recurrent layer."""
    (outputs, final), _ = minitf_layer(problem).forward(problem.x, problem.lengths, problem.h0[None])
    return outputs, final[0]


def minitf_backward(problem: Problem, doutputs, dh_final) -> dict:
    layer = minitf_layer(problem)
    _, cache = layer.forward(problem.x, problem.lengths, problem.h0[None])
    layer.zero_grad()
    dx, dinitial = layer.backward(RecurrentOutput(doutputs, dh_final[None]), cache)
    grads = layer.forward_cells[0].grads
    out = {"dx": dx, "dh0": dinitial[0]}
    out.update({"d" + name: grads[name].copy() for name in ("W_ih", "W_hh", "b_ih", "b_hh")})
    return out


# ---- what the classic mistakes compute -----------------------------------------------------------------------
def rnn_variant(problem: Problem, doutputs=None, dh_final=None, *, hold: bool = True, zero_outputs: bool = True,
                final: str = "state", mask_backward: bool = True, accumulate: str = "sum",
                pass_through: bool = True):
    """The layer with one thing changed: (outputs, h_final, grads or None).

    hold: a padded step keeps the state (right) or the cell updates it; zero_outputs: 0 at
    padded steps (right) or h_t; final: "state" (right) or "output T-1" (outputs[:, -1]);
    mask_backward: no gradient enters the cell at a padded step (right) or it does, as if
    the step were real; accumulate: the weights' gradients summed over the steps ("sum",
    right), or only one step's ("first" = t = 0, the last one the walk back visits; "last"
    = t = T-1); pass_through: at a padded step the state's gradient passes on unchanged
    (right) or is dropped.
    """
    p = problem.params
    B, T, D, Dr = problem.dims
    x = problem.x
    live = ~problem.padded.T[:, :, None]  # (T, B, 1)
    states, new = [problem.h0], []
    for t in range(T):
        h_t = np.tanh(x[:, t] @ p["W_ih"] + p["b_ih"] + states[-1] @ p["W_hh"] + p["b_hh"])
        new.append(h_t)
        states.append(np.where(live[t], h_t, states[-1]) if hold else h_t)
    new = np.stack(new)  # (T, B, Dr)
    outputs = (new * live if zero_outputs else new).transpose(1, 0, 2)
    h_final = states[-1] if final == "state" else outputs[:, -1]
    if doutputs is None:
        return outputs, h_final, None
    dh = dh_final
    da = np.zeros_like(new)
    gate = live if mask_backward else np.ones_like(live)
    for t in reversed(range(T)):
        dnew = (dh + doutputs[:, t]) * gate[t]
        da[t] = dnew * (1.0 - new[t] ** 2)
        back = da[t] @ p["W_hh"].T
        dh = np.where(gate[t], back, dh if pass_through else 0.0)
    h_prev = np.stack(states[:-1])  # (T, B, Dr)
    steps = {"sum": slice(None), "first": slice(0, 1), "last": slice(T - 1, T)}[accumulate]
    da_s, x_s, h_s = da[steps], x.transpose(1, 0, 2)[steps], h_prev[steps]
    grads = {"dx": (da @ p["W_ih"].T).transpose(1, 0, 2), "dh0": dh,
             "dW_ih": np.einsum("tbd,tbh->dh", x_s, da_s), "dW_hh": np.einsum("tbi,tbh->ih", h_s, da_s),
             "db_ih": da_s.sum(axis=(0, 1)), "db_hh": da_s.sum(axis=(0, 1))}
    return outputs, h_final, grads


# =====================================================================================
# Task 1.2 -- a recurrent layer over a padded batch, and BPTT
# =====================================================================================
def check_forward(out, problem: Problem) -> None:
    """The student's (outputs, h_final) against minitf's, naming the mistake where it is recognised."""
    B, T, D, Dr = problem.dims
    dtype = problem.x.dtype
    tol = FORWARD_TOL[np.dtype(dtype)]
    outputs, h_final = pair(out, "rnn_forward", "(outputs, h_final)")
    outputs = as_array("outputs", outputs, shape=(B, T, Dr), kind="f", dtype=dtype)
    h_final = as_array("h_final", h_final, shape=(B, Dr), kind="f", dtype=dtype)
    out_e, fin_e = minitf_forward(problem)
    on_padding = np.abs(outputs) * problem.padded[:, :, None]  # (B, T, Dr)
    if on_padding.max() > tol["atol"]:
        b, t, _ = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
        fail(f"outputs are not zero at padded steps (row {b} has {problem.lengths[b]} real steps, yet its output at "
             f"step {t} reaches {on_padding.max():.3g}): a padded step outputs zero -- whatever the cell would "
             f"compute there is not part of the row. ({problem.describe()})")
    if not close(h_final, fin_e, **tol):
        short = problem.lengths < T
        for zero_outputs in (True, False):
            _, fin_v, _ = rnn_variant(problem, hold=False, zero_outputs=zero_outputs)
            if close(h_final, fin_v, **tol):
                fail(f"h_final is wrong for the rows shorter than T (lengths {problem.lengths.tolist()}, T = {T}): "
                     f"the state was updated on padded steps -- carried through the padding by the cell, as if "
                     f"the padding were input. At a padded step a row keeps its state, h_t = h_{{t-1}}, so its "
                     f"final state is the one after its own last real step (np.where(t < lengths, new, old))")
        if short.any() and close(h_final, out_e[:, -1], **tol):
            fail("h_final was taken at step T-1 (outputs[:, -1], which is 0 for a row with padding): the final state "
                 "is each row's state after its own last real step, lengths[b] - 1, not at T-1")
        if short.any() and (~short).any() and close(h_final[~short], fin_e[~short], **tol):
            fail(f"h_final is right for the full rows but not for the rows with padding (lengths "
                 f"{problem.lengths.tolist()}, T = {T}): a padded step must leave the state unchanged")
    expect_close("h_final", h_final, fin_e, **tol, hint=f"h_t = tanh(x_t W_ih + b_ih + h_{{t-1}} W_hh + b_hh) at "
                                                         f"real steps, kept at padded ones ({problem.describe()})")
    if not close(outputs, out_e, **tol):
        out_v, _, _ = rnn_variant(problem, hold=False)
        if close(outputs, out_v, **tol):
            fail("the state was updated on padded steps: the outputs are zero there as they should be, but the "
                 "state you carried on is not each row's last real state")
    expect_close("outputs", outputs, out_e, **tol, hint=f"outputs[:, t] = h_t at real steps, 0 at padded ones "
                                                         f"({problem.describe()})")


@task2
def test_rnn_forward_over_padding(submission, homework_seed):
    """outputs and h_final in float64, for two batches of rows of different lengths (some of length 1)."""
    rnn_forward = submission.function("rnn_forward")
    for k, (B, T, D, Dr) in enumerate(shapes(homework_seed, [(4, 6, 3, 5), (3, 5, 4, 2), (1, 4, 2, 3)], B=(1, 5),
                                             T=(1, 7), D=(1, 5),
                                            Dr=(1, 6))):
        problem = make_problem(homework_seed + 100 + k, B=B, T=T, D=D, Dr=Dr)
        check_forward(call(rnn_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task2
def test_rnn_forward_without_padding_keeps_float32(submission, homework_seed):
    """Every row of length T (nothing to mask), in float32: the plain recurrence."""
    rnn_forward = submission.function("rnn_forward")
    problem = make_problem(homework_seed + 110, B=2, T=4, D=3, Dr=3, lengths=[4, 4], dtype=np.float32)
    check_forward(call(rnn_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


def backward(fn, problem: Problem, seed: int):
    """The student's gradients (keys, shapes, dtypes checked), minitf's, and the upstream gradients."""
    B, T, D, Dr = problem.dims
    doutputs, dh_final = upstream(problem, seed)
    out = call(fn, doutputs, dh_final, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"dx": (B, T, D), "dh0": (B, Dr), "dW_ih": (D, Dr), "dW_hh": (Dr, Dr), "db_ih": (Dr,), "db_hh": (Dr,)}
    return gradient_dict(out, "rnn_backward", shapes), minitf_backward(problem, doutputs, dh_final), \
        (doutputs, dh_final)


def diagnose_backward(g: dict, e: dict, problem: Problem, doutputs, dh_final, keys) -> None:
    """Fail naming the classic mistake that ``g`` computes in ``keys``, if one is recognised."""
    wrong = [k for k in wrong_keys(g, e) if k in keys]
    if not wrong:
        return
    on_padding = np.abs(g["dx"]) * problem.padded[:, :, None]  # (B, T, D)
    if "dx" in keys and on_padding.max() > BACKWARD_TOL["atol"]:
        b, t, _ = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
        fail(f"gradient flowed into padded steps: dx at row {b}, step {t} reaches {on_padding.max():.3g}, but row "
             f"{b} has {problem.lengths[b]} real steps. A padded step's output is the constant 0 and its state a copy "
             f"of the previous one: nothing it computed reached the loss, so no gradient enters the cell there -- "
             f"not from doutputs (ignore what arrives at padded outputs), not from the state -- and nothing reaches "
             f"x_t or the weights. Mask with t < lengths in the backward as in the forward")

    def variant(**kw):
        return rnn_variant(problem, doutputs, dh_final, **kw)[2]

    if matches_variant(g, variant(mask_backward=False), wrong):
        fail("gradient flowed into padded steps: your backward runs the cell's backward at padded steps as if they "
             "were real. A padded step computed nothing that reached the loss: no gradient enters its cell, and the "
             "state's gradient passes through it unchanged")
    for how, which in (("first", "step 0's"), ("last", "step T-1's")):
        if matches_variant(g, variant(accumulate=how), [k for k in wrong if k.startswith(("dW", "db"))]):
            fail(f"the weights' gradients hold {which} contribution only: dW was overwritten in the loop instead of "
                 f"accumulated. W_ih, W_hh and the biases are shared by every step, so their gradients are sums "
                 f"over t: dW_hh = sum_t h_{{t-1}}^T da_t (+=, not =)")
    if matches_variant(g, variant(pass_through=False), wrong):
        fail("at a padded step the state's gradient was dropped: the forward copied the state there "
             "(h_t = h_{t-1}), so dL/dh_{t-1} = dL/dh_t passes through unchanged until it reaches the row's last "
             "real step -- that is how dh_final reaches a short row")


def check_backward(g: dict, e: dict, problem: Problem, doutputs, dh_final, keys) -> None:
    diagnose_backward(g, e, problem, doutputs, dh_final, keys)
    for k in keys:
        expect_close(k, g[k], e[k], **BACKWARD_TOL, hint=f"{GRAD_HINTS[k]} ({problem.describe()})")


@task2
def test_rnn_backward_input_gradients(submission, homework_seed):
    """dx (0 at padded steps) and dh0, in float64 to 1e-11, on two padded batches."""
    rnn_backward = submission.function("rnn_backward")
    for k, (B, T, D, Dr) in enumerate(shapes(homework_seed, [(4, 6, 3, 5), (3, 5, 4, 2), (1, 4, 2, 3)], B=(1, 5),
                                             T=(1, 7), D=(1, 5),
                                            Dr=(1, 6))):
        problem = make_problem(homework_seed + 120 + k, B=B, T=T, D=D, Dr=Dr)
        g, e, (do, dfin) = backward(rnn_backward, problem, homework_seed + 130 + k)
        check_backward(g, e, problem, do, dfin, ("dx", "dh0"))


@task2
def test_rnn_backward_weight_gradients_sum_over_steps(submission, homework_seed):
    """dW_ih, dW_hh, db_ih and db_hh: sums over every real step."""
    rnn_backward = submission.function("rnn_backward")
    problem = make_problem(homework_seed + 140, B=4, T=5, D=3, Dr=4)
    g, e, (do, dfin) = backward(rnn_backward, problem, homework_seed + 141)
    check_backward(g, e, problem, do, dfin, ("dW_ih", "dW_hh", "db_ih", "db_hh"))


@task2
def test_rnn_backward_final_state_reaches_short_rows(submission, homework_seed):
    """doutputs = 0: the only gradient is dh_final's, which must reach each row's last real step
    through the padding, and go on back to h0."""
    rnn_backward = submission.function("rnn_backward")
    problem = make_problem(homework_seed + 150, B=3, T=5, D=2, Dr=3, lengths=[5, 2, 1])
    B, T, D, Dr = problem.dims
    doutputs, dh_final = np.zeros((B, T, Dr)), rng_for(homework_seed + 151).normal(size=(B, Dr))
    out = call(rnn_backward, doutputs, dh_final, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"dx": (B, T, D), "dh0": (B, Dr), "dW_ih": (D, Dr), "dW_hh": (Dr, Dr), "db_ih": (Dr,), "db_hh": (Dr,)}
    g = gradient_dict(out, "rnn_backward", shapes)
    e = minitf_backward(problem, doutputs, dh_final)
    for b in (1, 2):
        t = problem.lengths[b] - 1
        if np.abs(g["dx"][b, t]).max() == 0:
            fail(f"dh_final did not reach row {b}'s last real step (step {t} of T = {T}): the state's gradient must "
                 f"pass unchanged through the padded steps, which copied the state, down to step lengths[b] - 1")
    check_backward(g, e, problem, doutputs, dh_final, tuple(shapes))
