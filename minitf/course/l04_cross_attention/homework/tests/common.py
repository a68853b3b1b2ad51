"""What every task's tests of homework 4 share: the test problems, minitf's answers, the
forward that each classic mistake computes instead, and the check that a function left its
inputs alone.

A problem is one cross-attention's weights (a dict of arrays, minitf's names and layout),
a decoder stream X_q (B, T, D), an encoder output X_kv (B, S, D) and the source padding
mask (B, S).  Problems are drawn from the run's ``homework_seed`` (the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand.  minitf's answer is
``MultiHeadAttention`` loaded with the same weights, run in this (the grader's) process.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from minitf.attention import MultiHeadAttention, merge_heads, split_heads
from minitf.grading.asserts import close, softmax_overflow
from minitf.layers import softmax
from minitf.masks import MASK_VALUE, causal_mask

PARAM_NAMES = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o")
GRAD_NAMES = ("dW_q", "db_q", "dW_k", "db_k", "dW_v", "db_v", "dW_o", "db_o")

# Forward tolerances: two float64 implementations of the same formula agree to ~1e-15.
FORWARD_TOL = {np.dtype(np.float64): dict(rtol=1e-9, atol=1e-11), np.dtype(np.float32): dict(rtol=1e-4, atol=1e-5)}
# The backward, float64: a backward written out agrees with minitf's to ~1e-15; central finite
# differences of the forward reach only ~1e-9 to 1e-10, and fail -- the task is the backward itself.
BACKWARD_TOL = dict(rtol=1e-10, atol=1e-12)
# The backward at scores of ~1e3 (:func:`with_large_scores`): the keys are ~1e2 times larger, and every exact
# formula rounds with them (dQ = dscores K sums terms of that size to an O(1) result): two right backwards (the
# reference's, the written-differently one's, against minitf's) use up to 3/4 of BACKWARD_TOL there on random
# problems, too close; this leaves them a margin of ~100.  An overflowed softmax is off by O(1).
LARGE_SCORES_BACKWARD_TOL = dict(rtol=1e-8, atol=1e-10)
LARGE_SCORE = 1000.0  # the largest shift q . b_k / sqrt(Dh) of a query's scores: far above exp's overflow (~709)


class Problem(NamedTuple):
    X_q: np.ndarray  # (B, T, D) the decoder stream: the queries
    X_kv: np.ndarray  # (B, S, D) the encoder output H_enc: the keys and values
    params: dict  # W_q, W_k, W_v, W_o (D, D), b_q, b_k, b_v, b_o (D,)
    H: int
    src_mask: np.ndarray  # (B, S) additive: 0 at real source tokens, MASK_VALUE at padding
    lengths: np.ndarray  # (B,) real source lengths: the number of real tokens (at the start, unless moved)

    @property
    def dims(self) -> tuple:
        """(B, T, S, D, Dh)"""
        B, T, D = self.X_q.shape
        return B, T, self.X_kv.shape[1], D, D // self.H

    @property
    def padded(self) -> np.ndarray:
        """(B, S) True at padded source positions."""
        return self.src_mask <= MASK_VALUE / 2

    def args(self) -> tuple:
        """The forward's arguments, in the template's order: (X_q, X_kv, params, H, src_mask)."""
        return self.X_q, self.X_kv, self.params, self.H, self.src_mask

    def describe(self) -> str:
        B, T, S, D, Dh = self.dims
        return f"B={B}, T={T}, S={S}, D={D}, H={self.H}, source lengths {self.lengths.tolist()}"


def make_problem(seed: int, *, B=3, T=4, S=6, D=8, H=2, lengths=None, dtype=np.float64) -> Problem:
    """Random weights (biases nonzero, so that a forgotten bias shows), inputs and source padding.

    ``lengths`` defaults to one full source, one two shorter and one of random length >= 1."""
    rng = np.random.default_rng(seed)
    params = {}
    for name in PARAM_NAMES:
        shape = (D, D) if name.startswith("W") else (D,)
        scale = 0.6 if name.startswith("W") else 0.5  # scores of a few units: weights neither flat nor one-hot
        params[name] = rng.normal(0.0, scale, size=shape).astype(dtype)
    X_q = rng.normal(size=(B, T, D)).astype(dtype)
    X_kv = rng.normal(size=(B, S, D)).astype(dtype)
    if lengths is None:
        lengths = [S, max(S - 2, 1)] + list(rng.integers(1, S + 1, size=max(B - 2, 0)))  # B = 1: [S]
    lengths = np.asarray(lengths[:B], dtype=np.int64)
    src_mask = np.where(np.arange(S)[None, :] >= lengths[:, None], MASK_VALUE, 0.0).astype(dtype)  # (B, S)
    return Problem(X_q, X_kv, params, H, src_mask, lengths)


def with_padding_anywhere(problem: Problem, seed: int) -> Problem:
    """The problem with the padding moved, each example keeping its number of real tokens: example 0 padded at
    the START (left padding: its real tokens last), the others at random positions.  ``src_mask`` marks padding
    wherever it is: nothing in the contract puts it at the end."""
    B, T, S, D, Dh = problem.dims
    rng = np.random.default_rng(seed)
    real = np.zeros((B, S), dtype=bool)
    for b, n in enumerate(problem.lengths):
        if b == 0:
            real[b, S - n:] = n > 0
        else:
            real[b, rng.choice(S, size=int(n), replace=False)] = True
    src_mask = np.where(real, 0.0, MASK_VALUE).astype(problem.src_mask.dtype)  # (B, S)
    return problem._replace(src_mask=src_mask)


def with_large_scores(problem: Problem, size: float = LARGE_SCORE) -> Problem:
    """The problem with its key bias b_k scaled up until it shifts the scores of some query by +-``size``.

    b_k adds q . b_k / sqrt(Dh) to every score of query q, the same for all its keys: a shift the softmax
    ignores, so Y, A and every gradient are exactly those of the original problem (db_k stays 0).  But the
    scores reach ~1e3, where exp overflows (above ~709) or underflows to 0 for every key (below ~-745)."""
    p, H = problem.params, problem.H
    B, T, S, D, Dh = problem.dims
    Q = split_heads(problem.X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    b_k = split_heads(p["b_k"][None, None, :], H)  # (1, H, 1, Dh)
    shift = ((Q * b_k).sum(axis=-1) / math.sqrt(Dh))[problem.lengths > 0]  # (B_live, H, T)
    factor = size / max(float(np.abs(shift).max()), 1e-3)
    return problem._replace(params=dict(p, b_k=(p["b_k"] * factor).astype(p["b_k"].dtype)))


def overflow_message(what: str) -> str:
    """The message for a softmax that overflows at large scores (:func:`with_large_scores`): ``what`` is right at
    ordinary ones."""
    return softmax_overflow(f"{what} right at ordinary scores, but not at large ones: a key bias b_k adds q . b_k / "
                            f"sqrt(Dh) to every score of a query (here up to about {LARGE_SCORE:g}), a shift the "
                            f"softmax ignores, so nothing may change", "scores",
                            also="The same shift keeps np.exp from underflowing to 0 for every key (0 / 0)")


def upstream(problem: Problem, seed: int) -> np.ndarray:
    """A random dL/dY (B, T, D) (a random upstream gradient, never all ones)."""
    return np.random.default_rng(seed).normal(size=problem.X_q.shape).astype(problem.X_q.dtype)


# ---- minitf's answers -------------------------------------------------------------------------------
def minitf_attention(params: dict, H: int) -> MultiHeadAttention:
    """A minitf MultiHeadAttention holding ``params``."""
    W_q = params["W_q"]
    attn = MultiHeadAttention(W_q.shape[0], H, rng=np.random.default_rng(0), dtype=W_q.dtype)
    for name in PARAM_NAMES:
        attn.params[name][...] = params[name]
    return attn


def minitf_forward(problem: Problem):
    """(Y (B, T, D), A (B, H, T, S), attn, cache): minitf's cross-attention on the problem."""
    attn = minitf_attention(problem.params, problem.H)
    Y, cache = attn.forward(problem.X_q, problem.X_kv, problem.src_mask[:, None, None, :])  # mask (B, 1, 1, S)
    return Y, cache.attn.A, attn, cache


