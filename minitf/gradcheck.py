"""Gradient checking: compare a hand-written backward with centred finite differences.

The textbook centred difference is

    df/dx_i  ~  (f(x + h e_i) - f(x - h e_i)) / 2h                          error O(h^2)

Its error has two parts: truncation, which shrinks with h, and rounding noise of order
eps * |f| / h, which grows as h shrinks.  Attention's W_q and W_k often have gradients
a million times smaller than the loss; at the best h for this formula (~1e-5) the noise
is then larger than the 1e-6 relative agreement we ask for.  So ``numerical_gradient``
uses the fourth-order centred stencil, which tolerates a 100x larger h:

    df/dx_i  ~  [8 (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))] / 12h           error O(h^4)

written as differences of differences, so that a function that does not depend on x_i
gives exactly 0.  Kinks break every stencil: check ReLU with a small h and inputs away
from 0.

Always in float64: with float32's ~1e-7 resolution the difference quotient is noise.
A scalar is needed, so a layer's output ``y`` is reduced with a *random* upstream
gradient G:  f = sum(y * G).  Then df/dy = G, and the backward receives ``G`` as
``dout``.  (An all-ones G would hide bugs: with gamma = 1, LayerNorm's input gradient
is exactly zero for it.)
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .module import Module


def rel_error(a, b) -> float:
    """max over entries of |a - b| / max(1e-8, |a| + |b|)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"rel_error: expected arrays of one shape, got {a.shape} and {b.shape}")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))


def sample_indices(shape, max_entries: int | None, rng: np.random.Generator) -> list[tuple]:
    """All multi-indices of ``shape``, or ``max_entries`` of them drawn without replacement."""
    size = int(np.prod(shape))
    flat = np.arange(size) if max_entries is None or size <= max_entries else \
        np.sort(rng.choice(size, size=max_entries, replace=False))
    return [np.unravel_index(i, shape) for i in flat]


def numerical_gradient(f: Callable[[], float], x: np.ndarray, h: float = 1e-3,
                       indices: Sequence[tuple] | None = None) -> np.ndarray:
    """Fourth-order centred-difference gradient of the scalar ``f()`` with respect to ``x``, perturbing
    ``x`` **in place** (and restoring it).  Entries not in ``indices`` are left as 0.

    Returns an array shaped like ``x``.
    """
    if x.dtype != np.float64:
        raise TypeError(f"x: expected float64 for finite differences, got {x.dtype}")
    grad = np.zeros_like(x)
    if indices is None:
        indices = list(np.ndindex(x.shape))
    for idx in indices:
        old = x[idx]

        def f_at(delta):
            x[idx] = old + delta
            value = f()
            x[idx] = old
            return value

        near = f_at(h) - f_at(-h)  # = 2h f' + (h^3 / 3) f''' + O(h^5)
        far = f_at(2 * h) - f_at(-2 * h)  # = 4h f' + (8 h^3 / 3) f''' + O(h^5)
        grad[idx] = (8 * near - far) / (12 * h)  # the h^3 terms cancel
    return grad


def check_gradients(f: Callable[[], float], analytic: dict[str, np.ndarray], arrays: dict[str, np.ndarray],
                    *, max_entries: int | None = 40, h: float = 1e-3, seed: int = 0) -> dict[str, float]:
    """Compare ``analytic[name]`` with the numerical gradient of ``f`` w.r.t. ``arrays[name]``,
    on (up to ``max_entries``) sampled entries of each array.  Returns ``name -> rel_error``."""
    rng = np.random.default_rng(seed)
    report = {}
    for name, x in arrays.items():
        if np.asarray(x).dtype != np.float64:
            raise TypeError(f"{name}: expected a float64 array for finite differences, got {np.asarray(x).dtype} "
                            f"(build the layer or model with dtype=np.float64 and pass float64 inputs)")
    for name, x in arrays.items():
        idx = sample_indices(x.shape, max_entries, rng)
        num = numerical_gradient(f, x, h=h, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        report[name] = rel_error(np.asarray(analytic[name])[picked], num[picked])
    return report


def check_layer(layer: Module, inputs: Sequence[np.ndarray], *, forward_kwargs: dict | None = None,
                max_entries: int | None = 40, h: float = 1e-3, seed: int = 0) -> dict[str, float]:
    """Check ``layer.backward`` against finite differences for every parameter and every
    float input.

    ``layer.forward(*inputs, **forward_kwargs) -> (y, cache)`` and
    ``layer.backward(G, cache) -> dinput`` (or a tuple, one per input).  Everything must
    be float64.  Returns ``{"input0": err, ..., "param:W": err, ...}``.
    """
    forward_kwargs = forward_kwargs or {}
    rng = np.random.default_rng(seed)
    y, _ = layer.forward(*inputs, **forward_kwargs)
    G = rng.standard_normal(np.shape(y))  # random upstream gradient

    def f() -> float:
        out, _ = layer.forward(*inputs, **forward_kwargs)
        return float(np.sum(out * G))

    layer.zero_grad()
    _, cache = layer.forward(*inputs, **forward_kwargs)
    dinputs = layer.backward(G, cache)
    if not isinstance(dinputs, tuple):
        dinputs = (dinputs,)

    float_idx = [i for i, x in enumerate(inputs) if np.issubdtype(np.asarray(x).dtype, np.floating)]
    if len(dinputs) == len(inputs):  # one per input, None for integer inputs
        pairs = [(i, dinputs[i]) for i in float_idx]
    elif len(dinputs) == len(float_idx):  # one per float input
        pairs = list(zip(float_idx, dinputs))
    else:
        raise ValueError(
            f"layer.backward: expected one gradient per input ({len(inputs)}) or per float input "
            f"({len(float_idx)}), got {len(dinputs)}")
    analytic, arrays = {}, {}
    for i, dx in pairs:
        if dx is None:
            raise ValueError(f"layer.backward: expected a gradient for float input{i}, got None")
        analytic[f"input{i}"], arrays[f"input{i}"] = dx, inputs[i]
    for name, p in layer.parameters().items():
        analytic[f"param:{name}"], arrays[f"param:{name}"] = layer.gradients()[name].copy(), p
    return check_gradients(f, analytic, arrays, max_entries=max_entries, h=h, seed=seed)


def randomize_norms_and_biases(module: Module, seed: int = 0) -> Module:
    """Give every LayerNorm gain and bias and every attention bias a random value, in place.

    Freshly built, they are 1 and 0, and a check at that point can pass by accident: with
    gamma = 1 and beta = 0 some terms of a wrong backward vanish.  Random values make
    every path carry a distinct signal.  Returns ``module``.
    """
    rng = np.random.default_rng(seed)
    for name, p in module.parameters().items():
        if name.endswith("gamma"):
            p[...] = 1.0 + 0.3 * rng.standard_normal(p.shape)
        elif name.endswith(("beta", "b_q", "b_k", "b_v", "b_o")):
            p[...] = 0.3 * rng.standard_normal(p.shape)
    return module
