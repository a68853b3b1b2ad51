"""Homework 3, task 3.2 (masked attention: before the softmax, fully masked rows): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, close, expect_close, fail, softmax_overflow
from minitf.masks import causal_mask

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
task2 = pytest.mark.hw03_task2
TOL64 = {"rtol": 1e-10, "atol": 1e-12}  # float64: a forward written out agrees with minitf's to about 1e-15
TOL32 = {"rtol": 1e-5, "atol": 1e-6}


# =====================================================================================
# Task 3.2 -- calling the student's forward
# =====================================================================================
def call_forward(fn, p: AttentionProblem):
    """``fn(Q, K, V, mask)`` -> (out, A), checked for type, shape, dtype and inputs left alone."""
    sent = [("Q", p.Q.copy()), ("K", p.K.copy()), ("V", p.V.copy()),
            ("mask", None if p.mask is None else p.mask.copy())]
    result = fn(p.Q, p.K, p.V, p.mask)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail(f"masked_attention_forward: expected a pair (out, A), received {type(result).__name__}"
             + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
    expect_inputs_unchanged(fn, "masked_attention_forward", sent,
                            "work on new arrays (scores = scores + mask, not an in-place += on an input)")
    B, H, T, Dh = p.Q.shape
    S = p.K.shape[2]
    out = as_array("out", result[0], shape=(B, H, T, Dh), kind="f", dtype=p.Q.dtype)
    A = as_array("A", result[1], shape=(B, H, T, S), kind="f", dtype=p.Q.dtype)
    return out, A


def describe_row(p: AttentionProblem, idx) -> str:
    b, h, t = idx[:3]
    return f"row (b={b}, h={h}, t={t}) of the {p.kind!r} mask"


def diagnose_forward(p: AttentionProblem, out, A) -> str | None:
    """Name the classic mistake behind a wrong (out, A), if it is one."""
    ref_out, ref_A = minitf_attention(p)
    tol = TOL64 if p.Q.dtype == np.float64 else TOL32
    bad = ~np.isfinite(A).all(axis=-1) | ~np.isfinite(out).all(axis=-1)  # (B, H, T)
    if bad.any():
        idx = first_index(bad)
        if p.dead[idx]:
            return (f"A or out holds nan on {describe_row(p, idx)}, whose every key is blocked (a fully masked row). "
                    f"With -inf as the mask value the stable softmax computes -inf - (-inf) = nan there, and "
                    f"dividing 0 by a zero row sum gives nan too; keep the additive mask finite (-1e9) and give a "
                    f"fully masked row all-zero weights, e.g. A = A * row_alive")
        return f"A or out holds nan or inf on {describe_row(p, idx)}: subtract each row's maximum before exp"
    if p.mask is not None:
        zeroed = ~p.dead & (A == 0).all(axis=-1)  # (B, H, T): a row with a key to see, yet no weight at all
        if zeroed.any():
            idx = first_index(zeroed)
            row = np.broadcast_to(p.mask, p.blocked.shape)[idx]  # (S,) the row's mask entries
            return (f"{describe_row(p, idx)} has {int((~p.blocked[idx]).sum())} key(s) it may attend to, yet its "
                    f"weights are all zero: it was taken for a fully masked row. A row is fully masked only when "
                    f"EVERY entry of its mask is <= MASK_VALUE / 2 (its maximum is), however low its entries add "
                    f"up: this row's entries are {sorted(set(row.tolist()))} -- a cell blocked twice (causal + "
                    f"padding) holds -2e9")
        keep = ~p.blocked
        after = plain_softmax(scores_of(p)) * keep  # the mistake: normalise over every key, then zero the blocked
        alive = ~p.dead
        if close(A[alive], after[alive], **tol) and not close(A[alive], ref_A[alive], **tol):
            sums = A.sum(axis=-1)[alive]
            return (f"the mask is applied after the softmax: the weights are softmax(scores) * keep, normalised over "
                    f"every key and then zeroed where blocked, so a row sums to as little as {sums.min():.3g} "
                    f"instead of 1, and the kept weights still depend on the blocked (future) keys through the "
                    f"softmax's denominator. Add the mask to the scores BEFORE the softmax")
        unmasked = plain_softmax(scores_of(p))
        if close(A, unmasked, **tol):
            return "the mask was not applied: A = softmax(Q K^T / sqrt(Dh)) gives weight to blocked keys"
        if close(A[alive], ref_A[alive], **tol) and (A[p.dead] != 0).any():
            idx = first_index(p.dead & (np.abs(A).sum(axis=-1) > 0))
            return (f"{describe_row(p, idx)} is fully masked (every key blocked), yet its weights sum to "
                    f"{A[idx].sum():.3g}: a meaningless average over keys it must not see. A fully masked row must "
                    f"give all-zero weights and a zero output (find it from the mask: every entry of the row "
                    f"<= MASK_VALUE / 2)"
                    + (f" -- this mask is {p.mask.shape}, one for the whole batch, and it blocks whole rows too: "
                       f"find the fully masked rows whatever the mask's shape" if p.mask.ndim < 4 else ""))
    no_scale = plain_softmax(scores_of(p, scale=False) + (0.0 if p.mask is None else p.mask)) * ~p.dead[..., None]
    if close(A, no_scale, **tol) and not close(A, ref_A, **tol):
        return "the scores miss the 1/sqrt(Dh) scale: scores = Q K^T / sqrt(Dh) + mask"
    if close(A, ref_A, **tol) and not close(out, ref_out, **tol):
        return "A is right but out is not: out = A V, (B, H, T, S) @ (B, H, S, Dh)"
    return None


def check_forward(fn, p: AttentionProblem) -> tuple:
    out, A = call_forward(fn, p)
    mistake = diagnose_forward(p, out, A)
    if mistake:
        fail(mistake)
    ref_out, ref_A = minitf_attention(p)
    tol = TOL64 if p.Q.dtype == np.float64 else TOL32
    expect_close(f"A under the {p.kind!r} mask", A, ref_A, **tol, hint="A = softmax(Q K^T / sqrt(Dh) + mask)")
    expect_close(f"out under the {p.kind!r} mask", out, ref_out, **tol, hint="out = A V")
    return out, A


# =====================================================================================
# Task 3.2 -- the tests
# =====================================================================================
@task2
@pytest.mark.parametrize("kind", MASK_KINDS)
def test_forward_matches_minitf(submission, homework_seed, kind):
    """float64 against minitf's scaled_dot_product_attention (rtol 1e-10)."""
    forward = submission.function("masked_attention_forward")
    check_forward(forward, attention_problem(homework_seed + 10 + MASK_KINDS.index(kind), kind,
                                             **problem_sizes(homework_seed)))
    if kind in ("none", "causal"):  # and a batch of one (a padding mask needs a full and an empty row)
        # sub-seeds 25 and 26: apart from the six kinds' 10..15, so no two problems share one
        check_forward(forward, attention_problem(homework_seed + 25 + MASK_KINDS.index(kind), kind,
                                                 **dict(problem_sizes(homework_seed), B=1)))


