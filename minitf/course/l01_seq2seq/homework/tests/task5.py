"""Homework 1, task 1.5 (additive attention over the encoder states): the public tests.

minitf's answer is ``minitf.rnn.AdditiveAttention`` holding the problem's weights: its
keys projected once (``project_keys``), its ``forward`` for one decoder step, and its
``backward`` whose key and value gradients, ``project_keys_backward`` added, make dL/dH_enc.
The classic mistakes are recognised by computing what each one gives
(:func:`attention_variant`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail, softmax_overflow
from minitf.grading.problems import shapes
from minitf.layers import softmax
from minitf.masks import MASK_VALUE
from minitf.rnn import AdditiveAttention

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, gradient_dict, load, matches_variant, pair, rng_for,
                     uniform_params, wrong_keys)

HOMEWORK = "hw01"
task5 = pytest.mark.hw01_task5
FORWARD_ARGS = ["s", "H_enc", "params", "mask"]
BACKWARD_ARGS = ["dcontext"] + FORWARD_ARGS
GRAD_HINTS = {
    "ds": "ds = (sum_j dpre_j) W_a^T, dpre = de v * (1 - u^2)",
    "dH_enc": "dH_enc = a_j dcontext (the values) + dpre_j U_a^T (the keys)",
    "dW_a": "dW_a = s^T (sum_j dpre_j)", "dU_a": "dU_a = sum over b and j of h_j^T dpre_j",
    "dv": "dv = sum over b and j of de_j u_j",
}


class Problem(NamedTuple):
    s: np.ndarray  # (B, Hq) the query
    H_enc: np.ndarray  # (B, S, He) the encoder states
    params: dict  # W_a (Hq, A), U_a (He, A), v (A,)
    mask: np.ndarray  # (B, S) additive
    lengths: np.ndarray  # (B,) real source positions (0: none)

    @property
    def dims(self) -> tuple:
        """(B, S, Hq, He, A)"""
        B, S, He = self.H_enc.shape
        return B, S, self.s.shape[1], He, self.params["v"].shape[0]

    @property
    def padded(self) -> np.ndarray:
        """(B, S) True at padded source positions."""
        return self.mask <= MASK_VALUE / 2

    def args(self) -> tuple:
        return self.s, self.H_enc, self.params, self.mask

    def describe(self) -> str:
        B, S, Hq, He, A = self.dims
        return f"B={B}, S={S}, Hq={Hq}, He={He}, A={A}, source lengths {self.lengths.tolist()}"


def make_problem(seed: int, *, B=3, S=5, Hq=4, He=6, A=3, lengths=None, dtype=np.float64) -> Problem:
    """Weights U(-1, 1) (scores of a few units: weights neither flat nor one-hot); ``lengths``
    defaults to one full source, one of length 1 and the rest random."""
    rng = rng_for(seed)
    params = uniform_params(rng, {"W_a": (Hq, A), "U_a": (He, A), "v": (A,)}, 1.0, dtype)
    params["v"] = params["v"] * 2.0
    s = rng.normal(size=(B, Hq)).astype(dtype)
    H_enc = rng.normal(size=(B, S, He)).astype(dtype)
    if lengths is None:
        lengths = [S, 1] + list(rng.integers(1, S + 1, size=max(B - 2, 0)))  # B = 1: the full source alone
    lengths = np.asarray(lengths[:B], dtype=np.int64)
    mask = np.where(np.arange(S)[None, :] < lengths[:, None], 0.0, MASK_VALUE).astype(dtype)  # (B, S)
    return Problem(s, H_enc, params, mask, lengths)


# ---- minitf's answers ----------------------------------------------------------------------------------------
def minitf_attention(problem: Problem) -> AdditiveAttention:
    B, S, Hq, He, A = problem.dims
    attn = AdditiveAttention(Hq, He, A, rng=np.random.default_rng(0), dtype=problem.s.dtype)
    load(attn, problem.params)
    return attn


def minitf_forward(problem: Problem) -> tuple:
    """(context (B, He), a (B, S))."""
    attn = minitf_attention(problem)
    keys, _ = attn.project_keys(problem.H_enc)
    context, cache = attn.forward(problem.s, keys, problem.H_enc, problem.mask)
    return context, cache.a


def minitf_backward(problem: Problem, dcontext) -> dict:
    attn = minitf_attention(problem)
    keys, c_keys = attn.project_keys(problem.H_enc)
    _, cache = attn.forward(problem.s, keys, problem.H_enc, problem.mask)
    attn.zero_grad()
    ds, dkeys, dvalues = attn.backward(dcontext, cache)
    dH_enc = dvalues + attn.project_keys_backward(dkeys, c_keys)  # the states were the values and made the keys
    out = {"ds": ds, "dH_enc": dH_enc}
    out.update({"d" + name: attn.grads[name].copy() for name in ("W_a", "U_a", "v")})
    return out


# ---- what the classic mistakes compute -----------------------------------------------------------------------
def attention_variant(problem: Problem, dcontext=None, *, softmax_axis: int = -1, masked: bool = True,
                      tanh_prime: bool = True, paths: str = "both", zero_empty: bool = True):
    """Additive attention with one thing changed: (context, a, grads or None).

    softmax_axis: -1 over the S positions (right) or 0 over the batch; masked: the mask added
    (right) or not; tanh_prime: tanh differentiated (right) or not; paths: dH_enc through
    "both" the values and the keys (right), or "values" / "keys" alone; zero_empty: a row
    with no real position gets zero weights (right) or the softmax's.
    """
    p = problem.params
    s, H_enc, mask = problem.s, problem.H_enc, problem.mask
    u = np.tanh((s @ p["W_a"])[:, None, :] + H_enc @ p["U_a"])  # (B, S, A)
    e = u @ p["v"] + (mask if masked else 0.0)  # (B, S)
    if softmax_axis == -1:
        a = softmax(e)
    else:
        a = softmax(e.T).T
    if zero_empty and masked:
        a = a * (mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2)
    context = np.einsum("bs,bsh->bh", a, H_enc)
    if dcontext is None:
        return context, a, None
    da = np.einsum("bsh,bh->bs", H_enc, dcontext)
    dvalues = a[:, :, None] * dcontext[:, None, :]
    if softmax_axis == -1:
        de = a * (da - (da * a).sum(axis=-1, keepdims=True))
    else:
        de = a * (da - (da * a).sum(axis=0, keepdims=True))
    dv = np.einsum("bsa,bs->a", u, de)
    dpre = de[:, :, None] * p["v"] * ((1.0 - u ** 2) if tanh_prime else 1.0)
    dq = dpre.sum(axis=1)
    dkeys = dpre @ p["U_a"].T
    dH_enc = {"both": dvalues + dkeys, "values": dvalues, "keys": dkeys}[paths]
    grads = {"ds": dq @ p["W_a"].T, "dH_enc": dH_enc, "dW_a": s.T @ dq,
             "dU_a": np.einsum("bsh,bsa->ha", H_enc, dpre), "dv": dv}
    return context, a, grads


# =====================================================================================
# Task 1.5 -- additive attention over the encoder states
# =====================================================================================
def check_forward(out, problem: Problem) -> None:
    B, S, Hq, He, A = problem.dims
    dtype = problem.s.dtype
    tol = FORWARD_TOL[np.dtype(dtype)]
    context, a = pair(out, "additive_attention_forward", "(context, a)")
    context = as_array("context", context, shape=(B, He), kind="f", dtype=dtype)
    a = as_array("a", a, shape=(B, S), kind="f", dtype=dtype)
    c_e, a_e = minitf_forward(problem)
    if not np.all(np.isfinite(a)) or not np.all(np.isfinite(context)):
        fail("the weights or the context hold NaN or inf: keep the mask finite (MASK_VALUE = -1e9, never -inf), "
             "and give a row with no real source position all-zero weights")
    if not close(a, a_e, **tol):
        if close(a, attention_variant(problem, softmax_axis=0)[1], **tol):
            fail("the softmax ran over the batch axis (axis 0): each row -- one example, one decoder step -- must "
                 "share its weight among ITS S source positions, so the softmax runs over the last axis; yours "
                 "makes each source position's weights sum to 1 over the examples of the batch")
        if any(close(a, attention_variant(problem, masked=False, zero_empty=z)[1], **tol) for z in (True, False)):
            fail(f"padding was not masked: the weights give padded source positions a share (source lengths "
                 f"{problem.lengths.tolist()}). Add the mask to the scores before the softmax, a = softmax(e + "
                 f"mask): MASK_VALUE at a padded position makes its weight exactly 0")
        for b in np.flatnonzero(problem.lengths == 0):
            if np.abs(a[b]).max() > 1e-6:
                fail(f"row {b} has no real source position (its mask is all MASK_VALUE): its weights must be all "
                     f"zero (and its context zero), not a softmax over padding; yours have max "
                     f"{np.abs(a[b]).max():.3g}")
        on_padding = np.abs(a) * problem.padded * (problem.lengths > 0)[:, None]
        if on_padding.max() > 1e-6:
            b, j = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
            fail(f"padding was not masked: row {b} gives weight {on_padding.max():.3g} to source position {j}, which "
                 f"is padding (that source has {problem.lengths[b]} real positions)")
        expect_close("a", a, a_e, **tol, hint=f"a = softmax(v . tanh(s W_a + h_j U_a) + mask) over the S positions "
                                              f"({problem.describe()})")
    expect_close("context", context, c_e, **tol, hint=f"context = sum_j a_j h_j ({problem.describe()})")


@task5
def test_additive_attention_forward(submission, homework_seed):
    """context and a in float64, on four shapes, every source padded but the first: a batch of one
    row, and sources of one position."""
    additive_attention_forward = submission.function("additive_attention_forward")
    for k, (B, S, Hq, He, A) in enumerate(shapes(homework_seed, [(3, 5, 4, 6, 3), (4, 3, 2, 2, 5), (1, 4, 3, 2, 2),
                                                                 (3, 1, 2, 3, 4)], B=(1, 5), S=(1, 6),
                                                 Hq=(1, 5), He=(1, 6), A=(1, 5))):
        problem = make_problem(homework_seed + 400 + k, B=B, S=S, Hq=Hq, He=He, A=A)
        check_forward(call(additive_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


@task5
def test_additive_attention_forward_empty_source_and_float32(submission, homework_seed):
    """A row with no real source position gets zero weights and a zero context (never NaN); float32 stays float32."""
    additive_attention_forward = submission.function("additive_attention_forward")
    problem = make_problem(homework_seed + 410, B=3, S=4, lengths=[4, 0, 2])
    check_forward(call(additive_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)
    problem = make_problem(homework_seed + 411, B=2, S=4, Hq=3, He=3, A=2, lengths=[4, 2], dtype=np.float32)
    check_forward(call(additive_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY), problem)


def sharp_problem(seed: int, *, top: float = 1500.0, **sizes) -> Problem:
    """A problem whose v is scaled up until the largest score of a real source position is ``top``
    (sharp attention, as training can make it), beyond where exp overflows (v's sign flipped if every
    real score is negative)."""
    problem = make_problem(seed, **sizes)
    p = problem.params
    e = (np.tanh((problem.s @ p["W_a"])[:, None, :] + problem.H_enc @ p["U_a"]) @ p["v"])[~problem.padded]
    scale = top / e.max() if e.max() > 0 else -top / e.min()  # the real scores' maximum: top
    return problem._replace(params=dict(p, v=p["v"] * scale))


@task5
def test_additive_attention_forward_sharp_scores(submission, homework_seed):
    """A large v (sharp attention): the top score reaches 1500, beyond where exp overflows;
    the weights and the context stay finite (an empty source in the batch too)."""
    additive_attention_forward = submission.function("additive_attention_forward")
    B, S, Hq, He, A = shapes(homework_seed, [(3, 5, 4, 6, 3)], B=(3, 5), S=(2, 6), Hq=(1, 5), He=(1, 6),
                             A=(1, 5))[0]
    problem = sharp_problem(homework_seed + 415, B=B, S=S, Hq=Hq, He=He, A=A, lengths=[S, 0] + [2] * (B - 2))
    context, a = pair(call(additive_attention_forward, *problem.args(), names=FORWARD_ARGS, why=READ_ONLY),
                      "additive_attention_forward", "(context, a)")
    context = as_array("context", context, shape=(B, He), kind="f", dtype=problem.s.dtype)
    a = as_array("a", a, shape=(B, S), kind="f", dtype=problem.s.dtype)
    if not (np.isfinite(a).all() and np.isfinite(context).all()):
        fail(softmax_overflow("the weights or the context hold NaN or inf with scores e of the size of 1500 (a large "
                              "v, sharp attention)", "e", maximum="each row's maximum of e + mask",
                              also="A row with no real position gets zero weights"))
    check_forward((context, a), problem)


def backward(fn, problem: Problem, seed: int):
    B, S, Hq, He, A = problem.dims
    dcontext = rng_for(seed).normal(size=(B, He))
    out = call(fn, dcontext, *problem.args(), names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"ds": (B, Hq), "dH_enc": (B, S, He), "dW_a": (Hq, A), "dU_a": (He, A), "dv": (A,)}
    return gradient_dict(out, "additive_attention_backward", shapes), minitf_backward(problem, dcontext), dcontext


def diagnose_backward(g: dict, e: dict, problem: Problem, dcontext, keys) -> None:
    """Fail naming the classic mistake that ``g`` computes in ``keys``, if one is recognised."""
    wrong = [k for k in wrong_keys(g, e) if k in keys]
    if not wrong:
        return

    def variant(**kw):
        return attention_variant(problem, dcontext, **kw)[2]

    if "dH_enc" in wrong:
        if close(g["dH_enc"], variant(paths="values")["dH_enc"], **BACKWARD_TOL):
            fail("dH_enc is only the gradient through the values (a_j dcontext): the gradient to the keys is "
                 "missing. The encoder states also made the keys h_j U_a inside the scores, so "
                 "dH_enc = a_j dcontext + dpre_j U_a^T -- the score's path is how the decoder's needs reach the "
                 "encoder (Lesson 1, section 6)")
        if close(g["dH_enc"], variant(paths="keys")["dH_enc"], **BACKWARD_TOL):
            fail("dH_enc is only the gradient through the keys: the context c = sum_j a_j h_j averages the encoder "
                 "states themselves, so dH_enc also holds a_j dcontext (the values' path)")
        on_padding = np.abs(g["dH_enc"]) * problem.padded[:, :, None]
        if on_padding.max() > BACKWARD_TOL["atol"]:
            b, j, _ = np.unravel_index(int(np.argmax(on_padding)), on_padding.shape)
            fail(f"dH_enc reaches padded source positions (up to {on_padding.max():.3g}, at row {b}, position {j}): "
                 f"they got exactly zero weight in the forward, so no gradient flows back to them. Recompute the "
                 f"forward's weights with the mask")
    if matches_variant(g, variant(tanh_prime=False), wrong):
        fail("the tanh derivative is missing: u = tanh(s W_a + h_j U_a), so the gradient at the pre-activation is "
             "du * (1 - u^2) before it reaches W_a, U_a, s and the keys")
    if matches_variant(g, variant(masked=False, zero_empty=False), wrong):
        fail("the backward recomputed the weights without the mask: padded positions got a share of the gradient")


def check_backward(g, e, problem, dcontext, keys) -> None:
    diagnose_backward(g, e, problem, dcontext, keys)
    for k in keys:
        expect_close(k, g[k], e[k], **BACKWARD_TOL, hint=f"{GRAD_HINTS[k]} ({problem.describe()})")


@task5
def test_additive_attention_backward_input_gradients(submission, homework_seed):
    """ds and dH_enc (values and keys), in float64 to 1e-11, on padded batches, one of them a single row,
    one a source of one position."""
    additive_attention_backward = submission.function("additive_attention_backward")
    for k, (B, S, Hq, He, A) in enumerate(shapes(homework_seed, [(3, 5, 4, 6, 3), (4, 3, 2, 2, 5), (1, 3, 2, 4, 3),
                                                                 (2, 1, 3, 2, 2)],
                                                 B=(1, 5), S=(1, 6),
                                                 Hq=(1, 5), He=(1, 6), A=(1, 5))):
        problem = make_problem(homework_seed + 420 + k, B=B, S=S, Hq=Hq, He=He, A=A)
        g, e, dcontext = backward(additive_attention_backward, problem, homework_seed + 425 + k)
        check_backward(g, e, problem, dcontext, ("dH_enc", "ds"))


@task5
def test_additive_attention_backward_weight_gradients(submission, homework_seed):
    """dW_a, dU_a and dv, with an empty source in the batch (which gets no gradient anywhere)."""
    additive_attention_backward = submission.function("additive_attention_backward")
    problem = make_problem(homework_seed + 430, B=3, S=5, lengths=[5, 0, 3])
    g, e, dcontext = backward(additive_attention_backward, problem, homework_seed + 431)
    if np.abs(g["ds"][1]).max() > BACKWARD_TOL["atol"]:
        fail("row 1 has no real source position: its weights are all zero and its context is 0 whatever s, so its "
             f"ds must be zero; yours reaches {np.abs(g['ds'][1]).max():.3g}")
    check_backward(g, e, problem, dcontext, ("dW_a", "dU_a", "dv", "ds", "dH_enc"))
