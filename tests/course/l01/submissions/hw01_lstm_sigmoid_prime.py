"""Task 1.1: the sigmoid's derivative written as s instead of s * (1 - s) (the exponential's
derivative is itself; the sigmoid's is not), for the gates i, f and o."""
import numpy as np


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    p = params
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    do = dh * tanh_c
    dc = dc + dh * o * (1.0 - tanh_c ** 2)
    dc_prev = dc * f
    df, di, dg = dc * c_prev, dc * g, dc * i
    da = np.concatenate([di * i, df * f, dg * (1.0 - g ** 2), do * o], axis=1)  # d sigmoid(a) / da "= sigmoid(a)"
    return {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dc_prev,
            "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}
