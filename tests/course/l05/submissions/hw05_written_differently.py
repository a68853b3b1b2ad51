"""Right answers written another way: LayerNorm's backward through its (D, D) Jacobian
with einsum; the sub-layer through the file's own LayerNorm, in einsum; the feed-forward
network with einsum, np.where and a frompyfunc erf; the position table built by stacking
sines and cosines and reshaping.  The tests check the numbers, not the style."""
import math

import numpy as np

_erf_any = np.frompyfunc(math.erf, 1, 1)


def layernorm_forward(x, gamma, beta, eps=1e-5):
    D = x.shape[-1]
    centred = x - np.einsum("...d->...", x)[..., None] / D
    var = np.einsum("...d,...d->...", centred, centred)[..., None] / D
    return gamma * centred / np.sqrt(var + eps) + beta


def layernorm_backward(dy, x, gamma, eps=1e-5):
    D = x.shape[-1]
    centred = x - x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt((centred**2).mean(-1, keepdims=True) + eps)  # (..., 1)
    x_hat = centred * rstd
    # J[..., i, j] = dx_hat_i / dx_j = rstd (delta_ij - 1/D - x_hat_i x_hat_j / D)
    J = rstd[..., None] * (np.eye(D, dtype=x.dtype) - 1.0 / D - np.einsum("...i,...j->...ij", x_hat, x_hat) / D)
    dx = np.einsum("...ij,...i->...j", J, dy * gamma)
    lead = tuple(range(x.ndim - 1))
    return dx, np.sum(dy * x_hat, axis=lead), np.sum(dy, axis=lead)


def sublayer_forward(x, W, b, gamma, beta, norm_first, eps=1e-5):
    if norm_first:
        return x + np.einsum("btd,de->bte", layernorm_forward(x, gamma, beta, eps), W) + b
    return layernorm_forward(x + np.einsum("btd,de->bte", x, W) + b, gamma, beta, eps)


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    if norm_first:
        h = layernorm_forward(x, gamma, beta, eps)
        dh = np.einsum("bte,de->btd", dy, W)
        dnorm, dgamma, dbeta = layernorm_backward(dh, x, gamma, eps)
        dx = dy + dnorm
        dW, db = np.einsum("btd,bte->de", h, dy), np.einsum("bte->e", dy)
    else:
        z = x + np.einsum("btd,de->bte", x, W) + b
        dz, dgamma, dbeta = layernorm_backward(dy, z, gamma, eps)
        dx = dz + np.einsum("bte,de->btd", dz, W)
        dW, db = np.einsum("btd,bte->de", x, dz), np.einsum("bte->e", dz)
    return {"dx": dx, "dW": dW, "db": db, "dgamma": dgamma, "dbeta": dbeta}


def _pre(x, params):
    return np.einsum("...d,df->...f", x, params["W_1"]) + params["b_1"]


def _Phi(a):
    return (0.5 * (1.0 + _erf_any(a / math.sqrt(2.0)).astype(np.float64))).astype(a.dtype)


def feedforward_forward(x, params, activation):
    a = _pre(x, params)
    h = np.where(a > 0, a, 0.0).astype(a.dtype) if activation == "relu" else a * _Phi(a)
    return np.einsum("...f,fd->...d", h, params["W_2"]) + params["b_2"]


def feedforward_backward(dy, x, params, activation):
    a = _pre(x, params)
    if activation == "relu":
        h, prime = np.where(a > 0, a, 0.0).astype(a.dtype), np.where(a > 0, 1.0, 0.0).astype(a.dtype)
    else:
        Phi = _Phi(a)
        h, prime = a * Phi, Phi + a * np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    dh = np.einsum("...d,fd->...f", dy, params["W_2"])
    da = dh * prime
    lead = "".join("abc"[: x.ndim - 1])
    return {"dx": np.einsum("...f,df->...d", da, params["W_1"]),
            "dW_1": np.einsum(f"{lead}d,{lead}f->df", x, da), "db_1": da.reshape(-1, da.shape[-1]).sum(0),
            "dW_2": np.einsum(f"{lead}f,{lead}d->fd", h, dy), "db_2": dy.reshape(-1, dy.shape[-1]).sum(0)}


def sinusoidal_positions(max_len, d_model):
    pairs = (d_model + 1) // 2
    freq = np.exp(-np.log(10000.0) * 2 * np.arange(pairs) / d_model)  # 1 / 10000^(2i/D)
    angle = np.outer(np.arange(max_len), freq)  # (max_len, pairs)
    both = np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(max_len, 2 * pairs)
    return both[:, :d_model]
