"""Task 1.1: the path from dh to dc through h_t = o * tanh(c_t) is missing: the cell state's
gradient is taken as the dc that arrived alone, so the gates and c_{t-1} miss dh * o * tanh'(c_t)."""
import numpy as np


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    p = params
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g
    do = dh * np.tanh(c)  # h = o * tanh(c): dh reaches o ... and (forgotten) c
    dc_prev = dc * f
    df, di, dg = dc * c_prev, dc * g, dc * i
    da = np.concatenate([di * i * (1.0 - i), df * f * (1.0 - f), dg * (1.0 - g ** 2), do * o * (1.0 - o)], axis=1)
    return {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dc_prev,
            "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}
