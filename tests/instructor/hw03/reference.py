"""Homework 3 -- The causal mask.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the reasoning.  CI grades this
file and expects full marks (``minitf grade hw03 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, H heads, T query length, S key length, Dh head width.
"""
from __future__ import annotations

import math

import numpy as np

MASK_VALUE = -1e9  # finite: masks add up without nan, and a fully masked row stays finite


# =====================================================================================
# Task 3.1 -- the masks
# =====================================================================================
def causal_mask(T, S=None, offset=0, dtype=np.float32):
    """Task 3.1 (a): (T, S) additive mask, MASK_VALUE where key s lies after query t.

    Query t is at absolute position offset + t, key s at s: the key is blocked when
    s > offset + t.  The diagonal (s = offset + t) stays open: a position sees its own input.
    """
    S = offset + T if S is None else S
    q_pos = offset + np.arange(T)[:, None]  # (T, 1) absolute positions of the queries
    k_pos = np.arange(S)[None, :]  # (1, S) absolute positions of the keys
    return np.where(k_pos > q_pos, MASK_VALUE, 0.0).astype(dtype)  # (T, S)


def padding_mask(ids, pad_id, dtype=np.float32):
    """Task 3.1 (b): ids (B, S) -> (B, 1, 1, S) additive mask blocking the padded *keys*.

    The size-1 axes broadcast over heads and queries: every query of example b ignores
    b's padded positions.
    """
    is_pad = np.asarray(ids) == pad_id  # (B, S)
    return np.where(is_pad, MASK_VALUE, 0.0).astype(dtype)[:, None, None, :]  # (B, 1, 1, S)


# =====================================================================================
# Task 3.2 -- masking before the softmax
# =====================================================================================
def softmax(z):
    """Over the last axis, stably: exp(z - max z) / sum exp(z - max z).  With a finite mask the
    row maximum is finite, so z - max z never meets -inf - (-inf)."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_attention_forward(Q, K, V, mask=None):
    """Task 3.2: Q (B, H, T, Dh), K, V (B, H, S, Dh), mask -> out (B, H, T, Dh), A (B, H, T, S).

    The mask is added before the softmax, so blocked keys get weight exp(-1e9) = 0 and the
    kept weights are normalised among themselves.  A fully masked row has every score near
    -1e9: the softmax would spread its weight over the blocked keys, so it is zeroed.
    """
    Dh = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    if mask is not None:
        scores = scores + mask  # broadcast: (T, S), (B, 1, 1, S) or (B, 1, T, S)
    A = softmax(scores)  # (B, H, T, S)
    if mask is not None:
        row_alive = mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2  # (..., 1) is any key allowed?
        A = A * row_alive  # fully masked rows -> all-zero weights
    out = A @ V  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    return out, A


# =====================================================================================
# Task 3.3 -- the mask in the backward
# =====================================================================================
def masked_attention_backward(dout, Q, K, V, A):
    """Task 3.3: dout (B, H, T, Dh) and the forward's Q, K, V, A -> dQ, dK, dV.

    The mask was a constant added to the scores: its derivative passes dscores through
    unchanged, and everything it did is in A.  Where A is 0 (a blocked key, or a whole
    fully masked row), dscores = A * (...) is exactly 0: no mask is needed here.
    """
    scale = 1.0 / math.sqrt(Q.shape[-1])
    # forward: out = A @ V
    dV = A.swapaxes(-1, -2) @ dout  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    dA = dout @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    # forward: A = softmax(scores)      dscores = A * (dA - <dA, A>), the Jacobian applied to dA
    dscores = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (B, H, T, S)
    # forward: scores = Q @ K^T * scale + mask
    dQ = (dscores @ K) * scale  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = (dscores.swapaxes(-1, -2) @ Q) * scale  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    return dQ, dK, dV


# =====================================================================================
# Task 3.4 -- the leak, measured
# =====================================================================================
def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    """Task 3.4: leak[t] = max |logits'[:, t] - logits[:, t]| when only the inputs after t
    are replaced.  Eval mode: dropout would move the logits even when nothing changes."""
    T = decoder_input_ids.shape[1]
    leak = np.zeros(T)  # leak[T-1] stays 0: the last position has no future
    with model.evaluating():
        logits, _ = model.forward(src_ids, decoder_input_ids)  # (B, T, V)
        for t in range(T - 1):
            changed = decoder_input_ids.copy()  # (B, T) a new array each time: the input stays as it is
            changed[:, t + 1:] = replacement_ids[:, t + 1:]  # only the future of position t
            changed_logits, _ = model.forward(src_ids, changed)  # (B, T, V)
            leak[t] = np.abs(changed_logits[:, t] - logits[:, t]).max()
    return leak


# =====================================================================================
# Task 3.5 -- concept check
# =====================================================================================
ANSWERS = {
    "3.5.1": "b",
    "3.5.2": "d",
    "3.5.3": "c",
    "3.5.4": "d",
    "3.5.5": "b",
    "3.5.6": "a",
}
