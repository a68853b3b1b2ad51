"""Numerically stable softmax and log-softmax over the last axis, with their backward.

Subtracting the row maximum before ``exp`` changes nothing mathematically
(softmax(z) = softmax(z - c)) and keeps every ``exp`` argument <= 0, so nothing
overflows.
"""
from __future__ import annotations

import numpy as np

from .reductions import sum_last


def softmax(z: np.ndarray) -> np.ndarray:
    """p = exp(z - max z) / sum exp(z - max z), over the last axis."""
    e = z - z.max(axis=-1, keepdims=True)
    np.exp(e, out=e)  # in place: one array, not two
    e /= sum_last(e)
    return e


def softmax_backward(dp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """dz = p * (dp - sum_j dp_j p_j).   (The Jacobian diag(p) - p p^T applied to dp.)"""
    return p * (dp - sum_last(dp * p))


def log_softmax(z: np.ndarray) -> np.ndarray:
    """log p = z - max z - log sum exp(z - max z), over the last axis."""
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

