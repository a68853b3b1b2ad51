"""Task 2.3: no backward at all -- central finite differences of the student's own forward,
L = sum(out * dout).  Close, but only to about 1e-9: not a backward written out."""
import numpy as np


def attention_backward(dout, Q, K, V, A, h=1e-5):
    inputs = [np.array(Q, copy=True), np.array(K, copy=True), np.array(V, copy=True)]

    def loss():
        return float((attention_forward(*inputs)[0] * dout).sum())

    grads = []
    for x in inputs:
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            old = x[i]
            x[i] = old + h
            up = loss()
            x[i] = old - h
            down = loss()
            x[i] = old
            g[i] = (up - down) / (2 * h)
        grads.append(g)
    return tuple(grads)
