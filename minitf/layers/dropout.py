"""Inverted dropout: in training, zero each entry with probability p and scale the
survivors by 1/(1-p) so the expectation is unchanged; in eval mode, the identity."""
from __future__ import annotations

import numpy as np

from ..checks import check_number
from ..module import Module


class Dropout(Module):
    """Seeded dropout.  The mask is drawn from ``rng`` (a ``np.random.Generator``) and
    returned as the cache; ``None`` when nothing was dropped."""

    def __init__(self, p: float, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.p = check_number("p", p, 0, 1, high_open=True)
        self.rng = rng

    def forward(self, x: np.ndarray):
        if not self.training or self.p == 0.0:
            return x, None
        keep = self.rng.random(x.shape, dtype=np.float32) >= self.p  # (...,) True = kept
        mask = keep.astype(x.dtype) / (1.0 - self.p)  # scaled mask, 0 or 1/(1-p)
        return x * mask, mask

    def backward(self, dy: np.ndarray, mask) -> np.ndarray:
        # forward: y = x * mask
        return dy if mask is None else dy * mask
