"""Task 5.1: the backward treats mu and sigma as constants, dx = dx_hat / sqrt(sigma^2 + eps):
the two mean-of-gradient terms (through mu and through sigma) are missing."""


def layernorm_backward(dy, x, gamma, eps=1e-5):
    x_hat, rstd = _normalise(x, eps)
    dgamma = _sum_leading(dy * x_hat)
    dbeta = _sum_leading(dy)
    dx = dy * gamma * rstd  # as if x_hat = (x - const) * const
    return dx, dgamma, dbeta
