"""Tests for minitf/checks.py: each helper names the argument, what was expected and what
was given."""
from __future__ import annotations

import re

import numpy as np
import pytest

from minitf.checks import (as_rng, check_choice, check_float, check_instance, check_int, check_last_dim, check_number,
                           check_shape, check_token_ids)


# ---- check_shape ----------------------------------------------------------------------------
def test_check_shape_accepts_matching_shapes_and_wildcards():
    check_shape("x", np.zeros((2, 3, 4)), (2, 3, 4))
    check_shape("x", np.zeros((2, 3, 4)), (None, None, 4))
    check_shape("x", [[1, 2]], (1, 2))  # anything with a shape


@pytest.mark.parametrize("shape, expected, shown", [
    ((2, 3, 5), (None, None, 4), r"\(\*, \*, 4\)"),  # wrong size
    ((3, 4), (None, None, 4), r"\(\*, \*, 4\)"),  # wrong rank
    ((2, 3, 4, 1), (2, 3, 4), r"\(2, 3, 4\)"),  # extra trailing axis
])
def test_check_shape_message(shape, expected, shown):
    got = r"\(" + r", ".join(map(str, shape)) + r"\)"
    with pytest.raises(ValueError, match=rf"^h_enc: expected shape {shown}, got {got}$"):
        check_shape("h_enc", np.zeros(shape), expected)


def test_check_shape_includes_the_hint():
    with pytest.raises(ValueError, match=r"^x: expected shape \(\*, 8\) \(last dim must be D=8\), got \(3, 7\)$"):
        check_shape("x", np.zeros((3, 7)), (None, 8), "last dim must be D=8")


# ---- check_last_dim ---------------------------------------------------------------------------
def test_check_last_dim_accepts_any_leading_axes():
    for shape in [(8,), (3, 8), (2, 3, 8), (1, 1, 1, 8)]:
        check_last_dim("x", np.zeros(shape), 8)


@pytest.mark.parametrize("shape, shown", [
    ((3, 7), r"\(\*, 8\)"),
    ((2, 3, 7), r"\(\*, \*, 8\)"),
    ((8, 1), r"\(\*, 8\)"),  # the last axis, not any axis
    ((7,), r"\(8\)"),  # one axis: (8,) is what would do
    ((), r"\(\*, 8\)"),  # a scalar has no last axis
])
def test_check_last_dim_message(shape, shown):
    got = re.escape(str(tuple(shape)))
    with pytest.raises(ValueError, match=rf"^x: expected shape {shown} \(last dim must be D=8\), got {got}$"):
        check_last_dim("x", np.zeros(shape), 8, "last dim must be D=8")


# ---- check_float ------------------------------------------------------------------------------
def test_check_float():
    check_float("x", np.zeros(3, np.float32))
    check_float("x", np.zeros(3, np.float64))
    with pytest.raises(TypeError, match=r"^x: expected a float32 or float64 array, got dtype int64$"):
        check_float("x", np.zeros(3, np.int64))


# ---- check_token_ids -------------------------------------------------------------------------
def test_check_token_ids_returns_the_integer_array():
    ids = check_token_ids("ids", [[0, 4], [2, 1]], vocab_size=5)
    assert isinstance(ids, np.ndarray) and ids.dtype.kind == "i"
    np.testing.assert_array_equal(ids, [[0, 4], [2, 1]])


def test_check_token_ids_reports_the_first_bad_value_and_its_index():
    with pytest.raises(ValueError, match=r"^labels: expected token ids in \[0, 5\), got 7 at index \(1, 0\)$"):
        check_token_ids("labels", np.array([[0, 4], [7, 9]]), vocab_size=5)
    with pytest.raises(ValueError, match=r"^ids: expected token ids in \[0, 5\), got -3 at index \(2,\)$"):
        check_token_ids("ids", np.array([0, 1, -3]), vocab_size=5)


def test_check_token_ids_allow_list():
    ids = check_token_ids("labels", np.array([1, -100, 4]), vocab_size=5, allow=(-100,))
    np.testing.assert_array_equal(ids, [1, -100, 4])
    with pytest.raises(ValueError, match=r"^labels: expected token ids in \[0, 5\) \(or -100\), got -1"):
        check_token_ids("labels", np.array([1, -100, -1]), vocab_size=5, allow=(-100,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, bool])
