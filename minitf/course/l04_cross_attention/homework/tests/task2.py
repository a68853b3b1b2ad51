"""Homework 4, task 4.2 (keys and values computed once per layer; one decoding step): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import split_heads
from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes

from .common import (FORWARD_TOL, Problem, READ_ONLY, make_problem, minitf_forward, minitf_keys_values,
                     overflow_message, variant_forward, with_large_scores, with_padding_anywhere)

HOMEWORK = "hw04"
task2 = pytest.mark.hw04_task2
TOL = FORWARD_TOL[np.dtype(np.float64)]
KV_ARGS = ["H_enc", "params", "H"]
STEP_ARGS = ["x_t", "K", "V", "params", "src_mask"]


# =====================================================================================
# Task 4.2 (a) -- K and V from H_enc, split into heads
# =====================================================================================
def check_keys_values(out, problem: Problem) -> None:
    B, T, S, D, Dh = problem.dims
    H, p, X = problem.H, problem.params, problem.X_kv
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"encoder_keys_values: expected a pair (K, V), received {type(out).__name__}")
    for name, x in zip("KV", out):
        if getattr(x, "shape", None) == (B, S, D):
            fail(f"{name} has shape (B, S, D) = {(B, S, D)}: split it into heads, (B, H, S, Dh) = {(B, H, S, Dh)}, "
                 f"the layout the attention of every step reads")
    TOL = FORWARD_TOL[np.dtype(X.dtype)]  # noqa: N806  (float64's, or float32's)
    K = as_array("K", out[0], shape=(B, H, S, Dh), kind="f", dtype=X.dtype)
    V = as_array("V", out[1], shape=(B, H, S, Dh), kind="f", dtype=X.dtype)
    K_e, V_e = minitf_keys_values(X, p, H)
    if not close(K, K_e, **TOL) and close(K, V_e, **TOL) and close(V, K_e, **TOL):
        fail("K and V are swapped: K = split(H_enc W_k + b_k), V = split(H_enc W_v + b_v)")
    for name, got, W, b, expected in (("K", K, "W_k", "b_k", K_e), ("V", V, "W_v", "b_v", V_e)):
        if close(got, expected, **TOL):
            continue
        projected = X @ p[W] + p[b]  # (B, S, D)
        if close(got, projected.reshape(B, H, S, Dh), **TOL):
            fail(f"{name} was split into heads by reshape(B, H, S, Dh) alone: that cuts the (S, D) matrix into H "
                 f"blocks of rows, mixing positions. Head h owns columns h*Dh .. (h+1)*Dh - 1 of every position: "
                 f"reshape to (B, S, H, Dh), then transpose to (B, H, S, Dh) (minitf.attention.split_heads)")
        if close(got, split_heads(X @ p[W], H), **TOL):
            fail(f"{name} misses the bias {b}: {name} = split(H_enc {W} + {b})")
        if close(got, split_heads(X @ p[W].T + p[b], H), **TOL):
            fail(f"{name} used {W} transposed: minitf's weights are (D_in, D_out), for H_enc @ {W}")
        expect_close(name, got, expected, **TOL, hint=f"{name} = split(H_enc @ {W} + {b}), (B, S, D) -> (B, H, S, Dh)")


@task2
def test_encoder_keys_values(submission, homework_seed):
    encoder_keys_values = submission.function("encoder_keys_values")
    for k, (B, S, H, Dh) in enumerate(shapes(homework_seed, [(3, 6, 2, 4), (3, 5, 4, 3)], B=(1, 4), S=(1, 8), H=(1, 4),
                                             Dh=(1, 4))):
        problem = make_problem(homework_seed + 60 + k, B=B, T=3, S=S, D=H * Dh, H=H)
        out = call(encoder_keys_values, problem.X_kv, problem.params, problem.H, names=KV_ARGS, why=READ_ONLY)
        check_keys_values(out, problem)


# =====================================================================================
# Task 4.2 (b) -- one decoder position against the cached K and V
# =====================================================================================
def check_step(y_t, problem: Problem, t: int, Y_e: np.ndarray, A_e: np.ndarray, V: np.ndarray) -> None:
    B, T, S, D, Dh = problem.dims
    p = problem.params
    if getattr(y_t, "shape", None) == (B, 1, D):
        fail(f"y_t has shape (B, 1, D) = {(B, 1, D)}: one decoder position per example, (B, D) = {(B, D)}")
    y_t = as_array("y_t", y_t, shape=(B, D), kind="f", dtype=problem.X_q.dtype)
    TOL = FORWARD_TOL[np.dtype(problem.X_q.dtype)]  # noqa: N806
    expected = Y_e[:, t]
    if close(y_t, expected, **TOL):
        return
    unmasked = variant_forward(problem, mask="none")[0][:, t]
    if close(y_t, unmasked, **TOL):
        fail(f"at step t = {t}, y_t gives weight to padded source positions: the step ignores src_mask. The cached "
             f"K and V still have padded rows, so every step must add the padding mask to its scores")
    heads = A_e[:, :, t, :][:, :, None, :] @ V  # (B, H, 1, S) @ (B, H, S, Dh) -> (B, H, 1, Dh)
    interleaved = heads[:, :, 0, :].transpose(0, 2, 1).reshape(B, D) @ p["W_o"] + p["b_o"]  # (B, Dh, H) order
    if close(y_t, interleaved, **TOL):
        fail("the heads were merged in the wrong order ((B, H, Dh) transposed to (B, Dh, H) before the reshape, which "
             "interleaves the heads' columns): put them side by side, head h in columns h*Dh .. (h+1)*Dh - 1, as "
             "split_heads took them apart -- here a plain reshape (B, H, Dh) -> (B, D)")
    for b in np.flatnonzero(problem.lengths == 0):
        if not close(y_t[b], p["b_o"], **TOL):
            fail(f"at step t = {t}, y_t of example {b}, which has no real source token (its src_mask row is all "
                 f"MASK_VALUE), must be b_o: its weights are all zero, as in the forward (Lesson 3), not a softmax "
                 f"over its padding")
    expect_close(f"y_t at step t = {t}", y_t, expected, **TOL,
                 hint="y_t must equal row t of the full forward's Y: q = split(x_t W_q + b_q), weights over the "
                      "cached K with the padding mask, heads merged, then W_o and b_o")


@task2
def test_step_equals_the_full_forwards_row(submission, homework_seed):
    """Each step, from minitf's K and V, gives row t of minitf's full forward."""
    cross_attention_step = submission.function("cross_attention_step")
    problem = make_problem(homework_seed + 70, B=3, T=4, S=6, D=8, H=2, lengths=[6, 3, 1])
    Y_e, A_e, _, _ = minitf_forward(problem)
    K, V = minitf_keys_values(problem.X_kv, problem.params, problem.H)
    K, V = np.ascontiguousarray(K), np.ascontiguousarray(V)
    for t in range(problem.dims[1]):
        y_t = call(cross_attention_step, problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask, names=STEP_ARGS, why=READ_ONLY)
        check_step(y_t, problem, t, Y_e, A_e, V)


@task2
def test_keys_values_once_then_every_step(submission, homework_seed):
    """Decoding as Lesson 9 does it: your K and V, computed once, reused by your step at every position."""
    encoder_keys_values = submission.function("encoder_keys_values")
    cross_attention_step = submission.function("cross_attention_step")
    problem = make_problem(homework_seed + 80, B=2, T=5, S=4, D=8, H=4, lengths=[4, 2])
    out = call(encoder_keys_values, problem.X_kv, problem.params, problem.H, names=KV_ARGS, why=READ_ONLY)
    check_keys_values(out, problem)
    K, V = out
    Y_e, A_e, _, _ = minitf_forward(problem)
    for t in range(problem.dims[1]):
        y_t = call(cross_attention_step, problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask, names=STEP_ARGS, why=READ_ONLY)
        check_step(y_t, problem, t, Y_e, A_e, np.asarray(V))


@task2
def test_keys_values_and_steps_in_float32_for_one_example(submission, homework_seed):
    """float32 in, float32 out (K and V the dtype of H_enc, y_t of x_t), on a batch of one example,
    its K and V reused by every step."""
    encoder_keys_values = submission.function("encoder_keys_values")
    cross_attention_step = submission.function("cross_attention_step")
    (T, S, H, Dh), = shapes(homework_seed, [(3, 5, 2, 3)], T=(1, 6), S=(1, 8), H=(1, 4), Dh=(1, 4))
    problem = make_problem(homework_seed + 90, B=1, T=T, S=S, D=H * Dh, H=H, dtype=np.float32)
    out = call(encoder_keys_values, problem.X_kv, problem.params, problem.H, names=KV_ARGS, why=READ_ONLY)
    check_keys_values(out, problem)
    K, V = out
    Y_e, A_e, _, _ = minitf_forward(problem)
    for t in range(T):
        y_t = call(cross_attention_step, problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask,
                   names=STEP_ARGS, why=READ_ONLY)
        check_step(y_t, problem, t, Y_e, A_e, np.asarray(V))


def cached(problem: Problem):
    """minitf's K and V of the problem, as contiguous arrays (what the cache holds)."""
    K, V = minitf_keys_values(problem.X_kv, problem.params, problem.H)
    return np.ascontiguousarray(K), np.ascontiguousarray(V)


