"""Homework 4, task 4.1 (the cross-attention forward): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes

from .common import (FORWARD_TOL, Problem, READ_ONLY, make_problem, matches, minitf_forward, overflow_message,
                     variant_forward, with_large_scores, with_padding_anywhere)

HOMEWORK = "hw04"
task1 = pytest.mark.hw04_task1
FORWARD_ARGS = ["X_q", "X_kv", "params", "H", "src_mask"]


# =====================================================================================
# Task 4.1 -- queries from the decoder, keys and values from the encoder
# =====================================================================================
def diagnose_weights(A: np.ndarray, A_e: np.ndarray, problem: Problem, tol: dict) -> None:
    """A (B, H, T, S) is not minitf's A_e: fail naming the mistake, where one is recognised."""
    B, T, S, D, Dh = problem.dims
    if not np.all(np.isfinite(A)):
        fail("A holds NaN or inf: keep the mask finite (MASK_VALUE = -1e9, never -inf), and give a source with no "
             "real token all-zero weights (Lesson 3)")
    for b in np.flatnonzero(problem.lengths == 0):
        if np.abs(A[b]).max() > 1e-6:
            fail(f"example {b} has no real source token (its src_mask row is all MASK_VALUE): its weights must be all "
                 f"zero, as minitf gives them, not a softmax over padding; yours have max {np.abs(A[b]).max():.3g}")

    def v(**kw):
        return variant_forward(problem, **kw)

    if any(matches(A, v(causal=True, zero_empty=z), 1, tol) for z in (True, False)):
        fail("a causal mask was applied to cross-attention: query t gave zero weight to the source positions s > t. "
             "Cross-attention has no causal mask -- the source is known in full before the first target token is "
             "written (Lesson 4, section 2); only the source padding is masked")
    if T == S and matches(A, v(kv_from="decoder"), 1, tol):
        fail("the keys and values came from the decoder stream X_q: in cross-attention the queries come from the "
             "decoder and the keys and values from the encoder output X_kv = H_enc (Lesson 4, section 1)")
    if matches(A, v(mask="none"), 1, tol):
        fail("the source padding mask was ignored: the weights give padded source positions a share. Add src_mask "
             "to the scores before the softmax, as src_mask[:, None, None, :] (Lesson 4, section 2)")
    if any(matches(A, v(mask="queries", zero_empty=z), 1, tol) for z in (True, False)):
        fail("the padding mask was put on the query axis (src_mask[:, None, :, None]): it marks padded SOURCE "
             "positions, which are the keys, the last axis of the (B, H, T, S) scores: src_mask[:, None, None, :]")
    if matches(A, v(softmax_over="queries"), 1, tol):
        fail("the softmax ran over the queries (axis -2): each row of A, one decoder query, must sum to 1 over the "
             "S source positions (the keys, the last axis)")
    if matches(A, v(scale=False), 1, tol):
        fail("the scores miss the 1/sqrt(Dh) of scaled dot-product attention: scores = Q K^T / sqrt(Dh) + mask")
    # the same mistakes, recognised from the weights alone
    live = problem.lengths > 0
    on_padding = np.where(problem.padded[:, None, None, :] & live[:, None, None, None], np.abs(A), 0.0)
    if on_padding.max() > 1e-6:
        b, h, t, s = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
        fail(f"query {t} of example {b} (head {h}) gives weight {on_padding.max():.3g} to source position {s}, which "
             f"is padding (that source has {problem.lengths[b]} real tokens): the padding mask must block it")
    if T > 1:
        future = np.arange(S)[None, :] > np.arange(T)[:, None]  # (T, S) s > t
        if future.any() and np.abs(A[..., future]).max() < 1e-9 and np.abs(A_e[..., future]).max() > 1e-3:
            fail("no query t gives any weight to a source position s > t: that is a causal mask, and cross-attention "
                 "has none (Lesson 4, section 2)")
        sums = A.sum(axis=-1)[live]  # (B_live, H, T)
        if not close(sums, np.ones_like(sums), rtol=0, atol=1e-6):
            fail(f"the rows of A do not sum to 1 (they sum to {sums.min():.4g} .. {sums.max():.4g}): each query's "
                 f"weights are a softmax over the S source positions")


