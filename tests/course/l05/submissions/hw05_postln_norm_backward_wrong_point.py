"""Task 5.2: post-LN's backward written as pre-LN's: the LayerNorm's backward (at z) is
applied to the branch's gradient only, and dy goes straight down the identity path."""


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    D = x.shape[-1]
    if norm_first:
        h = layernorm_forward(x, gamma, beta, eps)
        dW = h.reshape(-1, D).T @ dy.reshape(-1, D)
        db = _sum_leading(dy)
        dx_branch, dgamma, dbeta = layernorm_backward(dy @ W.T, x, gamma, eps)
        dx = dy + dx_branch
    else:
        z = x + (x @ W + b)
        dW = x.reshape(-1, D).T @ dy.reshape(-1, D)
        db = _sum_leading(dy)
        dx_branch, dgamma, dbeta = layernorm_backward(dy @ W.T, z, gamma, eps)  # the norm on the branch only
        dx = dy + dx_branch
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}
