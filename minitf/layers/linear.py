"""Linear (affine) layer:  y = x @ W + b.

``W`` is stored ``(D_in, D_out)`` so the forward reads as in the papers (``x W``);
PyTorch stores the transpose.  The two functions :func:`affine_forward` and
:func:`affine_backward` are the whole story and are reused by multi-head attention
for its four projections.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_last_dim
from ..module import Module
from .reductions import sum_rows


def affine_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """y = x @ W + b.   x: (..., D_in), W: (D_in, D_out), b: (D_out,) -> y: (..., D_out).

    The leading dimensions are flattened into one (N = B * T rows) so a single matrix
    product runs; ``x @ W`` on a 3-d ``x`` would run B small products instead, about
    three times slower.  The reshapes are views: nothing is copied.
    """
    D_in, D_out = W.shape
    y = x.reshape(-1, D_in) @ W  # (N, D_in) @ (D_in, D_out) -> (N, D_out)
    if b is not None:
        y += b
    return y.reshape(*x.shape[:-1], D_out)  # (..., D_out)


def affine_backward(dy: np.ndarray, x: np.ndarray, W: np.ndarray):
    """Undo ``y = x @ W + b``.  Returns ``(dx, dW, db)``.

    dx = dy @ W^T              (..., D_in)
    dW = sum over rows x^T dy  (D_in, D_out)
    db = sum over rows dy      (D_out,)
    """
    D_in, D_out = W.shape
    x2 = x.reshape(-1, D_in)  # (N, D_in), N = all leading dims
    dy2 = dy.reshape(-1, D_out)  # (N, D_out)
    dx = dy2 @ W.T  # (N, D_out) @ (D_out, D_in) -> (N, D_in)
    dW = x2.T @ dy2  # (D_in, N) @ (N, D_out) -> (D_in, D_out)
    db = sum_rows(dy2)  # (D_out,)
    return dx.reshape(x.shape), dW, db  # dx back to (..., D_in)


class LinearCache(NamedTuple):
    x: np.ndarray  # the input, needed for dW = x^T dy


class Linear(Module):
    """y = x @ W + b with ``W`` (D_in, D_out) and optional ``b`` (D_out,).

    Initialised like ``torch.nn.Linear``: U(-1/sqrt(D_in), 1/sqrt(D_in)).
    """

    def __init__(self, d_in: int, d_out: int, bias: bool = True, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.d_in, self.d_out = d_in, d_out
        bound = 1.0 / np.sqrt(d_in)
        self.add_param("W", rng.uniform(-bound, bound, size=(d_in, d_out)))
        if bias:
            self.add_param("b", rng.uniform(-bound, bound, size=(d_out,)))

    def forward(self, x: np.ndarray):
        """x: (..., D_in) -> y: (..., D_out)"""
        check_last_dim("x", x, self.d_in, f"last dim must be D_in={self.d_in}")
        y = affine_forward(x, self.params["W"], self.params.get("b"))
        return y, LinearCache(x)

    def backward(self, dy: np.ndarray, cache: LinearCache) -> np.ndarray:
        """dy: (..., D_out) -> dx: (..., D_in); accumulates dW, db."""
        # forward: y = x @ W + b
        dx, dW, db = affine_backward(dy, cache.x, self.params["W"])
        self.grads["W"] += dW
        if "b" in self.params:
            self.grads["b"] += db
        return dx
