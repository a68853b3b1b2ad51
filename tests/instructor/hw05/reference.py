"""Homework 5 -- The block.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw05 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, T positions, D d_model, F the feed-forward width; every layer acts on the
last axis, (..., D).
"""
from __future__ import annotations

import math

import numpy as np

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_erf = np.vectorize(math.erf, otypes=[np.float64])  # NumPy has no erf ufunc


def _normalise(x, eps):
    """x (..., D) -> (x_hat (..., D), rstd (..., 1)): the statistics of each row on its own."""
    mu = x.mean(axis=-1, keepdims=True)  # (..., 1) over the D features, not over the batch
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # (..., 1) biased: divide by D
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1) eps inside the root
    return (x - mu) * rstd, rstd


def _sum_leading(a):
    """(..., n) -> (n,): the sum over every leading axis (every position of every example)."""
    return a.reshape(-1, a.shape[-1]).sum(axis=0)


# =====================================================================================
# Task 5.1 -- LayerNorm and its backward
# =====================================================================================
def layernorm_forward(x, gamma, beta, eps=1e-5):
    """Task 5.1 (a): x (..., D) -> y (..., D), y = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta."""
    x_hat, _ = _normalise(x, eps)  # (..., D)
    return gamma * x_hat + beta


def layernorm_backward(dy, x, gamma, eps=1e-5):
    """Task 5.1 (b): dy (..., D) -> (dx (..., D), dgamma (D,), dbeta (D,)).

    x_j reaches x_hat_i three ways: directly (rstd delta_ij), through mu (-rstd / D) and
    through sigma (-rstd x_hat_i x_hat_j / D).  Summed against dx_hat:

        dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))

    Each row of dx sums to 0 (shifting x changes nothing) and is orthogonal to x_hat
    (scaling x changes nothing, up to eps).
    """
    x_hat, rstd = _normalise(x, eps)  # (..., D), (..., 1)
    # forward: y = gamma * x_hat + beta
    dgamma = _sum_leading(dy * x_hat)  # (D,)
    dbeta = _sum_leading(dy)  # (D,)
    dx_hat = dy * gamma  # (..., D)
    # forward: x_hat = (x - mu) * rstd, mu and rstd functions of x
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))  # (..., D)
    return dx, dgamma, dbeta


# =====================================================================================
# Task 5.2 -- the residual sub-layer, pre-LN and post-LN
# =====================================================================================
def sublayer_forward(x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (a): x (B, T, D) -> y (B, T, D), f(h) = h @ W + b.

    pre-LN:  y = x + f(LN(x))      post-LN:  y = LN(x + f(x))
    """
    if norm_first:
        h = layernorm_forward(x, gamma, beta, eps)  # (B, T, D) the branch reads a normalised copy
        return x + (h @ W + b)  # the stream x passes untouched
    z = x + (x @ W + b)  # (B, T, D) the sum...
    return layernorm_forward(z, gamma, beta, eps)  # ...is normalised


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (b): dy (B, T, D) -> {"dx", "dW", "db", "dgamma", "dbeta"}."""
    D = x.shape[-1]
    if norm_first:
        # forward: h = LN(x);  y = x + (h @ W + b)
        h = layernorm_forward(x, gamma, beta, eps)  # (B, T, D)
        dW = h.reshape(-1, D).T @ dy.reshape(-1, D)  # (D, N) @ (N, D) -> (D, D)
        db = _sum_leading(dy)  # (D,)
        dh = dy @ W.T  # (B, T, D) through the branch
        dx_branch, dgamma, dbeta = layernorm_backward(dh, x, gamma, eps)  # LN's backward at x
        dx = dy + dx_branch  # the identity path carries dy down unchanged
    else:
        # forward: z = x + (x @ W + b);  y = LN(z)
        z = x + (x @ W + b)  # (B, T, D)
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma, eps)  # LN's backward at z, first
        dW = x.reshape(-1, D).T @ dz.reshape(-1, D)  # (D, D)
        db = _sum_leading(dz)  # (D,)
        dx = dz + dz @ W.T  # the identity path + the branch, both after the norm
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}


