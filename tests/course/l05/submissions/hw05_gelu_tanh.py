"""Task 5.3: GELU computed with GPT-2's tanh approximation (forward and backward), where
minitf's 'gelu' is the exact erf form."""
import math

import numpy as np


def _act(a, activation):
    if activation == "relu":
        on = (a > 0).astype(a.dtype)
        return a * on, on
    c = math.sqrt(2.0 / math.pi)
    t = np.tanh(c * (a + 0.044715 * a**3))
    prime = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * a * a)
    return 0.5 * a * (1.0 + t), prime
