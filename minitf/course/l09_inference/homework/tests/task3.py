"""Homework 9, task 9.3 (the pointer-generator's mixture, forward and backward): the public tests.

Expected values come from minitf's pointer-generator (``minitf.models.pointer_generator``):
its ``scatter_add`` and ``gather``, and its ``CopyHead`` (whose forward computes exactly this
mixture from logits and p_gen's pre-activation, and whose backward returns the gradients on
those).  The backward is checked in float64 at rtol 1e-11: a derivative written out agrees
with minitf's to about 1e-16; finite differences of the forward reach about 1e-10 at best.

The mixture is linear in P_vocab and a (affine in p_gen), so a difference quotient with a
step of 1 is exact but for the rounding of the sum <dP, P> it differentiates: the backward
tests give each position's row of dP its own scale, over eight orders of magnitude (as
-1 / (n P_t(y_t)) varies in training), so that this rounding, set by the largest rows,
swamps the gradient of the smallest.  A derivative written out works position by position
and keeps its relative precision everywhere."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.layers.softmax import softmax, softmax_backward
from minitf.models.pointer_generator import CopyHead, gather, scatter_add

from .common import first_index

HOMEWORK = "hw09"
task3 = pytest.mark.hw09_task3
TOL64 = {"rtol": 1e-11, "atol": 1e-14}
TOL32 = {"rtol": 1e-5, "atol": 1e-7}


# =====================================================================================
# Task 9.3 -- problems and minitf's answers
# =====================================================================================
def mixture_problem(seed: int, B=3, T=4, S=7, V=8, n_oov=3, dtype=np.float64, spread=False):
    """P_vocab, p_gen, a, src_ext, V_ext: every example's source repeats a vocabulary token and a
    source-only token (extended id >= V), and ends in padding (a = 0 there, src_ext = 0, the pad id).
    ``spread``: each position's row of dP on its own scale, over eight orders of magnitude (1e-4 .. 1e4)."""
    rng = np.random.default_rng(seed)
    V_ext = V + n_oov
    src_ext = rng.integers(3, V_ext, size=(B, S))
    src_ext[:, 1] = src_ext[:, 0] = rng.integers(3, V, size=B)  # a vocabulary token, twice
    src_ext[:, 3] = src_ext[:, 4] = rng.integers(V, V_ext, size=B)  # a source-only token, twice
    lengths = rng.integers(S - 2, S + 1, size=B)
    lengths[0] = S
    pad = np.arange(S)[None, :] >= lengths[:, None]  # (B, S)
    src_ext[pad] = 0
    P_vocab = softmax(rng.normal(0.0, 1.5, size=(B, T, V)))
    scores = rng.normal(0.0, 1.5, size=(B, T, S)) - 1e9 * pad[:, None, :]
    a = softmax(scores) * ~pad[:, None, :]
    p_gen = rng.uniform(0.05, 0.95, size=(B, T))
    dP = rng.normal(size=(B, T, V_ext))
    if spread:
        # each position's row of dL/dP on its own scale, 1e-4 .. 1e4 in every problem
        dP *= 10.0 ** rng.permutation(np.linspace(-4.0, 4.0, B * T)).reshape(B, T, 1)
    return (P_vocab.astype(dtype), p_gen.astype(dtype), a.astype(dtype), src_ext.astype(np.int64), V_ext,
            dP.astype(dtype))


def minitf_forward(P_vocab, p_gen, a, src_ext, V_ext):
    """P with minitf's scatter_add (what CopyHead.forward does after its softmax and sigmoid)."""
    V = P_vocab.shape[-1]
    P = scatter_add((1.0 - p_gen)[..., None] * a, src_ext, V_ext)
    P[..., :V] += p_gen[..., None] * P_vocab
    return P


