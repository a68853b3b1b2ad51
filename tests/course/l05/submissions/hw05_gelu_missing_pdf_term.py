"""Task 5.3: GELU's derivative taken as Phi(a), as if Phi were a constant factor: the
product rule's a * phi(a) term is missing."""
import numpy as np


def _act(a, activation):
    if activation == "relu":
        on = (a > 0).astype(a.dtype)
        return a * on, on
    Phi = (0.5 * (1.0 + _erf(a / _SQRT_2))).astype(a.dtype)
    return a * Phi, Phi
