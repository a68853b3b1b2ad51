"""Task 1.1: no backward written -- central finite differences of the submission's own (correct)
forward, entry by entry, in float64.  Right to about 1e-10, which is not the precision of a
backward: it must fail."""
import numpy as np


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params, eps=1e-5):
    arrays = {"x": x.copy(), "h_prev": h_prev.copy(), "c_prev": c_prev.copy()}
    p = {name: value.copy() for name, value in params.items()}

    def loss():  # L = sum(h * dh + c * dc): its gradient is the backward of (dh, dc)
        h, c = lstm_step_forward(arrays["x"], arrays["h_prev"], arrays["c_prev"], p)
        return float((h * dh).sum() + (c * dc).sum())

    def numeric(a):
        out = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + eps
            up = loss()
            a[i] = old - eps
            down = loss()
            a[i] = old
            out[i] = (up - down) / (2 * eps)
        return out

    grads = {"dx": numeric(arrays["x"]), "dh_prev": numeric(arrays["h_prev"]), "dc_prev": numeric(arrays["c_prev"])}
    grads.update({"d" + name: numeric(p[name]) for name in ("W_ih", "W_hh", "b_ih", "b_hh")})
    return grads