def minitf_backward(dP, P_vocab, p_gen, a, src_ext):
    """(dP_vocab, dp_gen, da) with minitf's gather (CopyHead.backward's first lines)."""
    V = P_vocab.shape[-1]
    dP_src = gather(dP, src_ext)
    return (p_gen[..., None] * dP[..., :V], (dP[..., :V] * P_vocab).sum(-1) - (dP_src * a).sum(-1),
            (1.0 - p_gen)[..., None] * dP_src)


def overwriting_scatter(values, src_ext, V_ext):
    """What ``out[b, t, ids] += values`` gives: a repeated index keeps one value, not the sum."""
    B, T, _ = values.shape
    out = np.zeros((B, T, V_ext), dtype=values.dtype)
    out[np.arange(B)[:, None, None], np.arange(T)[None, :, None], src_ext[:, None, :]] += values
    return out


def repeated_tokens(src_ext) -> str:
    return ", ".join(f"example {b}: {[int(w) for w in np.unique(r[r > 0]) if (r == w).sum() > 1]}"
                     for b, r in enumerate(src_ext))


# =====================================================================================
# Task 9.3 -- checks
# =====================================================================================
def call_forward(fn, P_vocab, p_gen, a, src_ext, V_ext):
    out = call(fn, P_vocab, p_gen, a, src_ext, V_ext, names=["P_vocab", "p_gen", "a", "src_ext"])
    B, T, _ = P_vocab.shape
    return as_array("P", out, shape=(B, T, V_ext), kind="f", dtype=P_vocab.dtype)


def diagnose_forward(P, P_vocab, p_gen, a, src_ext, V_ext) -> str | None:
    tol = TOL64 if P.dtype == np.float64 else TOL32
    V = P_vocab.shape[-1]
    gen = np.zeros_like(P)
    gen[..., :V] = p_gen[..., None] * P_vocab
    if close(P, gen + scatter_add(a, src_ext, V_ext), **tol):
        return ("the copy part misses its weight (1 - p_gen): P = p_gen P_vocab + (1 - p_gen) sum_{i: x_i = w} a_i. "
                "Without it each row sums to 2 - p_gen, not 1")
    if close(P, gen + overwriting_scatter((1.0 - p_gen)[..., None] * a, src_ext, V_ext), **tol):
        return (f"a token that occurs at several source positions gets the attention of only one of them: the "
                f"scatter overwrites instead of adding (out[..., ids] += a keeps one value per repeated index). "
                f"Repeated tokens here: {repeated_tokens(src_ext)}. Use np.add.at, which adds every occurrence")
    swapped = scatter_add(p_gen[..., None] * a, src_ext, V_ext)
    swapped[..., :V] += (1.0 - p_gen)[..., None] * P_vocab
    if close(P, swapped, **tol):
        return "p_gen and 1 - p_gen are swapped: p_gen weighs the vocabulary distribution, 1 - p_gen the copy"
    sums = P.sum(-1)
    if not np.allclose(sums, 1.0, atol=1e-5):
        b, t = first_index(~np.isclose(sums, 1.0, atol=1e-5))
        return f"row ({b}, {t}) of P sums to {sums[b, t]:.6g}, not 1: P is a mixture of two distributions"
    return None


def check_forward(fn, P_vocab, p_gen, a, src_ext, V_ext, what):
    P = call_forward(fn, P_vocab, p_gen, a, src_ext, V_ext)
    expected = minitf_forward(P_vocab, p_gen, a, src_ext, V_ext)
    tol = TOL64 if P.dtype == np.float64 else TOL32
    if not close(P, expected, **tol):
        mistake = diagnose_forward(P, P_vocab, p_gen, a, src_ext, V_ext)
        if mistake:
            fail(f"copy_mixture_forward ({what}): {mistake}")
    expect_close(f"P ({what})", P, expected, **tol,
                 hint="P = p_gen P_vocab (on ids < V) + (1 - p_gen) scatter_add(a) over the extended ids")
    return P


