"""Positional encodings, added to the token embeddings:  x_t <- x_t + P[t].

* sinusoidal (Vaswani et al., 2017): fixed, no parameters
      P[t, 2i] = sin(t / 10000^(2i/D)),  P[t, 2i+1] = cos(t / 10000^(2i/D));
* learned: ``W_pos`` (max_len, D), a parameter like any other.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_choice, check_int, check_shape
from ..module import Module

KINDS = ("sinusoidal", "learned")
"""The positional encodings minitf has (``ModelConfig.positional``)."""


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    """(max_len, D) table of the fixed sinusoidal encodings, float64."""
    t = np.arange(max_len)[:, None]  # (max_len, 1)
    i2 = np.arange(0, d_model, 2)[None, :]  # (1, ceil(D/2))  the even indices 2i
    angle = t / np.power(10000.0, i2 / d_model)  # (max_len, ceil(D/2))
    P = np.zeros((max_len, d_model))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return P


class PositionalCache(NamedTuple):
    T: int  # how many positions were added
    offset: int  # starting at this one (rows offset .. offset+T-1 of P)


class PositionalEncoding(Module):
    """forward: x (B, T, D) -> x + P[:T] (B, T, D).  ``kind`` is "sinusoidal" or "learned".

    ``offset`` shifts the positions (decoding one step at a time at position t).
    """

    def __init__(self, max_len: int, d_model: int, kind: str = "sinusoidal",
                 *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.max_len, self.d_model, self.kind = max_len, d_model, check_choice("kind", kind, KINDS)
        if kind == "learned":
            self.add_param("W_pos", 0.02 * rng.standard_normal((max_len, d_model)))
        else:
            self.table = sinusoidal_table(max_len, d_model).astype(self.dtype)  # a constant, not a param

    def _P(self):
        return self.params["W_pos"] if self.kind == "learned" else self.table

    def forward(self, x: np.ndarray, offset: int = 0):
        check_shape("x", x, (None, None, self.d_model), f"(B, T, d_model={self.d_model})")
        check_int("offset", offset, low=0)
        T = x.shape[1]
        if offset + T > self.max_len:
            raise ValueError(
                f"x: expected at most max_len={self.max_len} positions (offset {offset} + T {T}), "
                f"got {offset + T}")
        return x + self._P()[offset:offset + T], PositionalCache(T, offset)  # (B, T, D)

    def backward(self, dy: np.ndarray, cache: PositionalCache) -> np.ndarray:
        T, offset = cache
        # forward: y = x + P[offset:offset+T]; only a learned P has a gradient
        if self.kind == "learned":
            self.grads["W_pos"][offset:offset + T] += dy.sum(axis=0)  # (T, D)
        return dy
