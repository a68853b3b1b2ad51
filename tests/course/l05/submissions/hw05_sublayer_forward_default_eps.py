"""Task 5.2 (forward): the norm is called without the eps the sub-layer was given, so it runs at
its default 1e-5 whatever ``eps`` says."""
import numpy as np


def sublayer_forward(x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (a): x (B, T, D) -> y (B, T, D), f(h) = h @ W + b.

    pre-LN:  y = x + f(LN(x))      post-LN:  y = LN(x + f(x))
    """
    if norm_first:
        h = layernorm_forward(x, gamma, beta)  # (B, T, D) the branch reads a normalised copy
        return x + (h @ W + b)  # the stream x passes untouched
    z = x + (x @ W + b)  # (B, T, D) the sum...
    return layernorm_forward(z, gamma, beta)  # ...is normalised