@task2
def test_step_with_padding_anywhere_and_an_empty_source(submission, homework_seed):
    """src_mask marks padding wherever it is (example 0 padded at the start, the others scattered), and an example
    without a real source token gets y_t = b_o at every step, as in the forward."""
    cross_attention_step = submission.function("cross_attention_step")
    (B, T, S, H, Dh), = shapes(homework_seed, [(3, 3, 6, 2, 3)], B=(3, 4), T=(1, 4), S=(2, 8), H=(1, 4), Dh=(1, 4))
    rng = np.random.default_rng(homework_seed + 180)
    lengths = [int(rng.integers(1, S)), 0] + [int(n) for n in rng.integers(1, S + 1, size=B - 2)]  # example 1: empty
    plain = make_problem(homework_seed + 181, B=B, T=T, S=S, D=H * Dh, H=H, lengths=lengths)  # padding at the end
    problem = with_padding_anywhere(plain, homework_seed + 182)
    Y_e, A_e, _, _ = minitf_forward(problem)
    Y_first, _, _, _ = minitf_forward(plain)  # the weights over the FIRST lengths[b] positions of the cache
    K, V = cached(problem)
    for t in range(T):
        y_t = call(cross_attention_step, problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask,
                   names=STEP_ARGS, why=READ_ONLY)
        if getattr(y_t, "shape", None) == (B, H * Dh) and not close(y_t, Y_e[:, t], **TOL) \
                and close(y_t, Y_first[:, t], **TOL):
            fail(f"at step t = {t}, y_t attends to the first L cached positions (L = the number of real source "
                 f"tokens) instead of the real ones: padding need not be at the end (example 0's comes first). "
                 f"src_mask marks padding wherever it is: add it to the scores over the whole cache, as the forward "
                 f"does")
        check_step(y_t, problem, t, Y_e, A_e, V)


