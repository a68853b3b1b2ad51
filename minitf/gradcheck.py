"""Gradient checking: compare a hand-written backward with centred finite differences.

    df/dx_i  ~  (f(x + h e_i) - f(x - h e_i)) / 2h          error O(h^2)

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


def numerical_gradient(f: Callable[[], float], x: np.ndarray, h: float = 1e-5,
                       indices: Sequence[tuple] | None = None) -> np.ndarray:
    """Centred-difference gradient of the scalar ``f()`` with respect to ``x``, perturbing
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
        x[idx] = old + h
        f_plus = f()
        x[idx] = old - h
        f_minus = f()
        x[idx] = old
        grad[idx] = (f_plus - f_minus) / (2 * h)
    return grad


def check_gradients(f: Callable[[], float], analytic: dict[str, np.ndarray], arrays: dict[str, np.ndarray],
                    *, max_entries: int | None = 40, h: float = 1e-5, seed: int = 0) -> dict[str, float]:
    """Compare ``analytic[name]`` with the numerical gradient of ``f`` w.r.t. ``arrays[name]``,
    on (up to ``max_entries``) sampled entries of each array.  Returns ``name -> rel_error``."""
    rng = np.random.default_rng(seed)
    report = {}
    for name, x in arrays.items():
        idx = sample_indices(x.shape, max_entries, rng)
        num = numerical_gradient(f, x, h=h, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        report[name] = rel_error(np.asarray(analytic[name])[picked], num[picked])
    return report


def check_layer(layer: Module, inputs: Sequence[np.ndarray], *, forward_kwargs: dict | None = None,
                max_entries: int | None = 40, h: float = 1e-5, seed: int = 0) -> dict[str, float]:
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

    analytic, arrays = {}, {}
    float_inputs = [(i, x) for i, x in enumerate(inputs) if np.issubdtype(np.asarray(x).dtype, np.floating)]
    for (i, x), dx in zip(float_inputs, dinputs):
        analytic[f"input{i}"], arrays[f"input{i}"] = dx, x
    for name, p in layer.parameters().items():
        analytic[f"param:{name}"], arrays[f"param:{name}"] = layer.gradients()[name].copy(), p
    return check_gradients(f, analytic, arrays, max_entries=max_entries, h=h, seed=seed)
