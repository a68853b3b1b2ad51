"""Task 5.3: dW_1 computed as da^T x, (F, D): the transpose of W_1's shape (D, F)."""


def feedforward_backward(dy, x, params, activation):
    p = params
    D, F = p["W_1"].shape
    a = x @ p["W_1"] + p["b_1"]
    h, act_prime = _act(a, activation)
    dW_2 = h.reshape(-1, F).T @ dy.reshape(-1, D)
    db_2 = _sum_leading(dy)
    da = (dy @ p["W_2"].T) * act_prime
    dW_1 = da.reshape(-1, F).T @ x.reshape(-1, D)  # (F, D)
    db_1 = _sum_leading(da)
    dx = da @ p["W_1"].T
    return {"dx": dx, "dW_1": dW_1, "db_1": db_1, "dW_2": dW_2, "db_2": db_2}
