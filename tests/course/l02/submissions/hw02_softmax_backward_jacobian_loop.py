"""Task 2.1: the softmax backward builds each row's Jacobian diag(p) - p p^T in a Python loop
over the rows and multiplies it out: exact values, but a loop over the batch, heads and
positions (and an (S, S) matrix per row), where the task asks for p * (dp - <dp, p>) on the
whole array."""
import numpy as np


def softmax_backward(dp, p):
    dz = np.empty_like(p)
    for idx in np.ndindex(p.shape[:-1]):
        row = p[idx]
        J = np.diag(row) - np.outer(row, row)  # (S, S), symmetric
        dz[idx] = J.T @ dp[idx]
    return dz
