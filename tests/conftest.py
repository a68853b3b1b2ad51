"""Shared fixtures for the minitf test suite.

* ``rng`` -- a fresh, seeded ``np.random.Generator`` per test (tests never share state).
* ``assert_grads_ok`` -- assert that every entry of a :func:`minitf.gradcheck.check_layer`
  (or ``check_gradients``) report is within tolerance; on failure the message names the
  worst entry first, then lists the whole report.
* ``FunctionLayer`` -- wraps a free ``forward(x) -> (y, cache)`` / ``backward(dy, cache)``
  pair (activations, softmax) as a parameter-free :class:`minitf.module.Module`, so that
  ``check_layer`` can check it like any other layer.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import pytest

from minitf.module import Module

GRAD_TOL = 1e-6  # relative error allowed between a hand-written backward and finite differences


def assert_report_ok(report: dict[str, float], tol: float = GRAD_TOL, ignore: Iterable[str] = ()) -> None:
    """Assert ``max(report.values()) <= tol`` over the keys not in ``ignore``."""
    ignore = set(ignore)
    missing = ignore - set(report)
    assert not missing, f"ignored keys {sorted(missing)} are not in the report {sorted(report)}"
    checked = {k: v for k, v in report.items() if k not in ignore}
    assert checked, "empty gradient-check report: nothing was checked"
    worst = max(checked, key=lambda k: checked[k])
    listing = ", ".join(f"{k}={v:.2e}" for k, v in sorted(checked.items(), key=lambda kv: -kv[1]))
    assert np.isfinite(checked[worst]) and checked[worst] <= tol, (
        f"gradient check failed: worst entry {worst!r} has relative error {checked[worst]:.3e} "
        f"> {tol:.0e}; full report: {listing}")


class FunctionLayer(Module):
    """A parameter-free module around a ``(forward, backward)`` pair of free functions."""

    def __init__(self, forward: Callable, backward: Callable):
        super().__init__(np.float64)
        self._forward, self._backward = forward, backward

    def forward(self, x):
        return self._forward(x)

    def backward(self, dy, cache):
        return self._backward(dy, cache)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture
def assert_grads_ok():
    return assert_report_ok


@pytest.fixture(name="FunctionLayer")
def function_layer_cls():
    return FunctionLayer
