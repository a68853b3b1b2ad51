"""Tests for minitf/gradcheck.py: the checker itself must be right, and must be able to fail."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.gradcheck import check_gradients, check_layer, numerical_gradient, rel_error, sample_indices
from minitf.module import Module


# ---- rel_error ------------------------------------------------------------------------------
def test_rel_error_hand_values():
    assert rel_error(1.0, 1.0) == 0.0
    assert rel_error(1.0, 1.1) == pytest.approx(0.1 / 2.1, rel=1e-12)
    assert rel_error(-2.0, 2.0) == pytest.approx(1.0)  # opposite signs: the largest possible
    assert rel_error(3.0, 0.0) == pytest.approx(1.0)
    # denominator floor 1e-8: two tiny numbers are not "100% different"
    assert rel_error(0.0, 1e-10) == pytest.approx(1e-10 / 1e-8)
    assert rel_error(0.0, 0.0) == 0.0
    # the max over entries, not the mean
    assert rel_error([1.0, 1.0, 5.0], [1.0, 1.0, 3.0]) == pytest.approx(2.0 / 8.0)
    assert rel_error(np.zeros((0, 3)), np.zeros((0, 3))) == 0.0


def test_rel_error_rejects_shape_mismatch():
    with pytest.raises(ValueError, match=r"expected arrays of one shape, got \(2,\) and \(3,\)"):
        rel_error(np.zeros(2), np.zeros(3))


# ---- numerical_gradient -----------------------------------------------------------------------
def test_numerical_gradient_of_sum_of_cubes_is_3x2(rng):
    x = rng.standard_normal((3, 4))
    x0 = x.copy()
    num = numerical_gradient(lambda: float(np.sum(x**3)), x)
    # the stencil has no truncation error on a cubic: what is left is rounding
    np.testing.assert_allclose(num, 3 * x0**2, rtol=0, atol=1e-9)
    assert rel_error(num, 3 * x0**2) < 1e-8
    np.testing.assert_array_equal(x, x0)  # perturbed in place, restored exactly


def test_numerical_gradient_is_fourth_order(rng):
    """With h = 1e-2 on exp, a second-order stencil errs by h^2/6 ~ 2e-5 (relative); the
    fourth-order one by h^4/30 ~ 3e-10."""
    x = rng.uniform(-1.0, 1.0, 6)
    num = numerical_gradient(lambda: float(np.sum(np.exp(x))), x, h=1e-2)
    assert rel_error(num, np.exp(x)) < 1e-9


def test_numerical_gradient_is_exactly_zero_where_f_does_not_depend_on_x(rng):
    x = rng.standard_normal(4)
    num = numerical_gradient(lambda: float(np.sin(x[0]) * 3.7), x)
    assert num[0] == pytest.approx(3.7 * np.cos(x[0]), rel=1e-10)
    np.testing.assert_array_equal(num[1:], 0.0)  # not 1e-13: exactly zero


def test_numerical_gradient_only_fills_requested_indices(rng):
    x = rng.standard_normal(5)
    num = numerical_gradient(lambda: float(np.sum(np.sin(x))), x, indices=[(1,), (3,)])
    np.testing.assert_allclose(num[[1, 3]], np.cos(x[[1, 3]]), rtol=1e-9)
    np.testing.assert_array_equal(num[[0, 2, 4]], 0.0)


def test_numerical_gradient_refuses_float32():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"^x: expected float64 for finite differences, got float32"):
        numerical_gradient(lambda: float(x.sum()), x)


def test_sample_indices(rng):
    every = [tuple(int(i) for i in t) for t in sample_indices((2, 3), None, rng)]
    assert every == list(np.ndindex(2, 3))
    assert len(sample_indices((2, 3), 100, rng)) == 6  # fewer entries than asked: all of them
    picked = [tuple(int(i) for i in t) for t in sample_indices((10, 10), 7, np.random.default_rng(0))]
    assert len(picked) == len(set(picked)) == 7
    assert all(0 <= a < 10 and 0 <= b < 10 for a, b in picked)
    again = [tuple(int(i) for i in t) for t in sample_indices((10, 10), 7, np.random.default_rng(0))]
    assert picked == again  # the seed decides


def test_check_gradients_reports_each_array(rng):
    a, b = rng.standard_normal(4), rng.standard_normal((2, 3))

    def f():
        return float(np.sum(a**2) + np.sum(np.exp(b)))

    report = check_gradients(f, {"a": 2 * a, "b": np.exp(b)}, {"a": a, "b": b}, max_entries=None)
    assert set(report) == {"a", "b"}
    assert max(report.values()) < 1e-8
    wrong = check_gradients(f, {"a": 2 * a, "b": np.exp(b) * 1.01}, {"a": a, "b": b}, max_entries=None)
    assert wrong["a"] < 1e-8 and wrong["b"] == pytest.approx(0.01 / 2.01, rel=1e-4)


# ---- check_layer can pass and can fail -----------------------------------------------------------
class Scale(Module):
    """y = x * w + c (w, c of shape (D,)), with a choice of deliberately broken backward."""

    def __init__(self, D: int, rng, bug: str | None = None):
        super().__init__(np.float64)
        self.add_param("w", rng.standard_normal(D))
        self.add_param("c", rng.standard_normal(D))
        self.bug = bug

    def forward(self, x):
        return x * self.params["w"] + self.params["c"], x

    def backward(self, dy, x):
        D = x.shape[-1]
        dw = (dy * x).reshape(-1, D).sum(axis=0)
        if self.bug == "dw_sign":
            dw = -dw
        self.grads["w"] += dw
        if self.bug != "forget_dc":
            self.grads["c"] += dy.reshape(-1, D).sum(axis=0)
        dx = dy * self.params["w"]
        if self.bug == "dx_ignores_w":
            dx = dy.copy()
        return dx


def test_check_layer_passes_a_correct_backward(rng, assert_grads_ok):
    report = check_layer(Scale(5, rng), [rng.standard_normal((2, 3, 5))], max_entries=None)
    assert set(report) == {"input0", "param:w", "param:c"}
    assert_grads_ok(report)


@pytest.mark.parametrize("bug, key", [("dx_ignores_w", "input0"), ("dw_sign", "param:w"),
                                      ("forget_dc", "param:c")])
def test_check_layer_catches_a_broken_backward(rng, assert_grads_ok, bug, key):
    report = check_layer(Scale(5, rng, bug=bug), [rng.standard_normal((2, 3, 5))], max_entries=None)
    assert report[key] > 0.1, report  # the broken gradient is flagged
    others = {k: v for k, v in report.items() if k != key}
    assert max(others.values()) <= 1e-6, report  # and only it
    with pytest.raises(AssertionError, match=rf"worst entry '{key}'"):
        assert_grads_ok(report)


def test_check_layer_handles_a_layer_whose_upstream_matters(rng):
    """The upstream gradient is random: a backward that ignores dy's values (correct only for
    an all-ones upstream) is caught."""

    class Sum(Module):
        def __init__(self):
            super().__init__(np.float64)

        def forward(self, x):
            return x.copy(), None

        def backward(self, dy, cache):
            return np.ones_like(dy)

    report = check_layer(Sum(), [rng.standard_normal((3, 4))], max_entries=None)
    assert report["input0"] > 0.1


class ShiftedLookup(Module):
    """y = 2 x + W_E[ids]: an integer input first, a float input second.  Its backward returns
    one gradient per input, ``(None, dx)``, as check_layer's docstring asks."""

    def __init__(self, rng):
        super().__init__(np.float64)
        self.add_param("W_E", rng.standard_normal((6, 3)))

    def forward(self, ids, x):
        return 2.0 * x + self.params["W_E"][ids], ids

    def backward(self, dy, ids):
        np.add.at(self.grads["W_E"], ids.reshape(-1), dy.reshape(-1, 3))
        return None, 2.0 * dy


