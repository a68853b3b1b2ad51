"""Token embedding: a lookup ``x = W_E[ids]``; its backward scatters rows back."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_token_ids
from ..module import Module
from .reductions import scatter_add_rows


class EmbeddingCache(NamedTuple):
    ids: np.ndarray  # which rows were read, so backward knows where to add


class Embedding(Module):
    """``W_E`` (V, D), initialised N(0, init_std^2).  forward: ids (...) -> x (..., D).

    ``padding_idx``: lookups of that row contribute no gradient, as in
    ``torch.nn.Embedding(padding_idx=...)``; it is initialised to zeros too.  (A model
    that ties its output head to this table still trains the row through the head.)
    """

    def __init__(self, vocab_size: int, d_model: int, padding_idx: int | None = None,
                 *, init_std: float = 1.0, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.vocab_size, self.d_model, self.padding_idx = vocab_size, d_model, padding_idx
        W_E = init_std * rng.standard_normal((vocab_size, d_model))  # torch: N(0, 1)
        if padding_idx is not None:
            if not 0 <= padding_idx < vocab_size:
                raise ValueError(f"padding_idx: expected an id in [0, {vocab_size}), got {padding_idx}")
            W_E[padding_idx] = 0.0
        self.add_param("W_E", W_E)

    def forward(self, ids: np.ndarray):
        """ids: integer (...) -> x: (..., D)"""
        ids = check_token_ids("ids", ids, self.vocab_size)
        return self.params["W_E"][ids], EmbeddingCache(ids)

    def backward(self, dx: np.ndarray, cache: EmbeddingCache) -> None:
        """Add each position's dx into the row it was read from.

        A token that occurs n times gets the sum of its n rows of dx.
        """
        # forward: x = W_E[ids]
        ids = cache.ids  # (...)
        if self.padding_idx is not None:
            keep = ids != self.padding_idx  # positions holding a real token
            ids, dx = ids[keep], dx[keep]  # (N,), (N, D)
        scatter_add_rows(self.grads["W_E"], ids, dx)  # dW_E[ids[n]] += dx[n], repeated ids adding up
        return None  # token ids have no gradient
