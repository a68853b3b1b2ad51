"""Task 5.3 (b): GELU's derivative writes the normal density out as exp(-a^2/2) / np.sqrt(2 pi):
``np.sqrt`` of a Python float is a float64 NumPy scalar, which turns a float32 backward into
float64 under NumPy 2 (the template: x's dtype).  Right in float64."""
import numpy as np


def feedforward_backward(dy, x, params, activation):
    """Task 5.3 (b): dy (..., D) -> {"dx", "dW_1", "db_1", "dW_2", "db_2"}."""
    p = params
    D, F = p["W_1"].shape
    a = x @ p["W_1"] + p["b_1"]  # (..., F)
    h, act_prime = _act(a, activation)  # (..., F)
    if activation == "gelu":  # d/da [a Phi(a)] = Phi(a) + a phi(a), the density written out
        Phi = (0.5 * (1.0 + _erf(a / _SQRT_2))).astype(a.dtype)
        act_prime = Phi + a * np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi)
    # forward: y = h @ W_2 + b_2
    dW_2 = h.reshape(-1, F).T @ dy.reshape(-1, D)  # (F, N) @ (N, D) -> (F, D)
    db_2 = _sum_leading(dy)  # (D,)
    dh = dy @ p["W_2"].T  # (..., F)
    # forward: h = act(a)
    da = dh * act_prime  # (..., F)
    # forward: a = x @ W_1 + b_1
    dW_1 = x.reshape(-1, D).T @ da.reshape(-1, F)  # (D, N) @ (N, F) -> (D, F)
    db_1 = _sum_leading(da)  # (F,)
    dx = da @ p["W_1"].T  # (..., D)
    return {"dx": dx, "dW_1": dW_1, "db_1": db_1, "dW_2": dW_2, "db_2": db_2}
