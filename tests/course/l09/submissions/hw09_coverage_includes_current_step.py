"""Task 9.4: the coverage includes the current step, c_t = sum_{t' <= t} a_t', so min(a_t, c_t) = a_t."""
import numpy as np

IGNORE_INDEX = -100


def coverage_loss(a, labels, weight=1.0):
    real = labels != IGNORE_INDEX
    n_real = int(real.sum())
    c = np.cumsum(a, axis=1)  # a_t itself included
    loss = float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / n_real)
    g = (weight * real / n_real)[..., None]
    da = g * (a < c)
    dc = g * (a >= c)
    da = da + np.cumsum(dc[:, ::-1], axis=1)[:, ::-1]
    return loss, da.astype(a.dtype)
