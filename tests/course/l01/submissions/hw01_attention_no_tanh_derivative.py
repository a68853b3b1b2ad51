"""Task 1.5: the tanh derivative missing: the gradient at u = tanh(s W_a + h_j U_a) is passed to the
pre-activation unchanged, without the factor 1 - u^2."""


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    p = params
    _, a, u = _additive(s, H_enc, params, mask)
    da = (H_enc @ dcontext[:, :, None])[:, :, 0]
    dH_values = a[:, :, None] * dcontext[:, None, :]
    de = a * (da - (da * a).sum(axis=-1, keepdims=True))
    dv = _weight_grad(u, de[:, :, None])[:, 0]
    dpre = de[:, :, None] * p["v"]  # du, taken as the pre-activation's gradient
    dq = dpre.sum(axis=1)
    return {"ds": dq @ p["W_a"].T, "dH_enc": dH_values + dpre @ p["U_a"].T,
            "dW_a": s.T @ dq, "dU_a": _weight_grad(H_enc, dpre), "dv": dv}