def test_check_token_ids_rejects_non_integer_dtypes(dtype):
    name = np.dtype(dtype).name
    pattern = rf"^decoder_input_ids: expected an integer array of token ids, got dtype {name}$"
    with pytest.raises(TypeError, match=pattern):
        check_token_ids("decoder_input_ids", np.zeros((2, 3), dtype), vocab_size=5)


# ---- check_int ------------------------------------------------------------------------------
def test_check_int_returns_a_python_int():
    assert check_int("n_heads", 4, low=1) == 4
    assert type(check_int("n_heads", np.int64(2), low=1)) is int
    assert check_int("k", 3, 0, 3) == 3  # both ends inclusive
    assert check_int("offset", -5) == -5  # no range: any integer


@pytest.mark.parametrize("value", [0, -3, 2.0, True, np.bool_(True), "4", None])
def test_check_int_rejects_non_integers_and_values_below_the_range(value):
    with pytest.raises(ValueError, match=rf"^d_ff: expected a positive integer, got {re.escape(repr(value))}$"):
        check_int("d_ff", value, low=1)


def test_check_int_names_the_range():
    with pytest.raises(ValueError, match=r"^warmup: expected a non-negative integer, got -1$"):
        check_int("warmup", -1, low=0)
    with pytest.raises(ValueError, match=r"^pad_id: expected an integer in \[0, 63\], got 64$"):
        check_int("pad_id", 64, 0, 63)
    with pytest.raises(ValueError, match=r"^t: expected an integer <= 9, got 10$"):
        check_int("t", 10, high=9)


# ---- check_number ------------------------------------------------------------------------------
def test_check_number_half_open_and_closed_intervals():
    assert check_number("p", 0.0, 0, 1, high_open=True) == 0.0
    assert type(check_number("p", np.float32(0.5), 0, 1)) is float
    for bad in (1.0, -0.01, 2):
        with pytest.raises(ValueError, match=rf"^p: expected a finite number in \[0, 1\), got {bad!r}$"):
            check_number("p", bad, 0, 1, high_open=True)
    with pytest.raises(ValueError, match=r"^top_p: expected a finite number in \(0, 1\], got 0.0$"):
        check_number("top_p", 0.0, 0, 1, low_open=True)
    assert check_number("top_p", 1.0, 0, 1, low_open=True) == 1.0


@pytest.mark.parametrize("value", [0, -1e-3, float("inf"), float("nan"), True, "1e-3", None])
def test_check_number_positive(value):
    with pytest.raises(ValueError, match=rf"^lr: expected a positive finite number, got {re.escape(repr(value))}$"):
        check_number("lr", value, 0, None, low_open=True)


# ---- check_choice, check_instance, as_rng ------------------------------------------------------
def test_check_choice():
    assert check_choice("activation", "gelu", ("relu", "gelu")) == "gelu"
    with pytest.raises(ValueError, match=r"^activation: expected one of 'relu', 'gelu', got 'tanh'$"):
        check_choice("activation", "tanh", ("relu", "gelu"))
    with pytest.raises(ValueError, match=r"^early_stopping: expected one of True, False, 'never', got 1$"):
        check_choice("early_stopping", 1, (True, False, "never"))  # 1 == True, but 1 is not a bool


def test_check_instance():
    d = {}
    assert check_instance("params", d, dict) is d
    with pytest.raises(TypeError, match=r"^params: expected a dict, got list$"):
        check_instance("params", [], dict)
    with pytest.raises(TypeError, match=r"^model: expected an EncoderDecoder model, got int$"):
        check_instance("model", 3, (dict, list), what="an EncoderDecoder model")


def test_as_rng_takes_a_generator_or_a_seed():
    g = np.random.default_rng(0)
    assert as_rng("rng", g) is g
    assert as_rng("rng", 7).random() == np.random.default_rng(7).random()
    for bad in (-1, 1.5, True, None):
        with pytest.raises(TypeError, match=r"^rng: expected a np.random.Generator or a non-negative integer seed"):
            as_rng("rng", bad)


def test_key_mismatch_lists_missing_and_unexpected_names():
    from minitf.checks import key_mismatch

    assert key_mismatch({"a", "b"}, ["b", "a"]) == ""
    assert key_mismatch(["a", "b"], ["b", "c"]) == "missing ['a']; unexpected ['c']"
    long = key_mismatch([f"p{i:02d}" for i in range(12)], [])
    assert long.startswith("missing ['p00', 'p01'") and long.endswith("... (2 more)]")
