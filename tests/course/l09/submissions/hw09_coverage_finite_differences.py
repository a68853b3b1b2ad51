"""Task 9.4: the loss is right, its gradient comes from central finite differences."""
import numpy as np

IGNORE_INDEX = -100


def _loss(a, labels, weight):
    real = labels != IGNORE_INDEX
    c = np.zeros_like(a)
    c[:, 1:] = np.cumsum(a[:, :-1], axis=1)
    return float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / real.sum())


def coverage_loss(a, labels, weight=1.0):
    x = a.astype(np.float64)
    da = np.zeros_like(x)
    h = 1e-6
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = _loss(x, labels, weight)
        x[i] = old - h
        down = _loss(x, labels, weight)
        x[i] = old
        da[i] = (up - down) / (2 * h)
    return _loss(a, labels, weight), da.astype(a.dtype)
