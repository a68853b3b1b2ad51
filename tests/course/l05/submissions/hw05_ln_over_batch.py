"""Task 5.1: LayerNorm's statistics taken over the batch axis (axis 0), one mean and
variance per feature and position: BatchNorm, not LayerNorm."""
import numpy as np


def _normalise(x, eps):
    mu = x.mean(axis=0, keepdims=True)  # over the examples of the batch
    var = ((x - mu) ** 2).mean(axis=0, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    return (x - mu) * rstd, rstd
