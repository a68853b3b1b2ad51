"""Task 9.4 (honest): on a tie the min's derivative goes to a (a <= c), not to c."""
import numpy as np


def coverage_loss(a, labels, weight=1.0):
    real = labels != -100
    n_real = int(real.sum())
    c = np.zeros_like(a)
    c[:, 1:] = np.cumsum(a[:, :-1], axis=1)
    loss = float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / n_real)
    g = (weight * real / n_real)[..., None]
    da = g * (a <= c)
    dc = g * (a > c)
    da = da + np.cumsum(dc[:, ::-1], axis=1)[:, ::-1] - dc
    return loss, da.astype(a.dtype)
