"""Task 5.2: the backward follows the branch only: dx misses the identity path's gradient
(+dy in pre-LN, +dz in post-LN)."""


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    D = x.shape[-1]
    if norm_first:
        h = layernorm_forward(x, gamma, beta, eps)
        dW = h.reshape(-1, D).T @ dy.reshape(-1, D)
        db = _sum_leading(dy)
        dx, dgamma, dbeta = layernorm_backward(dy @ W.T, x, gamma, eps)  # the branch's share only
    else:
        z = x + (x @ W + b)
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma, eps)
        dW = x.reshape(-1, D).T @ dz.reshape(-1, D)
        db = _sum_leading(dz)
        dx = dz @ W.T  # the branch's share only
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}
