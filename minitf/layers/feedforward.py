"""Position-wise feed-forward network:  FFN(x) = W_2 act(x W_1 + b_1) + b_2.

Applied to every position independently: x (..., D) -> h (..., F) -> y (..., D).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..module import Module
from .activations import get_activation
from .dropout import Dropout
from .linear import Linear


class FeedForwardCache(NamedTuple):
    lin1: Any  # cache of x -> a = x W_1 + b_1
    act: Any  # the pre-activation a, for act'(a)
    drop: Any  # dropout mask (or None)
    lin2: Any  # cache of h -> y = h W_2 + b_2


class FeedForward(Module):
    """``linear1`` (D -> F), activation, dropout, ``linear2`` (F -> D), as in
    ``torch.nn.TransformerEncoderLayer``."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0,
                 *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.act_forward, self.act_backward = get_activation(activation)
        self.linear1 = Linear(d_model, d_ff, rng=rng, dtype=dtype)
        self.dropout = Dropout(dropout, rng=rng, dtype=dtype)
        self.linear2 = Linear(d_ff, d_model, rng=rng, dtype=dtype)

    def forward(self, x: np.ndarray):
        a, c1 = self.linear1.forward(x)  # (..., F)
        h, ca = self.act_forward(a)  # (..., F)
        h, cd = self.dropout.forward(h)  # (..., F)
        y, c2 = self.linear2.forward(h)  # (..., D)
        return y, FeedForwardCache(c1, ca, cd, c2)

    def backward(self, dy: np.ndarray, cache: FeedForwardCache) -> np.ndarray:
        dh = self.linear2.backward(dy, cache.lin2)  # (..., F)   forward: y = h W_2 + b_2
        dh = self.dropout.backward(dh, cache.drop)  # (..., F)   forward: h = dropout(h)
        da = self.act_backward(dh, cache.act)  # (..., F)        forward: h = act(a)
        return self.linear1.backward(da, cache.lin1)  # (..., D) forward: a = x W_1 + b_1
