"""Layer normalisation over the last axis (Ba, Kiros & Hinton, 2016).

    mu    = mean(x)            sigma^2 = mean((x - mu)^2)
    x_hat = (x - mu) / sqrt(sigma^2 + eps)
    y     = gamma * x_hat + beta
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_last_dim
from ..module import Module
from .reductions import mean, sum_rows


class LayerNormCache(NamedTuple):
    x_hat: np.ndarray  # (..., D) normalised input
    rstd: np.ndarray  # (..., 1) 1 / sqrt(sigma^2 + eps)


class LayerNorm(Module):
    """``gamma``, ``beta`` (D,).  forward: x (..., D) -> y (..., D)."""

    def __init__(self, d_model: int, eps: float = 1e-5, *, dtype=np.float32):
        super().__init__(dtype)
        self.d_model, self.eps = d_model, eps
        self.add_param("gamma", np.ones(d_model))
        self.add_param("beta", np.zeros(d_model))

    def forward(self, x: np.ndarray):
        check_last_dim("x", x, self.d_model, f"last dim must be d_model={self.d_model}")
        mu = mean(x)  # (..., 1)
        x_hat = x - mu  # (..., D) centred; scaled in place two lines down
        var = mean(x_hat * x_hat)  # (..., 1) biased, as in the paper and torch
        rstd = 1.0 / np.sqrt(var + self.eps)  # (..., 1)
        x_hat *= rstd  # (..., D) now (x - mu) / sqrt(var + eps)
        y = x_hat * self.params["gamma"]
        y += self.params["beta"]
        return y, LayerNormCache(x_hat, rstd)

    def backward(self, dy: np.ndarray, cache: LayerNormCache) -> np.ndarray:
        x_hat, rstd = cache
        D = self.d_model
        # forward: y = gamma * x_hat + beta
        self.grads["gamma"] += sum_rows((dy * x_hat).reshape(-1, D))  # (N, D) -> (D,)
        self.grads["beta"] += sum_rows(dy.reshape(-1, D))  # (N, D) -> (D,)
        dx_hat = dy * self.params["gamma"]  # (..., D)
        # forward: x_hat = (x - mu) * rstd, with mu and rstd functions of x.  Collecting the
        # three paths (direct, through mu, through sigma) gives the compact form:
        #   dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))
        mean_dx_hat, mean_dx_hat_x_hat = mean(dx_hat), mean(dx_hat * x_hat)  # (..., 1) each
        dx = dx_hat  # the same array, updated in place: dx_hat is not read after the two means
        dx -= mean_dx_hat
        dx -= x_hat * mean_dx_hat_x_hat
        dx *= rstd
        return dx