# =====================================================================================
# Task 5.3 -- the feed-forward network
# =====================================================================================
def _act(a, activation):
    """(act(a), act'(a)), both (..., F): ReLU or the exact GELU a * Phi(a)."""
    if activation == "relu":
        on = (a > 0).astype(a.dtype)  # 0 at a = 0, as minitf and PyTorch
        return a * on, on
    if activation == "gelu":
        Phi = (0.5 * (1.0 + _erf(a / _SQRT_2))).astype(a.dtype)  # the normal CDF
        phi = _INV_SQRT_2PI * np.exp(-0.5 * a * a)  # its density, Phi'
        return a * Phi, Phi + a * phi  # product rule: (a Phi)' = Phi + a phi
    raise ValueError(f"activation: expected 'relu' or 'gelu', got {activation!r}")


def feedforward_forward(x, params, activation):
    """Task 5.3 (a): x (..., D) -> y (..., D), y = act(x W_1 + b_1) W_2 + b_2."""
    p = params
    h, _ = _act(x @ p["W_1"] + p["b_1"], activation)  # (..., F)
    return h @ p["W_2"] + p["b_2"]  # (..., D)


def feedforward_backward(dy, x, params, activation):
    """Task 5.3 (b): dy (..., D) -> {"dx", "dW_1", "db_1", "dW_2", "db_2"}."""
    p = params
    D, F = p["W_1"].shape
    a = x @ p["W_1"] + p["b_1"]  # (..., F)
    h, act_prime = _act(a, activation)  # (..., F)
    # forward: y = h @ W_2 + b_2
    dW_2 = h.reshape(-1, F).T @ dy.reshape(-1, D)  # (F, N) @ (N, D) -> (F, D)
    db_2 = _sum_leading(dy)  # (D,)
    dh = dy @ p["W_2"].T  # (..., F)
    # forward: h = act(a)
    da = dh * act_prime  # (..., F)
    # forward: a = x @ W_1 + b_1
    dW_1 = x.reshape(-1, D).T @ da.reshape(-1, F)  # (D, N) @ (N, F) -> (D, F)
    db_1 = _sum_leading(da)  # (F,)
    dx = da @ p["W_1"].T  # (..., D)
    return {"dx": dx, "dW_1": dW_1, "db_1": db_1, "dW_2": dW_2, "db_2": db_2}


# =====================================================================================
# Task 5.4 -- positions
# =====================================================================================
def sinusoidal_positions(max_len, d_model):
    """Task 5.4: (max_len, D) float64, P[t, 2i] = sin(t / 10000^(2i/D)), P[t, 2i+1] = cos(same)."""
    t = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1) positions from 0
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # (1, ceil(D/2)) the even columns 2i
    angle = t / 10000.0 ** (two_i / d_model)  # (max_len, ceil(D/2)) one frequency per pair
    P = np.empty((max_len, d_model))
    P[:, 0::2] = np.sin(angle)  # even columns
    P[:, 1::2] = np.cos(angle[:, : d_model // 2])  # odd columns: the pair's frequency
    return P


# =====================================================================================
# Task 5.5 -- concept check
# =====================================================================================
ANSWERS = {
    "5.5.1": "b",  # LayerNorm: each position's D features, alone
    "5.5.2": "d",  # pre-LN and post-LN: different functions, different gradients at initialisation
    "5.5.3": "c",  # without positions: permutation-equivariant
    "5.5.4": "a",  # the identity path adds dy itself at every layer
    "5.5.5": "c",  # GELU'(0) = 1/2, ReLU'(0) taken as 0
    "5.5.6": "b",  # learned rows beyond max_len do not exist; sinusoids exist but were never trained on
}
