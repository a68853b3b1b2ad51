"""Homework 2, task 2.2 (scaled dot-product attention, forward): the public tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.attention import scaled_dot_product_attention
from minitf.grading.asserts import as_array, call, close, expect_close, fail, softmax_overflow
from minitf.grading.problems import shapes
from minitf.layers.softmax import softmax as minitf_softmax

from .common import (
    FLOAT32,
    FORWARD64,
    SHAPES_HINT,
    as_pair,
    attention_inputs,
    expect_untouched,
    python_loops,
    submission_source,
)

HOMEWORK = "hw02"
task2 = pytest.mark.hw02_task2


# =====================================================================================
# Task 2.2 -- scaled dot-product attention
# =====================================================================================
def weights_candidates(Q: np.ndarray, K: np.ndarray) -> dict:
    """The classic wrong attention weights of (Q, K), by the mistake's description."""
    Dh = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2)  # (B, H, T, S), not yet scaled
    out = {
        f"the scores were divided by Dh = {Dh}, not by sqrt(Dh) = {math.sqrt(Dh):.4g}: q . k has variance Dh, so its "
        f"standard deviation, the spread the scale must undo, is sqrt(Dh); 1/Dh flattens the weights toward uniform as "
        f"heads get wider": minitf_softmax(scores / Dh),
        f"the 1/sqrt(Dh) scale is missing: A = softmax(Q K^T / sqrt(Dh)). Unscaled, the scores' variance grows with "
        f"the head width Dh = {Dh}, and the softmax saturates (rows close to one-hot pass almost no gradient)":
            minitf_softmax(scores),
        "the scores were multiplied by sqrt(Dh) instead of divided by it: A = softmax(Q K^T / sqrt(Dh))":
            minitf_softmax(scores * math.sqrt(Dh)),
        "the softmax was taken over the queries (axis -2): each query's weights over the keys (the last axis) must "
        "sum to 1, not each key's weights over the queries": np.swapaxes(
            minitf_softmax(np.swapaxes(scores / math.sqrt(Dh), -1, -2)), -1, -2),
    }
    return out


