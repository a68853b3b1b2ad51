"""Task 6.4: each product's FLOPs computed with np.prod (2 m k n as np.prod([2, m, k, n])):
NumPy's integers are int64 and wrap around silently past 2^63 - 1 (about 9.2e18), which a
large model's FLOPs exceed; Python ints are exact at any size."""
import numpy as np


def _matmul(m, k, n):
    return np.prod([2, m, k, n])  # the mistake: int64, overflows for a large model