def check_forward(out, problem: Problem) -> None:
    """The student's (Y, A) against minitf's, naming the mistake where it is recognised."""
    B, T, S, D, Dh = problem.dims
    H, dtype = problem.H, problem.X_q.dtype
    tol = FORWARD_TOL[np.dtype(dtype)]
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"cross_attention_forward: expected a pair (Y, A), received {type(out).__name__}")
    Y, A = out
    shape = getattr(A, "shape", None)
    if T != S and shape == (B, H, T, T):
        fail(f"A has shape (B, H, T, T) = {shape}: the keys came from the decoder stream. The weights of cross-"
             f"attention are T x S, queries from the decoder (T = {T}), keys from the encoder (S = {S})")
    if T != S and shape == (B, H, S, T):
        fail(f"A has shape (B, H, S, T) = {shape}: its rows must be the T decoder queries, its columns the S source "
             f"positions -- (B, H, T, S) = {(B, H, T, S)}")
    if T != S and getattr(Y, "shape", None) == (B, S, D):
        fail(f"Y has shape (B, S, D) = {(B, S, D)}: the output has the decoder's shape (B, T, D) = {(B, T, D)}, one "
             f"row per query, so the block can add it to the decoder stream")
    Y = as_array("Y", Y, shape=(B, T, D), kind="f", dtype=dtype)
    A = as_array("A", A, shape=(B, H, T, S), kind="f", dtype=dtype)
    Y_e, A_e, _, _ = minitf_forward(problem)
    if not close(A, A_e, **tol):
        diagnose_weights(A, A_e, problem, tol)
        expect_close("A (the attention weights)", A, A_e, **tol,
                     hint="A = softmax(Q K^T / sqrt(Dh) + src_mask[:, None, None, :]) over the source positions")
    expect_close("Y", Y, Y_e, **tol, hint="the weights are right: merge the heads side by side, (B, H, T, Dh) -> "
                                          "(B, T, H, Dh) -> (B, T, D), then Y = O @ W_o + b_o")


