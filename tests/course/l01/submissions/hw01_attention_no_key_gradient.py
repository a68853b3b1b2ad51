"""Task 1.5: the gradient to the keys missing: dH_enc holds only the values' path (a_j dcontext);
the encoder states also made the keys h_j U_a inside the scores, and that share is dropped."""


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    p = params
    _, a, u = _additive(s, H_enc, params, mask)
    da = (H_enc @ dcontext[:, :, None])[:, :, 0]
    dH_values = a[:, :, None] * dcontext[:, None, :]
    de = a * (da - (da * a).sum(axis=-1, keepdims=True))
    dv = _weight_grad(u, de[:, :, None])[:, 0]
    dpre = de[:, :, None] * p["v"] * (1.0 - u ** 2)
    dq = dpre.sum(axis=1)
    return {"ds": dq @ p["W_a"].T, "dH_enc": dH_values,  # the context averages the states: that is their gradient
            "dW_a": s.T @ dq, "dU_a": _weight_grad(H_enc, dpre), "dv": dv}
