"""Tasks 1.1 and 1.5: minitf's own LSTMCell, reached through an object (no source scan sees its
forward: caught when it runs), and softmax_backward, imported (found in the source).  No credit
for either task; the other tasks keep their points."""
import numpy as np

from minitf.layers.softmax import softmax_backward
from minitf.rnn import LSTMCell, LSTMState


def lstm_step_forward(x, h_prev, c_prev, params):
    cell = LSTMCell(x.shape[1], h_prev.shape[1], rng=np.random.default_rng(0), dtype=x.dtype)
    for name, value in params.items():
        cell.params[name][...] = value
    state, _ = cell.forward(x, LSTMState(h_prev, c_prev))
    return state.h, state.c


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    p = params
    _, a, u = _additive(s, H_enc, params, mask)
    da = (H_enc @ dcontext[:, :, None])[:, :, 0]
    dH_values = a[:, :, None] * dcontext[:, None, :]
    de = softmax_backward(da, a)
    dv = _weight_grad(u, de[:, :, None])[:, 0]
    dpre = de[:, :, None] * p["v"] * (1.0 - u ** 2)
    dq = dpre.sum(axis=1)
    return {"ds": dq @ p["W_a"].T, "dH_enc": dH_values + dpre @ p["U_a"].T,
            "dW_a": s.T @ dq, "dU_a": _weight_grad(H_enc, dpre), "dv": dv}
