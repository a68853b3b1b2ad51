"""Homework 4, task 4.3 (the backward of cross-attention): the public tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.attention import merge_heads, scaled_dot_product_attention_backward, split_heads
from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes

from .common import (BACKWARD_TOL, GRAD_NAMES, LARGE_SCORES_BACKWARD_TOL, Problem, READ_ONLY, make_problem,
                     minitf_backward, minitf_forward, overflow_message, upstream, with_large_scores)

HOMEWORK = "hw04"
task3 = pytest.mark.hw04_task3
TOL = BACKWARD_TOL
BACKWARD_ARGS = ["dY", "X_q", "X_kv", "params", "H", "src_mask"]
WEIGHT_FORMULAS = {
    "dW_q": "X_q^T dQ", "dW_k": "X_kv^T dK", "dW_v": "X_kv^T dV", "dW_o": "O^T dY",
    "db_q": "dQ summed over B and T", "db_k": "dK summed over B and S", "db_v": "dV summed over B and S",
    "db_o": "dY summed over B and T",
}


# =====================================================================================
# Task 4.3 -- the gradient through cross-attention
# =====================================================================================
def backward(fn, problem: Problem, seed: int):
    """The student's gradients, minitf's, and dY."""
    dY = upstream(problem, seed)
    out = call(fn, dY, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    if not isinstance(out, dict):
        fail(f"cross_attention_backward: expected a dict {{'dX_q': ..., 'dX_kv': ..., 'dW_q': ..., ...}}, "
             f"received {type(out).__name__}")
    missing = [k for k in ("dX_q", "dX_kv") + GRAD_NAMES if k not in out]
    if missing:
        fail(f"cross_attention_backward: the dict lacks {missing}; expected the keys dX_q, dX_kv, "
             f"{', '.join(GRAD_NAMES)}")
    return out, minitf_backward(problem, dY), dY


def through_keys_and_values(problem: Problem, dY: np.ndarray) -> tuple:
    """dX_kv's two terms, (through K, through V): what a gradient missing one of them equals."""
    _, _, _, cache = minitf_forward(problem)
    p, H = problem.params, problem.H
    dheads = split_heads(dY @ p["W_o"].T, H)  # (B, H, T, Dh)
    _, dK, dV, _, _ = scaled_dot_product_attention_backward(dheads, cache.attn)
    return merge_heads(dK) @ p["W_k"].T, merge_heads(dV) @ p["W_v"].T  # (B, S, D) each


def input_gradients(g: dict, problem: Problem) -> tuple:
    """(dX_q (B, T, D), dX_kv (B, S, D)) of the student's dict, their shapes and dtypes checked."""
    B, T, S, D, Dh = problem.dims
    dX_q, dX_kv = g["dX_q"], g["dX_kv"]
    if T != S and getattr(dX_q, "shape", None) == (B, S, D) and getattr(dX_kv, "shape", None) == (B, T, D):
        fail(f"dX_q and dX_kv are swapped: dX_q is the queries' input gradient, shaped like the decoder stream "
             f"(B, T, D) = {(B, T, D)}; dX_kv the encoder output's, (B, S, D) = {(B, S, D)}")
    dX_q = as_array("dX_q", dX_q, shape=(B, T, D), kind="f", dtype=np.float64)
    dX_kv = as_array("dX_kv", dX_kv, shape=(B, S, D), kind="f", dtype=np.float64)
    return dX_q, dX_kv


