"""Task 5.1: eps added to the standard deviation, outside the square root:
(x - mu) / (sigma + eps) instead of (x - mu) / sqrt(sigma^2 + eps)."""
import numpy as np


def _normalise(x, eps):
    mu = x.mean(axis=-1, keepdims=True)
    sigma = x.std(axis=-1, keepdims=True)
    rstd = 1.0 / (sigma + eps)
    return (x - mu) * rstd, rstd
