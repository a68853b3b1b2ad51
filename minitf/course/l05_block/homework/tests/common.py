"""What every task's tests of homework 5 share: tolerances, random problems, minitf's answers,
what the classic LayerNorm mistakes compute, and the check that a function left its inputs
alone.

Problems are drawn from the run's ``homework_seed`` (the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand.  minitf's answers come from its
own layers loaded with the same numbers (``LayerNorm``, ``Linear``, ``FeedForward``,
``sublayer_forward`` / ``sublayer_backward``), run in this (the grader's) process.
"""
from __future__ import annotations

import numpy as np

from minitf.grading.asserts import fail
from minitf.layers import LayerNorm

# Forward tolerances: two float64 implementations of the same formula agree to ~1e-15.
FORWARD_TOL = {np.dtype(np.float64): dict(rtol=1e-9, atol=1e-11), np.dtype(np.float32): dict(rtol=1e-4, atol=1e-5)}
# The backward, float64: a backward written out agrees with minitf's to ~1e-14; central finite
# differences of the forward reach only ~1e-9 to 1e-10, and fail -- the task is the backward itself.
BACKWARD_TOL = dict(rtol=1e-10, atol=1e-12)


def scaled(tol: dict, expected) -> dict:
    """``tol`` with its atol in units of the largest entry of ``expected`` (when that exceeds 1).

    Rounding is relative to the size of the terms that make an entry: a LayerNorm gradient
    of a row of small variance has entries of several hundred that cancel to near 0 in places,
    and those carry an absolute error of ~1e-14 times the row's scale, not 1e-14."""
    return dict(rtol=tol["rtol"], atol=tol["atol"] * max(1.0, float(np.abs(expected).max(initial=0.0))))


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def upstream(shape, seed: int, dtype=np.float64) -> np.ndarray:
    """A random dL/dy of ``shape`` (never all ones: with gamma = 1 that hides LayerNorm's bugs)."""
    return rng_for(seed).normal(size=shape).astype(dtype)


def norm_params(D: int, seed: int, dtype=np.float64) -> tuple:
    """(gamma, beta) (D,), random and away from (1, 0), so that a forgotten gamma or beta shows."""
    rng = rng_for(seed)
    return (rng.uniform(0.5, 1.5, size=D) * rng.choice([-1.0, 1.0], size=D)).astype(dtype), \
        rng.normal(0.0, 0.5, size=D).astype(dtype)


def stream(shape, seed: int, dtype=np.float64, small_rows: bool = True) -> np.ndarray:
    """x (..., D): off-centre rows of very different scales (x's mean and spread both matter).

    With ``small_rows`` one row has a spread of ~3e-3 (variance ~1e-5, as large as eps:
    where eps sits shows) and one is constant (variance 0: eps alone keeps it finite).
    """
    rng = rng_for(seed)
    *lead, D = shape
    n = int(np.prod(lead, dtype=np.int64)) if lead else 1
    scale = np.exp(rng.uniform(np.log(0.3), np.log(5.0), size=(n, 1)))  # (n, 1)
    offset = rng.normal(0.0, 2.0, size=(n, 1))
    x = offset + scale * rng.normal(size=(n, D))  # (n, D)
    if small_rows and n >= 3:
        x[n - 2] = 0.1 * offset[n - 2] + 3e-3 * rng.normal(size=D)  # variance ~1e-5 ~ eps; a small offset
        # (x - mu loses the offset's last bits: a row far off-centre is ill-conditioned, not a test of the code)
        x[n - 1] = offset[n - 1]  # a constant row
    return x.reshape(shape).astype(dtype)


# ---- minitf's LayerNorm, and what the classic mistakes compute -------------------------------------------
def minitf_layernorm(gamma, beta, eps) -> LayerNorm:
    ln = LayerNorm(gamma.shape[0], eps, dtype=gamma.dtype)
    ln.params["gamma"][...] = gamma
    ln.params["beta"][...] = beta
    return ln


def layernorm(x, gamma, beta, eps) -> np.ndarray:
    """minitf's y = LayerNorm(x)."""
    return minitf_layernorm(gamma, beta, eps).forward(x)[0]


def layernorm_grads(dy, x, gamma, eps) -> tuple:
    """minitf's (dx, dgamma, dbeta)."""
    ln = minitf_layernorm(gamma, np.zeros_like(gamma), eps)
    _, cache = ln.forward(x)
    ln.zero_grad()
    dx = ln.backward(dy, cache)
    return dx, ln.grads["gamma"].copy(), ln.grads["beta"].copy()


def variant_layernorm(x, gamma, beta, eps, *, axis=-1, ddof=0, eps_where="inside"):
    """LayerNorm with one thing changed: the axes of the statistics, the variance's divisor
    (ddof = 1: N - 1) or where eps sits ("inside" the root, "outside" it, "none")."""
    mu = x.mean(axis=axis, keepdims=True)
    var = ((x - mu) ** 2).sum(axis=axis, keepdims=True) / (np.prod([x.shape[a] for a in np.atleast_1d(axis)]) - ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        if eps_where == "inside":
            x_hat = (x - mu) / np.sqrt(var + eps)
        elif eps_where == "outside":
            x_hat = (x - mu) / (np.sqrt(var) + eps)
        else:
            x_hat = (x - mu) / np.sqrt(var)
    return gamma * x_hat + beta


def layernorm_backward_variants(dy, x, gamma, eps) -> dict:
    """dx as each classic backward mistake computes it (the forward's statistics right)."""
    mu = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    x_hat = (x - mu) * rstd
    g = dy * gamma
    mean_g = g.mean(axis=-1, keepdims=True)
    proj = x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    plain = dy - dy.mean(axis=-1, keepdims=True) - x_hat * (dy * x_hat).mean(axis=-1, keepdims=True)
    return {
        "constants": rstd * g,
        "no mean term": rstd * (g - proj),
        "no variance term": rstd * (g - mean_g),
        "no gamma": rstd * plain,
    }


# ---- inputs left alone ----------------------------------------------------------------------------------
READ_ONLY = "the residual stream x is read again by the next sub-layer, the weights by every step"  # why a test checks that an input came back unchanged (asserts.call)


def expect_dict(name: str, out, keys: tuple) -> dict:
    """The student's dict of gradients, with every key."""
    if not isinstance(out, dict):
        fail(f"{name}: expected a dict {{{', '.join(repr(k) + ': ...' for k in keys)}}}, received {type(out).__name__}")
    missing = [k for k in keys if k not in out]
    if missing:
        fail(f"{name}: the dict lacks {missing}; expected the keys {', '.join(keys)}")
    return out
