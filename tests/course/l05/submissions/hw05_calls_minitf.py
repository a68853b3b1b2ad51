"""Tasks 5.1 and 5.3: minitf's own LayerNorm.forward, reached through an object (no source
scan sees it: caught when it runs), and the activations' backward of
minitf.layers.activations, imported (found in the source).  No credit for either task.
Task 5.2 keeps its points: it reuses layernorm_forward, and minitf's LayerNorm is allowed
there (task 5.2 is about where the norm sits); task 5.4 keeps its points too."""
import numpy as np

from minitf.layers import LayerNorm
from minitf.layers.activations import gelu_backward, relu_backward


def layernorm_forward(x, gamma, beta, eps=1e-5):
    ln = LayerNorm(x.shape[-1], eps, dtype=x.dtype)
    ln.params["gamma"][...] = gamma
    ln.params["beta"][...] = beta
    return ln.forward(x)[0]


def _act(a, activation):
    ones = np.ones_like(a)
    if activation == "relu":
        return a * (a > 0), relu_backward(ones, a)
    Phi = (0.5 * (1.0 + _erf(a / _SQRT_2))).astype(a.dtype)
    return a * Phi, gelu_backward(ones, a)
