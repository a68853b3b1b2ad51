"""Task 5.2: pre-LN normalises the residual stream itself, x = LN(x) and then y = x + f(x),
so the identity path carries LN(x), not x (the backward follows that forward)."""


def sublayer_forward(x, W, b, gamma, beta, norm_first, eps=1e-5):
    if norm_first:
        x = layernorm_forward(x, gamma, beta, eps)  # the stream is replaced by its normalised copy
        return x + (x @ W + b)
    z = x + (x @ W + b)
    return layernorm_forward(z, gamma, beta, eps)


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    D = x.shape[-1]
    if norm_first:
        h = layernorm_forward(x, gamma, beta, eps)
        dW = h.reshape(-1, D).T @ dy.reshape(-1, D)
        db = _sum_leading(dy)
        dh = dy + dy @ W.T  # both paths read h = LN(x)
        dx, dgamma, dbeta = layernorm_backward(dh, x, gamma, eps)
    else:
        z = x + (x @ W + b)
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma, eps)
        dW = x.reshape(-1, D).T @ dz.reshape(-1, D)
        db = _sum_leading(dz)
        dx = dz + dz @ W.T
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}
