"""Sums on the hot path of a training step, as named helpers.

Each helper computes exactly what its name says, so the line that calls it reads as the
formula (``mu = mean(x)``, ``db = sum_rows(dy)``, ``scatter_add_rows(dW_E, ids, dx)``).
Each one has a speed trick inside. This docstring is the one place that explains the tricks and
what they were measured to save.

**Sums and means as matrix-vector products** (:func:`sum_last`, :func:`mean`,
:func:`sum_rows`).  ``x @ 1`` is the sum over x's last axis, and ``1 @ X`` sums the rows of a
matrix.  They compute what ``x.sum(axis=-1)`` and ``X.sum(axis=0)`` compute, but through
BLAS. NumPy's own reductions over a short axis (S = 32, D = 128) run one small loop per
row, and are 2-10x slower at the sizes of a training step.  Rounding may differ in the
last bit, because BLAS adds in another order.

**Scatter-add by sorting** (:func:`scatter_add_rows`).  ``np.add.at(A, ids, rows)`` is the
formula, but it adds one row at a time (about 6x slower here).  Instead, the rows are
sorted by id, and each run of equal ids is summed at once with ``np.add.reduceat``.

Measured on 2026-11-30 on the reference training step of ``minitf bench`` (D 128, H 4,
F 512, 2 + 2 layers, B = S = T = 32, V 64, float32), with NumPy 2.4.6 and OpenBLAS 0.3.31
(SkylakeX kernel, 2 threads), on a 2-CPU machine shared with other work (1-minute load
average 1.3-1.5).  The figures are medians of 15 alternating blocks of 3 steps each. Every
helper was replaced by its plain NumPy formula, and the step got slower by:

    helper             calls/step   time inside: plain -> helper   whole step (59.2 ms with all)
    sum_last               12          1.1 -> 0.2 ms               the three together:
    mean                   48          2.4 -> 0.6 ms                 +3.7 ms  (+6.3 %)
    sum_rows               57          1.9 -> 1.0 ms
    scatter_add_rows        2          2.6 -> 0.9 ms                 +2.0 ms  (+3.4 %)

On one BLAS thread, counting the thread's CPU time instead (21 blocks), the two slowdowns were
+4.6 % and +2.5 % of an 86 ms step.
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


def sum_last(x: np.ndarray) -> np.ndarray:
    """Sum over the last axis, kept as a length-1 axis: (..., n) -> (..., 1).

    As ``x.sum(axis=-1, keepdims=True)``.
    """
    return (x @ _filled(x.shape[-1], 1.0, x.dtype))[..., None]  # (..., n) @ (n,) -> (...,) -> (..., 1)


def mean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis, kept as a length-1 axis: (..., n) -> (..., 1).

    As ``x.mean(axis=-1, keepdims=True)``.  The product is ``x @ (1/n, ..., 1/n)``, so the
    division rides along in it (when n is a power of two, the result is the sum / n to the bit).
    """
    n = x.shape[-1]
    dtype = x.dtype if x.dtype.kind == "f" else np.float64  # an integer 1/n would be 0
    return (x @ _filled(n, 1.0 / n, dtype))[..., None]  # (..., n) @ (n,) -> (...,) -> (..., 1)


def sum_rows(x2: np.ndarray) -> np.ndarray:
    """Sum of the rows of a matrix: (N, n) -> (n,).  As ``x2.sum(axis=0)``."""
    return _filled(x2.shape[0], 1.0, x2.dtype) @ x2  # (N,) @ (N, n) -> (n,)


def scatter_add_rows(A: np.ndarray, ids: np.ndarray, rows: np.ndarray) -> None:
    """``A[ids[n]] += rows[n]`` for every n, in place, with repeated ids adding up.

    As ``np.add.at(A, ids, rows)``.  A: (V, D); ids: integers (...) in [0, V); rows: (..., D).
    """
    ids = ids.reshape(-1)  # (N,)
    rows = rows.reshape(ids.size, A.shape[1])  # (N, D)
    order = np.argsort(ids, kind="stable")  # (N,) positions grouped by id
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.diff(sorted_ids, prepend=-1))  # first position of each distinct id
    A[sorted_ids[starts]] += np.add.reduceat(rows[order], starts, axis=0)  # (n_distinct, D)
