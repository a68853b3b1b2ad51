"""Task 5.2 (backward): the norm's backward is called without the eps the sub-layer was given
(the forward it recomputes keeps it): the gradients are those of eps = 1e-5."""
import numpy as np


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (b): dy (B, T, D) -> {"dx", "dW", "db", "dgamma", "dbeta"}."""
    D = x.shape[-1]
    if norm_first:
        # forward: h = LN(x);  y = x + (h @ W + b)
        h = layernorm_forward(x, gamma, beta, eps)  # (B, T, D)
        dW = h.reshape(-1, D).T @ dy.reshape(-1, D)  # (D, N) @ (N, D) -> (D, D)
        db = _sum_leading(dy)  # (D,)
        dh = dy @ W.T  # (B, T, D) through the branch
        dx_branch, dgamma, dbeta = layernorm_backward(dh, x, gamma)  # LN's backward at x
        dx = dy + dx_branch  # the identity path carries dy down unchanged
    else:
        # forward: z = x + (x @ W + b);  y = LN(z)
        z = x + (x @ W + b)  # (B, T, D)
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma)  # LN's backward at z, first
        dW = x.reshape(-1, D).T @ dz.reshape(-1, D)  # (D, D)
        db = _sum_leading(dz)  # (D,)
        dx = dz + dz @ W.T  # the identity path + the branch, both after the norm
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}