def check_attention(attention_forward, Q: np.ndarray, K: np.ndarray, V: np.ndarray, tol: dict | None = None,
                    out_tol: dict | None = None) -> tuple:
    """Call the student's attention on (Q, K, V), compare with minitf's (A to ``tol``, by default
    FORWARD64 or FLOAT32 by the dtype; out to ``out_tol``, by default ``tol``), and return (out, A)."""
    sent = {0: ("Q", Q.copy()), 1: ("K", K.copy()), 2: ("V", V.copy())}
    result = call(attention_forward, Q, K, V, shape_hint=SHAPES_HINT)
    out, A = as_pair("attention_forward(Q, K, V)", result, "out", "A")
    B, H, T, Dh = Q.shape
    S = K.shape[2]
    if getattr(A, "shape", None) == (B, H, T, Dh) and getattr(out, "shape", None) == (B, H, T, S) and S != Dh:
        fail("attention_forward returned (A, out): return the pair in the order (out, A)")
    if getattr(A, "shape", None) == (B, H, S, T) and S != T:
        fail(f"A has shape (B, H, S, T) = {(B, H, S, T)}: the scores were computed as K Q^T. They are Q K^T, "
             f"(B, H, T, S) = {(B, H, T, S)}: one row per query t, one column per key s")
    A = as_array("A", A, shape=(B, H, T, S), kind="f")
    out = as_array("out", out, shape=(B, H, T, Dh), kind="f")
    expect_untouched(attention_forward, sent)
    for name, x in (("out", out), ("A", A)):
        if x.dtype != Q.dtype:
            fail(f"{name}: expected dtype {Q.dtype} (the dtype of Q), received {x.dtype}"
                 + (". np.sqrt(Dh) is a float64 NumPy scalar, which turns float32 arrays into float64 under NumPy 2: "
                    "divide by math.sqrt(Dh), a Python float" if Q.dtype == np.float32 else ""))
    tol = tol or (FORWARD64 if Q.dtype == np.float64 else FLOAT32)
    out_tol = out_tol or tol
    expected_out, cache = scaled_dot_product_attention(*(x[1] for x in sent.values()))
    if not (np.isfinite(A).all() and np.isfinite(out).all()):
        scores = sent[0][1].astype(np.float64) @ sent[1][1].astype(np.float64).swapaxes(-1, -2) / math.sqrt(Dh)
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(A) if not np.isfinite(A).all() else ~np.isfinite(out))[0])
        where = f"{'A' if not np.isfinite(A).all() else 'out'}{list(bad)} is not finite"
        if scores.max() > np.log(np.finfo(Q.dtype).max):  # 709 in float64, 88 in float32
            fail(softmax_overflow(f"{where} (the scores run up to {scores.max():.4g}, dtype {Q.dtype})", "scores",
                                  also="The softmax inside attention_forward must be the stable one"))
        fail(f"{where}, with scores no larger than {scores.max():.4g}: a NaN or inf came from the computation itself "
             f"(a division by zero?)")
    if not close(A, cache.A, **tol):
        for mistake, candidate in weights_candidates(*(x[1].astype(np.float64) for x in (sent[0], sent[1]))).items():
            if close(A, candidate, **tol) and not close(candidate, cache.A, **tol):
                fail(mistake)
        sums = A.sum(axis=-1)
        if not np.allclose(sums, 1.0, rtol=1e-4, atol=0):
            i = tuple(int(k) for k in np.unravel_index(int(np.argmax(np.abs(sums - 1))), sums.shape))
            fail(f"the weights of query {list(i)} sum to {sums[i]:.6g}, not 1: A = softmax(scores) over the keys "
                 f"(the last axis)")
    expect_close("A", A, cache.A, **tol, hint="A = softmax(Q K^T / sqrt(Dh)), over the last axis (the keys)")
    if not close(out, expected_out, **out_tol) and close(out, A @ K, **out_tol):
        fail("out = A K: the output is a weighted mean of the VALUES, out = A V")
    expect_close("out", out, expected_out, **out_tol, hint="out = A V, each query's weighted mean of the values")
    return out, A


@task2
def test_attention_forward_values(submission, homework_seed):
    """Cross-attention shapes: T queries over S != T keys."""
    attention_forward = submission.function("attention_forward")
    rng = np.random.default_rng(homework_seed + 31)
    for B, H, T, S, Dh in shapes(homework_seed, [(2, 3, 4, 6, 16), (1, 2, 5, 3, 8)], B=(1, 3), H=(1, 4), T=(1, 6),
                                 S=(1, 7), Dh=(1, 16)):
        check_attention(attention_forward, *attention_inputs(rng, B, H, T, S, Dh))


@task2
def test_attention_forward_self_attention_float32_and_edge_sizes(submission, homework_seed):
    """T == S (self-attention), a single query, a single key, Dh = 1; float32 in, float32 out."""
    attention_forward = submission.function("attention_forward")
    rng = np.random.default_rng(homework_seed + 32)
    for (B, H, T, S, Dh), dtype in [((2, 2, 5, 5, 16), np.float32), ((3, 1, 1, 4, 8), np.float64),
                                    ((1, 2, 3, 1, 4), np.float64), ((2, 4, 3, 3, 1), np.float64)]:
        check_attention(attention_forward, *attention_inputs(rng, B, H, T, S, Dh, dtype))


@task2
def test_attention_finds_keys_by_content(submission, homework_seed):
    """Lesson 2, section 1: each query is a noisy copy of one key, in a shuffled order; the
    dot product finds, for every query, the key it was made from, by content alone."""
    attention_forward = submission.function("attention_forward")
    rng = np.random.default_rng(homework_seed + 33)
    S, Dh = 6, 32
    K = rng.standard_normal((1, 1, S, Dh))
    V = rng.standard_normal((1, 1, S, Dh))
    order = rng.permutation(S)
    Q = K[:, :, order] + 0.3 * rng.standard_normal((1, 1, S, Dh))  # query t is a copy of key order[t]
    _, A = check_attention(attention_forward, Q, K, V)
    found = A[0, 0].argmax(axis=-1)
    if not np.array_equal(found, order):
        fail(f"query t was made from key {order.tolist()}[t], but its largest weight falls on key {found.tolist()}[t]")