@task2
def test_rows_sum_to_one_or_are_fully_masked_zeros(submission, homework_seed):
    """Every row of A sums to 1, except a fully masked row, which is all zero and gives a zero output."""
    forward = submission.function("masked_attention_forward")
    p = attention_problem(homework_seed + 20, "both", B=4, T=6)
    out, A = call_forward(forward, p)
    if not (np.isfinite(A).all() and np.isfinite(out).all()):
        fail(diagnose_forward(p, out, A) or "A or out holds nan or inf")
    sums = A.sum(axis=-1)  # (B, H, T)
    live = ~p.dead
    worst = np.abs(sums - 1.0) * live
    if worst.max() > 1e-9:
        idx = first_index(worst == worst.max())
        fail(f"{describe_row(p, idx)} has a key it may attend to, but its weights sum to {sums[idx]:.6g}, not 1"
             + (" (a mask applied after the softmax leaves exactly this)" if sums[idx] < 1 else ""))
    if (A[p.dead] != 0).any() or (out[p.dead] != 0).any():
        idx = first_index(p.dead & ((A != 0).any(axis=-1) | (out != 0).any(axis=-1)))
        fail(f"{describe_row(p, idx)} is fully masked (a padded query with no key left), yet its weights sum to "
             f"{sums[idx]:.3g} and its output is not zero: it must be exactly zero (weights and output), never a "
             f"uniform average over blocked keys")
    if (A[p.blocked] != 0).any():
        idx = first_index(p.blocked & (A != 0))
        fail(f"A{list(idx)} = {A[idx]:.3g} on a blocked key: exp(score + MASK_VALUE) is exactly 0")