def test_check_layer_pairs_each_gradient_with_its_own_input(rng, assert_grads_ok):
    ids, x = np.array([[1, 4], [4, 0]]), rng.standard_normal((2, 2, 3))
    report = check_layer(ShiftedLookup(rng), [ids, x], max_entries=None)
    assert set(report) == {"input1", "param:W_E"}
    assert_grads_ok(report)


def test_check_layer_refuses_a_backward_that_returns_too_few_gradients(rng):
    """A backward that forgets an input's gradient must not pass by leaving it unchecked."""

    class ForgetsSecondInput(Module):
        def __init__(self):
            super().__init__(np.float64)

        def forward(self, a, b):
            return a * b, (a, b)

        def backward(self, dy, cache):
            a, b = cache
            return dy * b  # d/da only: d/db is missing

    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    with pytest.raises(ValueError, match=r"backward.*expected .*2.*got 1"):
        check_layer(ForgetsSecondInput(), [a, b], max_entries=None)


def test_check_gradients_names_an_array_that_is_not_float64():
    W, x = np.ones((2, 2)), np.ones(2, np.float32)
    with pytest.raises(TypeError, match=r"^input0: expected a float64 array for finite differences, got float32"):
        check_gradients(lambda: float((W @ x).sum()), {"param:W": W, "input0": x}, {"param:W": W, "input0": x})
