"""Task 5.1: dgamma and dbeta summed over the batch axis only, as for a 2-d input: for
x (B, T, D) they come out (T, D), not (D,)."""


def layernorm_backward(dy, x, gamma, eps=1e-5):
    x_hat, rstd = _normalise(x, eps)
    dgamma = (dy * x_hat).sum(axis=0)  # the positions are not summed
    dbeta = dy.sum(axis=0)
    dx_hat = dy * gamma
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))
    return dx, dgamma, dbeta
