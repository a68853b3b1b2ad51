"""Homework 3, task 3.3 (the mask in the backward): the public tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.attention import AttentionCache, scaled_dot_product_attention_backward
from minitf.grading.asserts import as_array, close, expect_close, fail

from .common import (
    MASK_KINDS,
    AttentionProblem,
    attention_problem,
    expect_inputs_unchanged,
    first_index,
    minitf_attention,
    plain_softmax,
    scores_of,
    problem_sizes,
)

HOMEWORK = "hw03"
task3 = pytest.mark.hw03_task3
# float64 throughout: a backward written out agrees with minitf's to about 1e-15; finite
# differences of the forward reach only about 1e-10, and fail -- the task is the backward itself
TOL = {"rtol": 1e-11, "atol": 1e-13}
NAMES = ("dQ", "dK", "dV")


# =====================================================================================
# Task 3.3 -- problems, minitf's answers, and what the classic mistakes compute
# =====================================================================================
def backward_problem(seed: int, kind: str, dtype=np.float64, **sizes):
    """An attention problem, minitf's forward weights A on it, and a random upstream gradient."""
    p = attention_problem(seed, kind, dtype=dtype, **sizes)
    out, A = minitf_attention(p)
    dout = np.random.default_rng([seed, 1]).normal(size=out.shape).astype(dtype)  # a stream of its own, not seed + 1's
    return p, A, dout


def attention_backward(dout, Q, K, V, A, softmax_backward=None, scale=None):
    """The backward in float64, with a softmax backward and a scale that a mistake may change."""
    dout, Q, K, V, A = (np.asarray(x, dtype=np.float64) for x in (dout, Q, K, V, A))
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    dV = A.swapaxes(-1, -2) @ dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = (softmax_backward or (lambda g, a: a * (g - (g * a).sum(axis=-1, keepdims=True))))(dA, A)
    return (dscores @ K) * scale, (dscores.swapaxes(-1, -2) @ Q) * scale, dV


def expected_grads(p: AttentionProblem, A, dout):
    """minitf's own backward."""
    return scaled_dot_product_attention_backward(dout, AttentionCache(p.Q, p.K, p.V, A))[:3]