@task2
def test_changing_a_future_key_changes_nothing_before_it(submission, homework_seed):
    """Under the causal mask (T = S), replace the last key and value: queries 0 .. T-2 must not move."""
    forward = submission.function("masked_attention_forward")
    rng = np.random.default_rng(homework_seed + 30)
    B, H, T, Dh = 2, 2, 5, 4
    Q, K, V = (rng.normal(size=(B, H, T, Dh)) for _ in range(3))
    mask = causal_mask(T, dtype=np.float64)
    out, _ = forward(Q, K, V, mask)
    K2, V2 = K.copy(), V.copy()
    K2[:, :, -1], V2[:, :, -1] = rng.normal(size=(B, H, Dh)), rng.normal(size=(B, H, Dh))  # the future of t < T-1
    out2, _ = forward(Q, K2, V2, mask)
    out = as_array("out", out, shape=(B, H, T, Dh), kind="f")
    out2 = as_array("out", out2, shape=(B, H, T, Dh), kind="f")
    moved = np.abs(out2[:, :, :-1] - out[:, :, :-1]).max(axis=(0, 1, 3))  # (T-1,)
    if not np.isfinite(moved).all() or moved.max() > 1e-12:
        t = int(np.nanargmax(moved))
        fail(f"changing only the last key and value (position {T - 1}) moved the output at position {t} by "
             f"{moved[t]:.3g}: the future leaks in. Under the causal mask the outputs at 0 .. {T - 2} cannot depend "
             f"on position {T - 1}; a mask applied after the softmax still lets it in through the denominator")
    from minitf.attention import scaled_dot_product_attention  # the outputs themselves, not only their invariance

    expect_close("out under the causal mask", out, scaled_dot_product_attention(Q, K, V, mask)[0], rtol=1e-10,
                 atol=1e-12, hint="A = softmax(Q K^T / sqrt(Dh) + mask), out = A V")


def large_score_problem(seed: int, **sizes) -> AttentionProblem:
    """A causal problem (T queries after S - T cached positions) with scores in the thousands: query 0
    scores 2000 against the last key, which it may not see, and so does the last query, which may;
    every other score is about 100 at most (Q and K scaled by 10)."""
    p = attention_problem(seed, "causal", **sizes)
    Dh = p.Q.shape[-1]
    Q, K = 10 * p.Q, 10 * p.K  # (B, H, T, Dh), (B, H, S, Dh)
    unit = p.Q[:, :, 0] / np.linalg.norm(p.Q[:, :, 0], axis=-1, keepdims=True)  # (B, H, Dh)
    Q[:, :, 0] = Q[:, :, -1] = 10 * np.sqrt(Dh) * unit  # the last query (position S-1) sees every key
    K[:, :, -1] = 200 * unit  # q0 . k / sqrt(Dh) = 2000
    return p._replace(Q=Q, K=K)


@task2
def test_forward_with_large_scores(submission, homework_seed):
    """Scores in the thousands (sharp attention): exp(score) overflows, exp(score - row maximum) cannot.
    Query 0's largest score is on a key it may not see; the last query sees its largest."""
    forward = submission.function("masked_attention_forward")
    p = large_score_problem(homework_seed + 45, **problem_sizes(homework_seed))
    out, A = call_forward(forward, p)
    top = float(scores_of(p).max())
    bad = ~np.isfinite(A).all(axis=-1) | ~np.isfinite(out).all(axis=-1)  # (B, H, T)
    if bad.any():
        idx = first_index(bad)
        fail(softmax_overflow(f"A or out holds nan or inf on {describe_row(p, idx)}, with scores up to {top:.0f}",
                              "scores", maximum="each row's maximum of scores + mask"))
    sums = A.sum(axis=-1)  # (B, H, T)
    lost = ~p.dead & (np.abs(sums - 1.0) > 1e-9)
    if lost.any():
        idx = first_index(lost)
        fail(f"{describe_row(p, idx)} has keys it may attend to, yet its weights sum to {sums[idx]:.3g}: its exps "
             f"underflowed to 0. The maximum subtracted was taken before the mask was added, over the blocked "
             f"keys too, and a blocked key scores far above the allowed ones (here {top:.0f}): exp(allowed - max) "
             f"is 0. Subtract the maximum of scores + mask: a blocked key never sets it")
    check_forward(forward, p)


@task2
def test_forward_float32_in_float32_out(submission, homework_seed):
    """float32 with causal + key padding: MASK_VALUE and -2e9 in float32, fully masked rows exactly zero."""
    forward = submission.function("masked_attention_forward")
    p = attention_problem(homework_seed + 40, "both", dtype=np.float32, B=3, T=5)
    out, _ = check_forward(forward, p)
    if (out[p.dead] != 0).any():
        fail("a fully masked row's output is not exactly zero in float32")