def call_backward(fn, dP, P_vocab, p_gen, a, src_ext):
    out = call(fn, dP, P_vocab, p_gen, a, src_ext, names=["dP", "P_vocab", "p_gen", "a", "src_ext"], returns=3)
    return (as_array("dP_vocab", out[0], shape=P_vocab.shape, kind="f", dtype=dP.dtype),
            as_array("dp_gen", out[1], shape=p_gen.shape, kind="f", dtype=dP.dtype),
            as_array("da", out[2], shape=a.shape, kind="f", dtype=dP.dtype))


def diagnose_backward(grads, dP, P_vocab, p_gen, a, src_ext) -> str | None:
    _, dp_gen, da = grads
    e_vocab, e_gen, e_a = minitf_backward(dP, P_vocab, p_gen, a, src_ext)
    V = P_vocab.shape[-1]
    if close(da, gather(dP, src_ext), **TOL64) and not close(da, e_a, **TOL64):
        return "da misses the factor (1 - p_gen): the copy part is (1 - p_gen) scatter_add(a)"
    if close(dp_gen, (dP[..., :V] * P_vocab).sum(-1), **TOL64) and not close(dp_gen, e_gen, **TOL64):
        return ("dp_gen misses the copy part's term: p_gen also enters (1 - p_gen) scatter_add(a), which adds "
                "- sum_i dP[ids_i] a_i")
    # close relative to the largest entry (the rounding of finite differences is set by the largest rows of dP)
    err = max(float(np.max(np.abs(g - e)) / max(float(np.max(np.abs(e))), 1e-300))
              for g, e in zip(grads, (e_vocab, e_gen, e_a)))
    if err < 1e-4:
        return (f"the gradients agree with minitf's backward to about {err:.1g} of their largest entry, not entry "
                f"by entry (the small ones are off): the precision of finite differences, whose rounding is set by "
                f"the largest terms, not of a derivative written out in float64 (about 1e-16 of each entry). The "
                f"task is the backward")
    return None


def check_backward(fn, dP, P_vocab, p_gen, a, src_ext, what):
    grads = call_backward(fn, dP, P_vocab, p_gen, a, src_ext)
    expected = minitf_backward(dP, P_vocab, p_gen, a, src_ext)
    if not all(close(g, e, **TOL64) for g, e in zip(grads, expected)):
        mistake = diagnose_backward(grads, dP, P_vocab, p_gen, a, src_ext)
        if mistake:
            fail(f"copy_mixture_backward ({what}): {mistake}")
    hints = ("dP_vocab = p_gen dP[..., :V]",
             "dp_gen = sum_w dP[w] P_vocab[w] - sum_i dP[ids_i] a_i",
             "da_i = (1 - p_gen) dP[ids_i]: the scatter-add's backward is a gather")
    for name, g, e, hint in zip(("dP_vocab", "dp_gen", "da"), grads, expected, hints):
        expect_close(f"{name} ({what})", g, e, **TOL64, hint=hint)
    return grads


# =====================================================================================
# Task 9.3 -- the tests
# =====================================================================================
@task3
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mixture_forward_matches_minitf(submission, homework_seed, dtype):
    """Repeated tokens (in and out of the vocabulary) and padded source positions; rtol 1e-11 (float64)."""
    forward = submission.function("copy_mixture_forward")
    for k, (B, T, S, V) in enumerate(shapes(homework_seed, [(3, 4, 7, 8), (1, 3, 5, 6)], B=(1, 4), T=(1, 6), S=(5, 10),
                                            V=(4, 12))):  # a batch of one too
        P_vocab, p_gen, a, src_ext, V_ext, _ = mixture_problem(homework_seed + 300 + (dtype == "float32") + 5 * k, B=B,
                                                               T=T, S=S, V=V, dtype=np.dtype(dtype))
        check_forward(forward, P_vocab, p_gen, a, src_ext, V_ext, dtype)


