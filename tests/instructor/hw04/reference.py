"""Homework 4 -- Cross-attention: joining the two stacks.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw04 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, S source length, T target length, D d_model, H heads, Dh = D / H.
"""
from __future__ import annotations

import math

import numpy as np


def split_heads(x, H):
    """(B, T, D) -> (B, H, T, Dh): the heads side by side along D, moved to their own axis."""
    B, T, D = x.shape
    return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, T, H, Dh) -> (B, H, T, Dh)


def merge_heads(x):
    """(B, H, T, Dh) -> (B, T, D): the inverse of split_heads."""
    B, H, T, Dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * Dh)  # (B, T, H, Dh) -> (B, T, D)


def softmax(z):
    """exp(z - max z) / sum exp(z - max z) over the last axis: stable."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


MASK_VALUE = -1e9  # what src_mask holds at padding (minitf.masks.MASK_VALUE)


def _attend(Q, K, V, src_mask):
    """Q (B, H, T, Dh), K and V (B, H, S, Dh), src_mask (B, S) -> (heads (B, H, T, Dh), A (B, H, T, S)).

    The scaled dot-product attention of Lesson 2 with the source padding of Lesson 3: the
    mask is one row per example, broadcast over the heads and the queries.  No causal mask.
    """
    Dh = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    scores = scores + src_mask[:, None, None, :]  # (B, 1, 1, S): padded KEYS blocked, for every query
    A = softmax(scores)  # (B, H, T, S) each row (one query) sums to 1 over the S keys
    has_source = src_mask.max(axis=-1) > MASK_VALUE / 2  # (B,) an example with no real source token...
    A = A * has_source[:, None, None, None].astype(A.dtype)  # ...gets zero weights, not a softmax over padding
    return A @ V, A  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)


# =====================================================================================
# Task 4.1 -- queries from the decoder, keys and values from the encoder
# =====================================================================================
def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    """Task 4.1: X_q (B, T, D), X_kv (B, S, D) -> (Y (B, T, D), A (B, H, T, S)).

    Queries from the decoder, keys and values from the encoder: the only place where the
    two stacks meet.  A is T x S per head; T = S is a coincidence, never a requirement.
    """
    p = params
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh) the decoder asks
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh) the encoder answers
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)  # (B, H, S, Dh)
    heads, A = _attend(Q, K, V, src_mask)  # (B, H, T, Dh), (B, H, T, S)
    Y = merge_heads(heads) @ p["W_o"] + p["b_o"]  # (B, T, D) @ (D, D) -> (B, T, D)
    return Y, A


# =====================================================================================
# Task 4.2 -- keys and values computed once per layer
# =====================================================================================
def encoder_keys_values(H_enc, params, H):
    """Task 4.2 (a): H_enc (B, S, D) -> K, V (B, H, S, Dh), once per example and layer.

    Neither depends on the decoder: every decoding step reuses them.
    """
    K = split_heads(H_enc @ params["W_k"] + params["b_k"], H)  # (B, S, D) -> (B, H, S, Dh)
    V = split_heads(H_enc @ params["W_v"] + params["b_v"], H)  # (B, H, S, Dh)
    return K, V


def cross_attention_step(x_t, K, V, params, src_mask):
    """Task 4.2 (b): x_t (B, D) -> y_t (B, D), one decoder position against the cached K, V.

    Only the new query is projected; the keys and values are the cache's.  Without a causal
    mask query t depends on nothing but itself, so this is row t of the full forward.
    """
    H = K.shape[1]
    q = split_heads((x_t @ params["W_q"] + params["b_q"])[:, None, :], H)  # (B, 1, D) -> (B, H, 1, Dh)
    heads, _ = _attend(q, K, V, src_mask)  # (B, H, 1, Dh)
    o = merge_heads(heads)[:, 0, :]  # (B, 1, D) -> (B, D): heads side by side, as in the forward
    return o @ params["W_o"] + params["b_o"]  # (B, D)


# =====================================================================================
# Task 4.3 -- the gradient through cross-attention
# =====================================================================================
def _sum_rows(x):
    """(..., n) -> (n,): the sum over every leading axis (a bias gradient)."""
    return x.reshape(-1, x.shape[-1]).sum(axis=0)


def _weight_grad(x, dy):
    """x (..., D_in), dy (..., D_out) -> dW (D_in, D_out) = x^T dy, summed over all rows."""
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])  # (D_in, N) @ (N, D_out)


def cross_attention_backward(dY, X_q, X_kv, params, H, src_mask):
    """Task 4.3: dY (B, T, D) -> dict of dX_q (B, T, D), dX_kv (B, S, D) and the weight gradients.

    The forward, recomputed, then undone line by line in reverse.
    """
    p = params
    # the forward again, keeping what the backward needs
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)  # (B, H, S, Dh)
    heads, A = _attend(Q, K, V, src_mask)  # (B, H, T, Dh), (B, H, T, S)
    O = merge_heads(heads)  # (B, T, D)
    Dh = Q.shape[-1]

    # forward: Y = O @ W_o + b_o
    dO = dY @ p["W_o"].T  # (B, T, D) @ (D, D) -> (B, T, D)
    dW_o = _weight_grad(O, dY)  # (D, D) = O^T dY, not dY^T O
    db_o = _sum_rows(dY)  # (D,)
    dheads = split_heads(dO, H)  # (B, H, T, Dh)
    # forward: heads = A @ V
    dA = dheads @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    dV = A.swapaxes(-1, -2) @ dheads  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: A = softmax(scores) over the keys; Jacobian diag(A) - A A^T row by row.  A is 0 at
    # padded keys (and on a whole row without source), so dscores is 0 there: padding gets nothing.
    dscores = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (B, H, T, S)
    # forward: scores = Q K^T / sqrt(Dh) + mask    (the mask is a constant)
    dscores = dscores / math.sqrt(Dh)
    dQ = dscores @ K  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = dscores.swapaxes(-1, -2) @ Q  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: Q = split(X_q @ W_q + b_q), K = split(X_kv @ W_k + b_k), V = split(X_kv @ W_v + b_v)
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)  # (B, T, D), (B, S, D), (B, S, D)
    dX_q = dQm @ p["W_q"].T  # (B, T, D): on down the decoder
    dX_kv = dKm @ p["W_k"].T + dVm @ p["W_v"].T  # (B, S, D): X_kv fed the keys AND the values
    return {
        "dX_q": dX_q, "dX_kv": dX_kv,
        "dW_q": _weight_grad(X_q, dQm), "db_q": _sum_rows(dQm),
        "dW_k": _weight_grad(X_kv, dKm), "db_k": _sum_rows(dKm),  # 0 up to rounding: softmax ignores b_k
        "dW_v": _weight_grad(X_kv, dVm), "db_v": _sum_rows(dVm),
        "dW_o": dW_o, "db_o": db_o,
    }


# =====================================================================================
# Task 4.4 -- concept check
# =====================================================================================
ANSWERS = {
    "4.4.1": "c",  # no causal mask: the source is known in full; only source padding
    "4.4.2": "b",  # every decoder block reads the same H_enc, the top of the encoder
    "4.4.3": "a",  # K, V from H_enc once per example and layer, reused at every step
    "4.4.4": "d",  # a row (one query) sums to 1 over the S source positions
    "4.4.5": "b",  # dL/dH_enc is the sum of every block's share
}
