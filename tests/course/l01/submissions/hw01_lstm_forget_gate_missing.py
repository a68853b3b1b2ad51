"""Task 1.1: forgetting the forget gate's contribution to dc_{t-1}: the cell state's gradient is
passed back unchanged (dc_prev = dc), as if c_t = c_{t-1} + i * g.  Every other gradient is right."""
import numpy as np


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    p = params
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    do = dh * tanh_c
    dc = dc + dh * o * (1.0 - tanh_c ** 2)
    dc_prev = dc  # c_t = f * c_{t-1} + ...: the "c_{t-1}" term looks like it passes straight through
    df, di, dg = dc * c_prev, dc * g, dc * i
    da = np.concatenate([di * i * (1.0 - i), df * f * (1.0 - f), dg * (1.0 - g ** 2), do * o * (1.0 - o)], axis=1)
    return {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dc_prev,
            "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}
