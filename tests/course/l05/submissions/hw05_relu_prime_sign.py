"""Task 5.3: ReLU's derivative taken as sign(a): -1 where a < 0 instead of 0."""
import numpy as np


def _act(a, activation):
    if activation == "relu":
        return np.maximum(a, 0.0), np.sign(a)
    Phi = (0.5 * (1.0 + _erf(a / _SQRT_2))).astype(a.dtype)
    phi = _INV_SQRT_2PI * np.exp(-0.5 * a * a)
    return a * Phi, Phi + a * phi
