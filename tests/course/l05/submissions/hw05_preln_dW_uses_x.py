"""Task 5.2: pre-LN's dW computed from x, the sub-layer's input, although f read LN(x)."""


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    D = x.shape[-1]
    if norm_first:
        dW = x.reshape(-1, D).T @ dy.reshape(-1, D)  # f's input was LN(x), not x
        db = _sum_leading(dy)
        dx_branch, dgamma, dbeta = layernorm_backward(dy @ W.T, x, gamma, eps)
        dx = dy + dx_branch
    else:
        z = x + (x @ W + b)
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma, eps)
        dW = x.reshape(-1, D).T @ dz.reshape(-1, D)
        db = _sum_leading(dz)
        dx = dz + dz @ W.T
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}