@task1
def test_forward_when_T_equals_S(submission, homework_seed):
    """T = S = 5: a causal mask, or the padding on the query axis, would fit the shapes; it must not be there."""
    cross_attention_forward = submission.function("cross_attention_forward")
    for k, lengths in enumerate([[5, 3, 2], [5, 1, 4]]):
        problem = make_problem(homework_seed + 10 + k, B=3, T=5, S=5, lengths=lengths)
        check_forward(call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task1
def test_forward_when_T_differs_from_S(submission, homework_seed):
    """A shorter and a longer target than the source: the weights are T x S."""
    cross_attention_forward = submission.function("cross_attention_forward")
    sizes = shapes(homework_seed, [(3, 3, 7, 2, 4), (3, 6, 4, 4, 2), (1, 2, 5, 2, 3)], B=(1, 4), T=(1, 7), S=(1, 8),
                   H=(1, 4), Dh=(1, 4), rule=lambda B, T, S, H, Dh: T != S)  # a batch of one too
    for k, (B, T, S, H, Dh) in enumerate(sizes):
        problem = make_problem(homework_seed + 20 + k, B=B, T=T, S=S, D=H * Dh, H=H)
        check_forward(call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task1
def test_forward_keeps_float32(submission, homework_seed):
    cross_attention_forward = submission.function("cross_attention_forward")
    problem = make_problem(homework_seed + 30, B=2, T=4, S=6, D=12, H=3, dtype=np.float32)
    check_forward(call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task1
def test_padding_cannot_leak_into_the_output(submission, homework_seed):
    """Large noise written into the encoder output at padded positions changes nothing."""
    cross_attention_forward = submission.function("cross_attention_forward")
    problem = make_problem(homework_seed + 40, B=3, T=4, S=7, lengths=[7, 4, 2])
    Y, _ = call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY)
    noisy = problem.X_kv.copy()
    rng = np.random.default_rng(homework_seed + 41)
    noisy[problem.padded] = rng.normal(0.0, 100.0, size=(int(problem.padded.sum()), problem.dims[3]))  # (n_pad, D)
    changed = problem._replace(X_kv=noisy)
    out = call(cross_attention_forward, *changed.args(), names=FORWARD_ARGS, why=READ_ONLY)
    Y = as_array("Y", Y, shape=problem.X_q.shape, kind="f")
    same_shape = isinstance(out, (tuple, list)) and len(out) == 2 and getattr(out[0], "shape", None) == Y.shape
    if same_shape and not close(out[0], Y, **FORWARD_TOL[np.dtype(np.float64)]):
        diff = float(np.abs(np.asarray(out[0], dtype=np.float64) - Y).max())
        fail(f"writing noise into the encoder output at PADDED source positions changed Y (by up to {diff:.3g}): "
             f"padding leaks into the output; the mask must give those positions exactly zero weight")
    check_forward(out, changed)


@task1
def test_source_without_a_real_token(submission, homework_seed):
    """An example whose source is all padding gets zero weights (never NaN): its output rows are b_o."""
    cross_attention_forward = submission.function("cross_attention_forward")
    problem = make_problem(homework_seed + 50, B=3, T=3, S=5, lengths=[5, 0, 2])
    check_forward(call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


def weights_if_shaped(out, problem: Problem):
    """The A of the student's (Y, A) as float64 when it has the right shape, else None (check_forward says why)."""
    B, T, S, D, Dh = problem.dims
    if isinstance(out, (tuple, list)) and len(out) == 2 and getattr(out[1], "shape", None) == (B, problem.H, T, S):
        return np.asarray(out[1], dtype=np.float64)
    return None


@task1
def test_padding_anywhere_in_the_source(submission, homework_seed):
    """src_mask marks padding wherever it is: a source padded at the start (its real tokens last), and the others'
    padding scattered among their real tokens."""
    cross_attention_forward = submission.function("cross_attention_forward")
    (B, T, S, H, Dh), = shapes(homework_seed, [(3, 4, 6, 2, 3)], B=(1, 4), T=(1, 6), S=(2, 8), H=(1, 4), Dh=(1, 4))
    rng = np.random.default_rng(homework_seed + 150)
    lengths = [int(rng.integers(1, S))] + [int(n) for n in rng.integers(1, S + 1, size=B - 1)]  # example 0: 1 .. S-1
    plain = make_problem(homework_seed + 151, B=B, T=T, S=S, D=H * Dh, H=H, lengths=lengths)
    problem = with_padding_anywhere(plain, homework_seed + 152)
    out = call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY)
    A = weights_if_shaped(out, problem)
    if A is not None:
        for b in range(B):
            if problem.lengths[b] > 0 and problem.padded[b, 0] and np.abs(A[b]).max() < 1e-9:
                fail(f"example {b}'s source starts with padding but has {problem.lengths[b]} real tokens after it, and "
                     f"its queries gave them no weight at all, as if the source were empty. A source is empty only "
                     f"when its WHOLE src_mask row is MASK_VALUE: padding need not be at the end, so do not judge a "
                     f"source from one position (src_mask marks padding wherever it is)")
    check_forward(out, problem)


@task1
def test_forward_at_large_scores(submission, homework_seed):
    """A key bias that shifts every score of a query by up to ~1000 changes neither Y nor A (the softmax ignores a
    shift of all its inputs), though exp overflows at such scores."""
    cross_attention_forward = submission.function("cross_attention_forward")
    sizes = shapes(homework_seed, [(3, 4, 6, 2, 4), (1, 3, 5, 4, 2)], B=(1, 4), T=(1, 6), S=(1, 8), H=(1, 4),
                   Dh=(1, 4))
    for k, (B, T, S, H, Dh) in enumerate(sizes):
        plain = make_problem(homework_seed + 160 + k, B=B, T=T, S=S, D=H * Dh, H=H)
        problem = with_large_scores(plain)
        out = call(cross_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY)
        A = weights_if_shaped(out, problem)
        tol = FORWARD_TOL[np.dtype(np.float64)]
        if A is not None and not close(A, minitf_forward(problem)[1], **tol):
            plain_out = call(cross_attention_forward, *plain.args(), names=FORWARD_ARGS, why=READ_ONLY)
            A_plain = weights_if_shaped(plain_out, plain)
            if A_plain is not None and close(A_plain, minitf_forward(plain)[1], **tol):
                fail(overflow_message("the weights A are"))
        check_forward(out, problem)
