"""Task 5.1 (b): the backward computed in float64 "for precision" (its inputs cast on entry): a
float32 LayerNorm gets float64 gradients back (the template: x's dtype).  Right in float64."""
import numpy as np


def layernorm_backward(dy, x, gamma, eps=1e-5):
    """Task 5.1 (b): dy (..., D) -> (dx (..., D), dgamma (D,), dbeta (D,)).

    x_j reaches x_hat_i three ways: directly (rstd delta_ij), through mu (-rstd / D) and
    through sigma (-rstd x_hat_i x_hat_j / D).  Summed against dx_hat:

        dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))

    Each row of dx sums to 0 (shifting x changes nothing) and is orthogonal to x_hat
    (scaling x changes nothing, up to eps).
    """
    dy, x, gamma = (np.asarray(v, dtype=np.float64) for v in (dy, x, gamma))  # the statistics in float64, "for precision"
    x_hat, rstd = _normalise(x, eps)  # (..., D), (..., 1)
    # forward: y = gamma * x_hat + beta
    dgamma = _sum_leading(dy * x_hat)  # (D,)
    dbeta = _sum_leading(dy)  # (D,)
    dx_hat = dy * gamma  # (..., D)
    # forward: x_hat = (x - mu) * rstd, mu and rstd functions of x
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))  # (..., D)
    return dx, dgamma, dbeta
