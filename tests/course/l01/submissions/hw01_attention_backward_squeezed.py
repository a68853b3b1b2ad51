"""Task 1.5 (b): dL/da is taken from ``(H_enc @ dcontext[:, :, None]).squeeze()``: for a source of
one position the squeeze also takes the position axis away, and da broadcasts against a into a
(B, B) array."""
import numpy as np


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    p = params
    _, a, u = _additive(s, H_enc, params, mask)
    da = (H_enc @ dcontext[:, :, None]).squeeze()  # (B, S, 1) -> (B, S), or (B,) when S = 1
    dH_values = a[:, :, None] * dcontext[:, None, :]
    de = a * (da - (da * a).sum(axis=-1, keepdims=True))
    dv = _weight_grad(u, de[:, :, None])[:, 0]
    dpre = de[:, :, None] * p["v"] * (1.0 - u ** 2)
    dq = dpre.sum(axis=1)
    return {"ds": dq @ p["W_a"].T, "dH_enc": dH_values + dpre @ p["U_a"].T,
            "dW_a": s.T @ dq, "dU_a": _weight_grad(H_enc, dpre), "dv": dv}
