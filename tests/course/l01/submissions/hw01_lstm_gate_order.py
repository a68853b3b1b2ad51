"""Task 1.1: the gates read in the order i, f, o, g (the "IFOG" layout of some well-known
from-scratch LSTMs) instead of torch's i, f, g, o -- consistently, in the forward and in the
backward's da."""
import numpy as np


def _lstm_gates(x, h_prev, params):
    p = params
    H = h_prev.shape[-1]
    a = x @ p["W_ih"] + p["b_ih"] + h_prev @ p["W_hh"] + p["b_hh"]  # (B, 4H)
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H])  # the three sigmoids first
    g = np.tanh(a[:, 3 * H:])
    return i, f, g, o


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    p = params
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    do = dh * tanh_c
    dc = dc + dh * o * (1.0 - tanh_c ** 2)
    dc_prev = dc * f
    df, di, dg = dc * c_prev, dc * g, dc * i
    da = np.concatenate([di * i * (1.0 - i), df * f * (1.0 - f), do * o * (1.0 - o), dg * (1.0 - g ** 2)], axis=1)
    return {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dc_prev,
            "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}