def minitf_backward(problem: Problem, dY: np.ndarray) -> dict:
    """minitf's gradients, named as the template's dict: dX_q, dX_kv, dW_q, db_q, ..."""
    _, _, attn, cache = minitf_forward(problem)
    attn.zero_grad()
    dX_q, dX_kv = attn.backward(dY, cache)
    out = {"dX_q": dX_q, "dX_kv": dX_kv}
    out.update({"d" + name: attn.grads[name].copy() for name in PARAM_NAMES})
    return out


def minitf_keys_values(H_enc: np.ndarray, params: dict, H: int):
    """(K, V) (B, H, S, Dh): what decoding caches (``MultiHeadAttention.project_kv``)."""
    return minitf_attention(params, H).project_kv(H_enc)


# ---- what the classic mistakes compute ----------------------------------------------------------------
def variant_forward(problem: Problem, *, mask: str = "keys", causal: bool = False, kv_from: str = "encoder",
                    softmax_over: str = "keys", scale: bool = True, zero_empty: bool = True):
    """The forward with one thing changed: (Y, A), or None where the change cannot broadcast.

    mask: "keys" (right), "none" (padding ignored), "queries" (src_mask[:, None, :, None]);
    causal: a causal mask added; kv_from: "encoder" (right) or "decoder" (K, V from X_q);
    softmax_over: "keys" (right) or "queries"; scale: the 1/sqrt(Dh); zero_empty: a source
    with no real token gets zero weights (right) or a softmax over its padding.
    """
    p, H = problem.params, problem.H
    X_kv = problem.X_kv if kv_from == "encoder" else problem.X_q
    Q = split_heads(problem.X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S', Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)
    scores = Q @ K.swapaxes(-1, -2)  # (B, H, T, S')
    if scale:
        scores = scores / math.sqrt(Q.shape[-1])
    m = problem.src_mask
    add = {"keys": m[:, None, None, :], "queries": m[:, None, :, None], "none": None}[mask]
    if causal:
        c = causal_mask(scores.shape[-2], scores.shape[-1], dtype=scores.dtype)  # (T, S')
        add = c if add is None else add + c
    if add is not None:
        try:
            scores = scores + add
        except ValueError:
            return None
        if scores.shape != Q.shape[:-1] + K.shape[-2:-1]:
            return None
    A = softmax(scores) if softmax_over == "keys" else softmax(scores.swapaxes(-1, -2)).swapaxes(-1, -2)
    if zero_empty and mask != "none":
        A = A * (m.max(axis=-1) > MASK_VALUE / 2)[:, None, None, None]
    Y = merge_heads(A @ V) @ p["W_o"] + p["b_o"]
    return Y, A


def matches(received, variant, index: int, tol: dict) -> bool:
    """``received`` is close to part ``index`` of a variant (False where the variant is None)."""
    return variant is not None and close(received, variant[index], **tol)


# ---- inputs left alone ----------------------------------------------------------------------------------
READ_ONLY = "they are reused: H_enc by every decoder block, K and V at every step"  # why a test checks that an input came back unchanged (asserts.call)