@task2
def test_step_at_large_scores(submission, homework_seed):
    """A key bias that shifts every score of a query by up to ~1000 changes no y_t (the softmax ignores a shift of
    all its inputs), though exp overflows at such scores."""
    cross_attention_step = submission.function("cross_attention_step")
    (B, T, S, H, Dh), = shapes(homework_seed, [(3, 3, 6, 2, 4)], B=(1, 4), T=(1, 4), S=(1, 8), H=(1, 4), Dh=(1, 4))
    plain = make_problem(homework_seed + 170, B=B, T=T, S=S, D=H * Dh, H=H)
    problem = with_large_scores(plain)
    Y_e, A_e, _, _ = minitf_forward(problem)
    K, V = cached(problem)
    for t in range(T):
        y_t = call(cross_attention_step, problem.X_q[:, t].copy(), K, V, problem.params, problem.src_mask,
                   names=STEP_ARGS, why=READ_ONLY)
        if getattr(y_t, "shape", None) == (B, H * Dh) and not close(y_t, Y_e[:, t], **TOL):
            K_p, V_p = cached(plain)
            y_plain = call(cross_attention_step, plain.X_q[:, t].copy(), K_p, V_p, plain.params, plain.src_mask,
                           names=STEP_ARGS, why=READ_ONLY)
            if getattr(y_plain, "shape", None) == (B, H * Dh) and close(y_plain, minitf_forward(plain)[0][:, t], **TOL):
                fail(f"at step t = {t}: " + overflow_message("y_t is"))
        check_step(y_t, problem, t, Y_e, A_e, V)