def check_input_gradients(g: dict, e: dict, problem: Problem, dY: np.ndarray) -> None:
    B, T, S, D, Dh = problem.dims
    dX_q, dX_kv = input_gradients(g, problem)
    right = close(dX_q, e["dX_q"], **TOL) and close(dX_kv, e["dX_kv"], **TOL)
    if T == S and not right:
        total = e["dX_q"] + e["dX_kv"]
        if close(dX_q, total, **TOL) or close(dX_kv, total, **TOL):
            fail("dX_q and dX_kv were added together, as self-attention does (there one input feeds Q, K and V). In "
                 "cross-attention they are gradients of two different tensors: dX_q goes down the decoder, dX_kv "
                 "into H_enc; return them apart")
        if close(dX_q, e["dX_kv"], **TOL) and close(dX_kv, e["dX_q"], **TOL):
            fail("dX_q and dX_kv are swapped: dX_q = merge(dQ) W_q^T (the decoder's), "
                 "dX_kv = merge(dK) W_k^T + merge(dV) W_v^T (the encoder's)")
    on_padding = np.abs(dX_kv) * problem.padded[:, :, None]  # (B, S, D)
    if on_padding.max() > TOL["atol"]:
        b, s, _ = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
        fail(f"dX_kv reaches padded source positions (up to {on_padding.max():.3g}, at example {b}, source position "
             f"{s}): they got exactly zero weight in the forward, so no gradient flows back to them, neither through "
             f"the scores nor through the values. Recompute the forward's A with the padding mask")
    k_part, v_part = through_keys_and_values(problem, dY)
    if not close(dX_kv, e["dX_kv"], **TOL):
        if close(dX_kv, k_part, **TOL):
            fail("dX_kv is only the gradient through the keys: the values are computed from X_kv too, so "
                 "dX_kv = merge(dK) W_k^T + merge(dV) W_v^T (the dV path is missing)")
        if close(dX_kv, v_part, **TOL):
            fail("dX_kv is only the gradient through the values: the keys are computed from X_kv too, so "
                 "dX_kv = merge(dK) W_k^T + merge(dV) W_v^T (the dK path, through the scores, is missing)")
        if close(dX_kv, k_part * math.sqrt(Dh) + v_part, **TOL):
            fail("the gradient through the scores misses the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh)): "
                 "dK is sqrt(Dh) times too large")
        expect_close("dX_kv", dX_kv, e["dX_kv"], **TOL,
                     hint="dX_kv = merge(dK) W_k^T + merge(dV) W_v^T, with dK, dV from the attention's backward")
    if not close(dX_q, e["dX_q"], **TOL) and close(dX_q, e["dX_q"] * math.sqrt(Dh), **TOL):
        fail("dX_q misses the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh)): dQ is sqrt(Dh) times too large")
    expect_close("dX_q", dX_q, e["dX_q"], **TOL, hint="dX_q = merge(dQ) W_q^T, dQ = dscores K / sqrt(Dh)")


@task3
def test_input_gradients(submission, homework_seed):
    """dX_q (B, T, D) and dX_kv (B, S, D), for a shorter and a longer target than the source."""
    cross_attention_backward = submission.function("cross_attention_backward")
    sizes = shapes(homework_seed, [(3, 3, 6, 2, 4), (3, 5, 4, 4, 2), (1, 2, 5, 2, 3)], B=(1, 4), T=(1, 7), S=(1, 8),
                   H=(1, 4), Dh=(1, 4), rule=lambda B, T, S, H, Dh: T != S)  # a batch of one too
    for k, (B, T, S, H, Dh) in enumerate(sizes):
        problem = make_problem(homework_seed + 100 + k, B=B, T=T, S=S, D=H * Dh, H=H)
        g, e, dY = backward(cross_attention_backward, problem, homework_seed + 110 + k)
        check_input_gradients(g, e, problem, dY)


@task3
def test_input_gradients_when_T_equals_S(submission, homework_seed):
    """T = S: the two gradients have the same shape, and must still not be added or swapped."""
    cross_attention_backward = submission.function("cross_attention_backward")
    problem = make_problem(homework_seed + 120, B=3, T=5, S=5, D=8, H=2, lengths=[5, 3, 4])
    g, e, dY = backward(cross_attention_backward, problem, homework_seed + 121)
    check_input_gradients(g, e, problem, dY)


