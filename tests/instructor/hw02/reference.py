"""Homework 2 -- Attention from scratch.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw02 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, H heads, T query length, S key/value length, D d_model, Dh = D / H.
"""
from __future__ import annotations

import math

import numpy as np


# =====================================================================================
# Task 2.1 -- the softmax and its backward
# =====================================================================================
def softmax(z):
    """Task 2.1 (a): z (..., S) -> p (..., S), over the last axis.

    softmax(z) = softmax(z - c) for any c constant along the row: exp(z_i - c) / sum_j
    exp(z_j - c) = e^-c exp(z_i) / (e^-c sum_j exp(z_j)).  With c = the row's maximum every
    exponent is <= 0 (no overflow) and one of them is 0 (the denominator is >= 1: no 0 / 0,
    even for a row of -1e9).  The maximum must be the row's own: a global one lets a row far
    below it underflow to 0 / 0.
    """
    z = np.asarray(z)
    shifted = z - z.max(axis=-1, keepdims=True)  # (..., S) every entry <= 0, the row's largest exactly 0
    e = np.exp(shifted)  # (..., S) in (0, 1]
    return e / e.sum(axis=-1, keepdims=True)  # (..., S) / (..., 1)


def softmax_backward(dp, p):
    """Task 2.1 (b): dp, p (..., S) -> dz (..., S).

        dp_j / dz_i = p_j ([i = j] - p_i)                 J = diag(p) - p p^T, symmetric
        dz_i = sum_j dp_j dp_j/dz_i = p_i dp_i - p_i sum_j dp_j p_j = p_i (dp_i - <dp, p>)

    One inner product per row instead of an (S, S) matrix per row.
    """
    inner = (dp * p).sum(axis=-1, keepdims=True)  # (..., 1) <dp, p> per row
    return p * (dp - inner)  # (..., S)


# =====================================================================================
# Task 2.2 -- scaled dot-product attention
# =====================================================================================
def attention_forward(Q, K, V):
    """Task 2.2: Q (B, H, T, Dh), K and V (B, H, S, Dh) -> out (B, H, T, Dh), A (B, H, T, S).

    q . k is a sum of Dh products of mean 0 and variance 1: its variance is Dh.  Dividing
    by sqrt(Dh) (its standard deviation) keeps the scores of unit variance for any head
    width, so the softmax starts far from one-hot and passes gradient.
    """
    Dh = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    A = softmax(scores)  # (B, H, T, S) over the keys: each query's row sums to 1
    out = A @ V  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    return out, A


# =====================================================================================
# Task 2.3 -- the attention backward
# =====================================================================================
def attention_backward(dout, Q, K, V, A):
    """Task 2.3: dout (B, H, T, Dh) -> dQ (B, H, T, Dh), dK (B, H, S, Dh), dV (B, H, S, Dh).

    The forward in reverse, a line each; every gradient is shaped like its variable, which
    decides where the transposes go.
    """
    scale = 1.0 / math.sqrt(Q.shape[-1])
    # forward: out = A @ V
    dV = A.swapaxes(-1, -2) @ dout  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    dA = dout @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    # forward: A = softmax(scores)   (a row of A that a mask zeroed gives a zero row here)
    dscores = softmax_backward(dA, A)  # (B, H, T, S)
    # forward: scores = Q @ K^T * scale
    dQ = dscores @ K * scale  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = dscores.swapaxes(-1, -2) @ Q * scale  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    return dQ, dK, dV


# =====================================================================================
# Task 2.4 -- many heads
# =====================================================================================
def split_heads(x, H):
    """Task 2.4 (a): x (B, T, D) -> (B, H, T, Dh); heads[b, h, t] = x[b, t, h*Dh:(h+1)*Dh].

    The last axis is split first, (D,) -> (H, Dh), so that head h gets its own contiguous
    features of every position; the transpose then brings H in front of T.  Reshaping straight
    to (B, H, T, Dh) would cut the (T, D) block into H runs of whole positions instead.
    """
    B, T, D = x.shape
    return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, T, H, Dh) -> (B, H, T, Dh)


def merge_heads(x):
    """Task 2.4 (b): x (B, H, T, Dh) -> (B, T, D), the inverse of split_heads."""
    B, H, T, Dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * Dh)  # (B, T, H, Dh) -> (B, T, D)


# =====================================================================================
# Task 2.5 -- concept check
# =====================================================================================
ANSWERS = {
    "2.5.1": "c",
    "2.5.2": "b",
    "2.5.3": "b",
    "2.5.4": "c",
    "2.5.5": "b",
    "2.5.6": "a",
}