def call_backward(fn, p: AttentionProblem, A, dout):
    sent = [("dout", dout.copy()), ("Q", p.Q.copy()), ("K", p.K.copy()), ("V", p.V.copy()), ("A", A.copy())]
    result = fn(dout, p.Q, p.K, p.V, A)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail(f"masked_attention_backward: expected a triple (dQ, dK, dV), received {type(result).__name__}"
             + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
    expect_inputs_unchanged(fn, "masked_attention_backward", sent)
    grads = []
    for name, g, x in zip(NAMES, result, (p.Q, p.K, p.V)):
        if name == "dV" and getattr(g, "shape", None) == A.shape[:-1] + (p.V.shape[-1],) and A.shape[-2] != A.shape[-1]:
            fail(f"dV has the queries' shape {g.shape}: dV = A^T dout, (B, H, S, T) @ (B, H, T, Dh), one row per key")
        grads.append(as_array(name, g, shape=x.shape, kind="f", dtype=x.dtype))
    return tuple(grads)


def _all_close(grads, expected, **tol) -> bool:
    return all(close(g, e, **tol) for g, e in zip(grads, expected))


def diagnose_backward(p: AttentionProblem, A, dout, grads) -> str | None:
    expected = expected_grads(p, A, dout)
    if _all_close(grads, expected, **TOL):
        return None
    for name, g in zip(NAMES, grads):
        if not np.isfinite(g).all():
            where = first_index(~np.isfinite(g))
            dead = " (a fully masked query: its row of A is all zero)" if name == "dQ" and p.dead[where[:3]] else ""
            return (f"{name} holds nan or inf at {list(where)}{dead}: the softmax backward A * (dA - sum(dA * A)) is "
                    f"exactly 0 where A is 0 and needs no division; nothing in the backward should divide by a "
                    f"row sum or take a log")
    Dh = p.Q.shape[-1]
    if _all_close(grads, (expected[0] * math.sqrt(Dh), expected[1] * math.sqrt(Dh), expected[2]), **TOL):
        return ("dQ and dK miss the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh) + mask): they are "
                f"sqrt(Dh) = {math.sqrt(Dh):g} times too large")
    if _all_close(grads, attention_backward(dout, p.Q, p.K, p.V, A, softmax_backward=lambda g, a: a * g), **TOL):
        return ("the softmax backward is only its diagonal: dscores = A * dA misses the - A * sum(dA * A) term. The "
                "Jacobian of the softmax is diag(A) - A A^T: dscores = A * (dA - sum_s dA * A)")
    if p.mask is not None:
        A_unmasked = plain_softmax(scores_of(p))  # what recomputing the weights without the mask gives
        if _all_close(grads, attention_backward(dout, p.Q, p.K, p.V, A_unmasked), **TOL):
            return ("these are the gradients of attention WITHOUT the mask: the weights were recomputed from Q and K "
                    "and the mask was lost, so blocked keys get gradient. Use A, the forward's weights: the mask "
                    "lives in A (0 on blocked keys, all 0 on fully masked rows)")
    if _all_close(grads, expected, rtol=1e-5, atol=1e-8):
        err = max(float(np.max(np.abs(g - e) / (np.abs(e) + 1e-8))) for g, e in zip(grads, expected))
        return (f"your gradients agree with minitf's backward only to about {err:.1g}: the precision of finite "
                f"differences (or of float32 arithmetic), not of a backward written out in float64, which agrees to "
                f"about 1e-15. The task is the backward itself")
    return None


def check_backward(fn, p: AttentionProblem, A, dout):
    grads = call_backward(fn, p, A, dout)
    mistake = diagnose_backward(p, A, dout, grads)
    if mistake:
        fail(mistake)
    for name, g, e in zip(NAMES, grads, expected_grads(p, A, dout)):
        expect_close(f"{name} under the {p.kind!r} mask", g, e, **TOL,
                     hint="dV = A^T dout; dscores = A * (dA - sum(dA * A)); dQ = dscores K / sqrt(Dh); "
                          "dK = dscores^T Q / sqrt(Dh)")
    return grads


# =====================================================================================
# Task 3.3 -- the tests
# =====================================================================================
@task3
@pytest.mark.parametrize("kind", MASK_KINDS)
def test_backward_matches_minitf(submission, homework_seed, kind):
    """float64 against minitf's scaled_dot_product_attention_backward (rtol 1e-11)."""
    backward = submission.function("masked_attention_backward")
    p, A, dout = backward_problem(homework_seed + 50 + MASK_KINDS.index(kind), kind, **problem_sizes(homework_seed))
    check_backward(backward, p, A, dout)
    if kind in ("none", "causal"):  # and a batch of one (a padding mask needs a full and an empty row)
        # sub-seeds 65 and 66: apart from the six kinds' 50..55, so no two problems share one
        p, A, dout = backward_problem(homework_seed + 65 + MASK_KINDS.index(kind), kind,
                                      **dict(problem_sizes(homework_seed), B=1))
        check_backward(backward, p, A, dout)


@task3
@pytest.mark.parametrize("kind", ("padding", "both"))
def test_blocked_scores_get_exactly_zero_gradient(submission, homework_seed, kind):
    """A key every query has blocked (padding) gets dK = dV = 0 exactly; a fully masked query gets
    dQ = 0 exactly.  Exactly: == 0.0, not a small number."""
    backward = submission.function("masked_attention_backward")
    p, A, dout = backward_problem(homework_seed + 60 + (kind == "both"), kind, B=4)
    dQ, dK, dV = call_backward(backward, p, A, dout)
    for name, g in zip(NAMES, (dQ, dK, dV)):
        if not np.isfinite(g).all():
            fail(diagnose_backward(p, A, dout, (dQ, dK, dV)) or f"{name} holds nan or inf")
    dead_key = p.blocked.all(axis=2)  # (B, H, S): no query may attend to this key
    for name, g in (("dK", dK), ("dV", dV)):
        if (g[dead_key] != 0).any():
            b, h, s = first_index(dead_key & (g != 0).any(axis=-1))
            mistake = diagnose_backward(p, A, dout, (dQ, dK, dV))
            fail(f"{name}[{b}, {h}, {s}] = {np.round(g[b, h, s], 4).tolist()} for key {s} of example {b}, a padded "
                 f"key every query has blocked: its gradient must be exactly 0. A is exactly 0 there, so "
                 f"dV = A^T dout and dscores = A * (...) are exactly 0"
                 + (f". Here {mistake}" if mistake else " -- unless the weights you differentiate are not the "
                                                        "forward's"))
    if (dQ[p.dead] != 0).any():
        b, h, t = first_index(p.dead & (dQ != 0).any(axis=-1))
        fail(f"dQ[{b}, {h}, {t}] is not zero for a fully masked query (its row of A is all zero): its gradient must "
             f"be exactly 0, with no mask of its own in the backward")
    check_backward(backward, p, A, dout)


@task3
def test_backward_float32_in_float32_out(submission, homework_seed):
    backward = submission.function("masked_attention_backward")
    p, A, dout = backward_problem(homework_seed + 70, "both", dtype=np.float32)
    grads = call_backward(backward, p, A, dout)
    for name, g, e in zip(NAMES, grads, expected_grads(p, A, dout)):
        expect_close(f"{name} (float32)", g, e, rtol=1e-4, atol=1e-6)
