"""Task 5.1: the backward keeps the term through sigma but forgets the one through mu
(-mean(dx_hat)): the rows of dx no longer sum to 0."""


def layernorm_backward(dy, x, gamma, eps=1e-5):
    x_hat, rstd = _normalise(x, eps)
    dgamma = _sum_leading(dy * x_hat)
    dbeta = _sum_leading(dy)
    dx_hat = dy * gamma
    dx = rstd * (dx_hat - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))
    return dx, dgamma, dbeta
