"""Task 1.1: the sigmoid written as exp(a) / (1 + exp(a)) -- the same function on paper, and right to
1e-16 on the pre-activations of a few units the quick checks send.  But a saturated gate (a
pre-activation of a few hundred: a large input, a large weight) overflows exp(a) to inf, and
inf / inf is nan: h and c turn nan where the sigmoid should just give 1."""
import numpy as np


def sigmoid(x):
    e = np.exp(x)  # overflows to inf beyond 709 in float64 (88 in float32)
    return e / (1.0 + e)
