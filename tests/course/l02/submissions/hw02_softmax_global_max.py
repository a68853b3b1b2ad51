"""Task 2.1: subtracts the maximum of the whole array instead of each row's own: a row whose
scores all lie far below the global maximum (a masked row, or just smaller scores) underflows
to 0 / 0."""
import numpy as np


def softmax(z):
    e = np.exp(z - np.max(z))  # one maximum for everything
    return e / e.sum(axis=-1, keepdims=True)