def large_score_tolerance(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[dict, dict]:
    """The tolerances (for A, for out) of large scores, relative to their magnitude.  Any exact formula
    (the scale on Q or on the scores, matmul or einsum) rounds a score s = q . k / sqrt(Dh) by up to
    about (Dh + 2) eps sum_i |q_i k_i| / sqrt(Dh), and the softmax turns an error d in a score into a
    relative error d in its weight (and in the normalisation, S of them): at scores in the thousands
    that is 1e-13 relative in float64, above FORWARD64's absolute part for out, so the tolerance grows
    with the scores.  What this catches is NaN and inf, not the last digits."""
    Dh, S = Q.shape[-1], K.shape[-2]
    eps = float(np.finfo(Q.dtype).eps)
    absQ, absK = np.abs(Q.astype(np.float64)), np.abs(K.astype(np.float64))
    magnitude = float((absQ @ absK.swapaxes(-1, -2)).max()) / math.sqrt(Dh)  # max over (t, s) of sum_i |q_i k_i|
    base = FORWARD64 if Q.dtype == np.float64 else FLOAT32
    rtol = max(base["rtol"], 8.0 * (Dh + S + 2) * eps * magnitude)
    return (dict(rtol=rtol, atol=base["atol"]),
            dict(rtol=rtol, atol=max(base["atol"], rtol * float(np.abs(V).max()))))


@task2
def test_attention_is_stable_for_large_scores(submission, homework_seed):
    """Scores far beyond exp's range (709 in float64, 88 in float32): each query a noisy copy of one
    key of a fixed large norm, so that every query's score against its key is about 2000 (300 in
    float32).  The weights stay finite, one-hot in the limit; the values are compared with a
    tolerance relative to the scores' magnitude (see large_score_tolerance)."""
    attention_forward = submission.function("attention_forward")
    rng = np.random.default_rng(homework_seed + 34)
    Dh = 8
    sizes = shapes(homework_seed, [(2, 2, 3, 5), (1, 3, 4, 4)], B=(1, 3), H=(1, 4), T=(1, 6), S=(1, 7))
    problems = [(size, 2000.0, np.float64) for size in sizes] + [((2, 2, 3, 4), 300.0, np.float32)]
    for (B, H, T, S), top, dtype in problems:  # top: the score of each query against its own key
        K = rng.standard_normal((B, H, S, Dh))
        K *= math.sqrt(top * math.sqrt(Dh)) / np.linalg.norm(K, axis=-1, keepdims=True)  # |k|^2 / sqrt(Dh) = top
        V = rng.standard_normal((B, H, S, Dh))
        order = rng.integers(0, S, size=T)
        Q = K[:, :, order] + rng.standard_normal((B, H, T, Dh))  # query t a noisy copy of key order[t]
        Q, K, V = Q.astype(dtype), K.astype(dtype), V.astype(dtype)
        check_attention(attention_forward, Q, K, V, *large_score_tolerance(Q, K, V))


@task2
def test_attention_forward_has_no_python_loop(submission, homework_seed, request):
    """Lesson 2, sections 1 and 2: every batch, head and query at once, by two batched matrix
    products (the @ of (B, H, T, Dh) and (B, H, Dh, S)) and a softmax over the last axis."""
    attention_forward = submission.function("attention_forward")
    rng = np.random.default_rng(homework_seed + 35)
    check_attention(attention_forward, *attention_inputs(rng, 2, 3, 4, 5, 8))
    loops = python_loops(submission_source(request), ("attention_forward",))
    if loops:
        fail(f"a Python loop over the batch, the heads or the queries: {'; '.join(loops)}. None is needed: "
             f"Q @ K.swapaxes(-1, -2) multiplies every (b, h) pair of matrices at once, (B, H, T, Dh) @ (B, H, Dh, S) "
             f"-> (B, H, T, S), and the softmax and A @ V do the same")