@task3
def test_mixture_forward_agrees_with_the_copy_head(submission, homework_seed):
    """minitf's CopyHead computes P from logits and p_gen's inputs: the same P from its P_vocab and p_gen."""
    forward = submission.function("copy_mixture_forward")
    P_vocab, p_gen, a, src_ext, V_ext, _ = mixture_problem(homework_seed + 310, B=2, T=5)
    head, logits, ctx = copy_head_inputs(P_vocab, p_gen, homework_seed)
    P_head, cache = head.forward(logits, ctx, np.zeros_like(ctx), np.zeros_like(ctx), a, src_ext, V_ext)
    P = call_forward(forward, cache.P_vocab, cache.p_gen, a, src_ext, V_ext)
    expect_close("P against minitf's CopyHead.forward", P, P_head, **TOL64)


def copy_head_inputs(P_vocab, p_gen, seed):
    """A CopyHead (D = 1, w_h = 1, the rest 0) and inputs giving it these P_vocab and p_gen."""
    head = CopyHead(1, rng=np.random.default_rng(seed), dtype=np.float64)
    head.params["w_h"][:] = 1.0
    head.params["w_s"][:] = head.params["w_x"][:] = head.params["b_ptr"][:] = 0.0
    return head, np.log(P_vocab), np.log(p_gen / (1.0 - p_gen))[..., None]  # z = logit(p_gen)


@task3
def test_mixture_backward_matches_minitf(submission, homework_seed):
    """float64, rtol 1e-11 against minitf's gather-based backward."""
    backward = submission.function("copy_mixture_backward")
    for k, (B, T, S, V) in enumerate(shapes(homework_seed, [(3, 4, 7, 8), (1, 3, 5, 6)], B=(1, 4), T=(1, 6), S=(5, 10),
                                            V=(4, 12))):  # a batch of one too
        P_vocab, p_gen, a, src_ext, _, dP = mixture_problem(homework_seed + 320 + 5 * k, B=B, T=T, S=S, V=V,
                                                            spread=True)
        check_backward(backward, dP, P_vocab, p_gen, a, src_ext, "float64")


@task3
def test_mixture_backward_agrees_with_the_copy_head(submission, homework_seed):
    """Chained into the copy head's parameters (softmax backward, sigmoid's derivative), the student's
    gradients give minitf's CopyHead.backward: dlogits, dz (p_gen's pre-activation) and da."""
    backward = submission.function("copy_mixture_backward")
    P_vocab, p_gen, a, src_ext, V_ext, dP = mixture_problem(homework_seed + 330, B=2, T=5, spread=True)
    head, logits, ctx = copy_head_inputs(P_vocab, p_gen, homework_seed)
    _, cache = head.forward(logits, ctx, np.zeros_like(ctx), np.zeros_like(ctx), a, src_ext, V_ext)
    dlogits, dctx, _, _, da_head = head.backward(dP, cache)
    dP_vocab, dp_gen, da = check_backward(backward, dP, cache.P_vocab, cache.p_gen, a, src_ext, "the copy head's")
    expect_close("softmax_backward(dP_vocab, P_vocab) against CopyHead's dlogits",
                 softmax_backward(dP_vocab, cache.P_vocab), dlogits, **TOL64)
    expect_close("dp_gen * p_gen * (1 - p_gen) against CopyHead's dL/dz", dp_gen * cache.p_gen * cache.p_copy,
                 dctx[..., 0], **TOL64)
    expect_close("da against CopyHead's", da, da_head, **TOL64)


@task3
def test_mixture_backward_float32_in_float32_out(submission, homework_seed):
    backward = submission.function("copy_mixture_backward")
    P_vocab, p_gen, a, src_ext, _, dP = mixture_problem(homework_seed + 340, dtype=np.float32)
    grads = call_backward(backward, dP, P_vocab, p_gen, a, src_ext)
    for name, g, e in zip(("dP_vocab", "dp_gen", "da"), grads, minitf_backward(dP, P_vocab, p_gen, a, src_ext)):
        expect_close(f"{name} (float32)", g, e, **TOL32)
