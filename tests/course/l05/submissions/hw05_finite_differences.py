"""Task 5.1: no backward written -- central finite differences of the submission's own
(correct) forward, entry by entry, in float64.  Right to about 1e-10, which is not the
precision of a backward: it must fail."""
import numpy as np


def layernorm_backward(dy, x, gamma, eps=1e-5, h=1e-5):
    x, gamma = x.copy(), gamma.copy()
    beta = np.zeros_like(gamma)

    def loss():  # L = sum(y * dy): its gradient is the backward of dy
        return float((layernorm_forward(x, gamma, beta, eps) * dy).sum())

    def numeric(a):
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + h
            up = loss()
            a[i] = old - h
            down = loss()
            a[i] = old
            g[i] = (up - down) / (2 * h)
        return g

    return numeric(x), numeric(gamma), numeric(beta)