def check_weight_gradients(g: dict, e: dict, problem: Problem) -> None:
    B, T, S, D, Dh = problem.dims
    got = {name: as_array(name, g[name], shape=(D, D) if name.startswith("dW") else (D,), kind="f",
                          dtype=np.float64) for name in GRAD_NAMES}
    if not close(got["dW_k"], e["dW_k"], **TOL) and close(got["dW_k"], e["dW_v"], **TOL) \
            and close(got["dW_v"], e["dW_k"], **TOL):
        fail("dW_k and dW_v are swapped: dW_k = X_kv^T dK (through the scores), dW_v = X_kv^T dV (through A V)")
    for name in GRAD_NAMES:
        if close(got[name], e[name], **TOL):
            continue
        weight = name[1:]
        if name.startswith("dW") and close(got[name], e[name].T, **TOL):
            fail(f"{name} is transposed: with {weight} stored (D_in, D_out) for x @ {weight}, "
                 f"{name} = {WEIGHT_FORMULAS[name]} summed over every row, shaped (D_in, D_out) like {weight}")
        if close(got[name], e[name] * math.sqrt(Dh), **TOL) and name in ("dW_q", "dW_k", "db_q"):
            fail(f"{name} misses the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh))")
        hint = f"{name} = {WEIGHT_FORMULAS[name]}"
        if name == "db_k":
            hint += ("; its true value is 0: adding b_k to every key adds q . b_k to each of a query's scores, "
                     "which the softmax ignores (minitf's is rounding-level)")
        expect_close(name, got[name], e[name], **TOL, hint=hint)


@task3
def test_weight_gradients(submission, homework_seed):
    cross_attention_backward = submission.function("cross_attention_backward")
    problem = make_problem(homework_seed + 130, B=3, T=4, S=6, D=8, H=2)
    g, e, _ = backward(cross_attention_backward, problem, homework_seed + 131)
    check_weight_gradients(g, e, problem)


@task3
def test_padded_and_empty_sources_get_no_gradient(submission, homework_seed):
    """A padded position gets no gradient; an example without a real source token gets none anywhere."""
    cross_attention_backward = submission.function("cross_attention_backward")
    problem = make_problem(homework_seed + 140, B=3, T=4, S=5, D=8, H=2, lengths=[5, 0, 2])
    g, e, dY = backward(cross_attention_backward, problem, homework_seed + 141)
    dX_q, _ = input_gradients(g, problem)
    if np.abs(dX_q[1]).max() > TOL["atol"]:
        fail("example 1 has no real source token: its weights are all zero, its output is b_o whatever X_q, so its "
             f"dX_q must be zero; yours reaches {np.abs(dX_q[1]).max():.3g}")
    check_input_gradients(g, e, problem, dY)
    check_weight_gradients(g, e, problem)


@task3
def test_gradients_at_large_scores(submission, homework_seed):
    """A key bias that shifts every score of a query by up to ~1000 changes no gradient (the softmax ignores a shift
    of all its inputs; db_k stays 0), though exp overflows at such scores.  Compared to LARGE_SCORES_BACKWARD_TOL:
    with keys ~1e2 times larger, every exact formula rounds ~1e2 times more."""
    cross_attention_backward = submission.function("cross_attention_backward")
    (B, T, S, H, Dh), = shapes(homework_seed, [(3, 4, 6, 2, 4)], B=(1, 4), T=(1, 6), S=(1, 8), H=(1, 4), Dh=(1, 4))
    plain = make_problem(homework_seed + 190, B=B, T=T, S=S, D=H * Dh, H=H)
    problem = with_large_scores(plain)
    g, e, _ = backward(cross_attention_backward, problem, homework_seed + 191)
    D = H * Dh
    got = dict(zip(("dX_q", "dX_kv"), input_gradients(g, problem)))
    got.update({name: as_array(name, g[name], shape=(D, D) if name.startswith("dW") else (D,), kind="f",
                               dtype=np.float64) for name in GRAD_NAMES})
    wrong = [name for name in got if not close(got[name], e[name], **LARGE_SCORES_BACKWARD_TOL)]
    if not wrong:
        return
    g_plain, e_plain, dY = backward(cross_attention_backward, plain, homework_seed + 191)  # the same dY
    if all(close(g_plain[name], e_plain[name], **TOL) for name in got):
        fail(overflow_message("your gradients are") + f" (wrong here: {', '.join(wrong)})")
    check_input_gradients(g_plain, e_plain, plain, dY)  # the ordinary checks name what is wrong
    check_weight_gradients(g_plain, e_plain, plain)
    name = wrong[0]
    expect_close(f"{name} at large scores", got[name], e[name], **LARGE_SCORES_BACKWARD_TOL)
