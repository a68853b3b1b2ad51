"""Sums and means as matrix-vector products.

``x @ 1`` is the sum over x's last axis; ``1 @ X`` sums the rows of a matrix.  They
compute exactly what ``x.sum(axis=-1)`` and ``X.sum(axis=0)`` compute, but through BLAS:
NumPy's own reductions over a short last axis (D = 128, S = 32) run one small loop per
row and are 3-7x slower at the sizes of a training step.  Rounding may differ in the
last bit (BLAS adds in another order).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=128)
def _filled(n: int, value: float, dtype) -> np.ndarray:
    """A read-only vector of n copies of ``value``, made once per (n, value, dtype)."""
    v = np.full(n, value, dtype=dtype)
    v.flags.writeable = False
    return v


def _ones(n: int, dtype) -> np.ndarray:
    return _filled(n, 1.0, dtype)


def sum_last(x: np.ndarray) -> np.ndarray:
    """Sum over the last axis, kept as a length-1 axis: (..., n) -> (..., 1)."""
    return (x @ _ones(x.shape[-1], x.dtype))[..., None]  # (..., n) @ (n,) -> (...,)


def mean_last(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis, kept: (..., n) -> (..., 1).

    ``x @ (1/n, ..., 1/n)``: the division rides along in the product, one operation
    instead of two (for n a power of two the result is the same to the bit).
    """
    n = x.shape[-1]
    dtype = x.dtype if x.dtype.kind == "f" else np.float64  # an integer 1/n would be 0
    return (x @ _filled(n, 1.0 / n, dtype))[..., None]  # (..., n) @ (n,) -> (...,) -> (..., 1)


def sum_rows(x2: np.ndarray) -> np.ndarray:
    """Sum of the rows of a matrix: (N, n) -> (n,)."""
    return _ones(x2.shape[0], x2.dtype) @ x2  # (N,) @ (N, n) -> (n,)
