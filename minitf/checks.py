"""Input checks that fail early with a message naming the argument, what was expected
and what was given.  Nothing here is part of the maths.

Checks run at the boundaries -- configs, public entry points, the command line -- so the
functions students read stay mostly maths.  A few named helpers cover almost every case:

* :func:`check_int`, :func:`check_number` -- an integer / a finite number in a range;
* :func:`check_choice` -- one of a set of choices;
* :func:`check_instance` -- an object of the expected class;
* :func:`check_shape`, :func:`check_last_dim`, :func:`check_float`, :func:`check_token_ids`
  -- arrays;
* :func:`as_rng` -- a seed or a ``np.random.Generator``;
* :func:`key_mismatch` -- two sets of names (checkpoints, optimizer state).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def _fmt(expected: Sequence) -> str:
    return "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"


def check_shape(name: str, x, expected: Sequence, hint: str = "") -> None:
    """Raise ``ValueError`` unless ``x.shape`` matches ``expected``.

    ``expected`` holds ints (must match) and ``None`` (any size), e.g. ``(None, None, 128)``.
    """
    shape = np.shape(x)
    if len(shape) == len(expected):
        for e, s in zip(expected, shape):
            if e is not None and e != s:
                break
        else:
            return  # (a plain loop: this runs on every layer call, so it is kept cheap)
    extra = f" ({hint})" if hint else ""
    raise ValueError(f"{name}: expected shape {_fmt(expected)}{extra}, got {tuple(shape)}")


def check_last_dim(name: str, x, n: int, hint: str = "") -> None:
    """Raise ``ValueError`` unless ``x``'s last axis has length ``n`` (leading axes free).

    The check every position-wise layer needs (Linear, LayerNorm); one tuple comparison
    when the shape is right, :func:`check_shape`'s message when it is not.
    """
    shape = np.shape(x)
    if shape[-1:] != (n,):
        check_shape(name, x, (None,) * (len(shape) - 1) + (n,) if shape else (None, n), hint)


def check_float(name: str, x) -> None:
    """Raise ``TypeError`` unless ``x`` is a floating-point array."""
    dt = np.asarray(x).dtype
    if not np.issubdtype(dt, np.floating):
        raise TypeError(f"{name}: expected a float32 or float64 array, got dtype {dt}")


def check_token_ids(name: str, ids, vocab_size: int, allow: Sequence[int] = ()) -> np.ndarray:
    """Return ``ids`` as an integer array after checking dtype and range ``[0, vocab_size)``.

    ``allow`` lists extra values accepted outside the range (e.g. ``-100`` in labels).
    """
    arr = np.asarray(ids)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected an integer array of token ids, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= vocab_size)
    for a in allow:
        bad &= arr != a
    if bad.any():
        first = arr[bad].flat[0]
        allowed = f" (or {', '.join(map(str, allow))})" if allow else ""
        raise ValueError(
            f"{name}: expected token ids in [0, {vocab_size}){allowed}, got {first} "
            f"at index {tuple(int(i) for i in np.argwhere(bad)[0])}"
        )
    return arr


def _is_int(value) -> bool:
    """An int or NumPy integer, but not a bool (``True`` is an int to Python, never to us)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value) -> bool:
    """An int, float or NumPy number, but not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _interval(low, high, low_open: bool = False, high_open: bool = False) -> str:
    """``>= 1``, ``in [0, 1)``, ``> 0`` ... as an error message says it."""
    if high is None:
        return f"{'>' if low_open else '>='} {low}"
    if low is None:
        return f"{'<' if high_open else '<='} {high}"
    return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"


def check_int(name: str, value, low: int | None = None, high: int | None = None, hint: str = "") -> int:
    """``value`` as an ``int`` after checking it is an integer (not a bool) in ``[low, high]``.

    ``check_int("n_heads", n, low=1)`` -> "n_heads: expected a positive integer, got 0";
    ``check_int("k", k, 0, 3)`` -> "k: expected an integer in [0, 3], got 5".  ``hint`` adds a
    parenthesis after what was expected ("0 = off").
    """
    in_range = (low is None or (_is_int(value) and value >= low)) and (high is None or (_is_int(value) and value <= high))
    if not (_is_int(value) and in_range):
        kind = {(1, None): "a positive integer", (0, None): "a non-negative integer"}.get((low, high))
        if kind is None:
            kind = "an integer" + ("" if low is None and high is None else " " + _interval(low, high))
        raise ValueError(f"{name}: expected {kind}{f' ({hint})' if hint else ''}, got {value!r}")
    return int(value)


def check_number(name: str, value, low: float | None = None, high: float | None = None, *,
                 low_open: bool = False, high_open: bool = False, hint: str = "") -> float:
    """``value`` as a ``float`` after checking it is a finite number (not a bool) between
    ``low`` and ``high`` (inclusive unless ``low_open`` / ``high_open``).

    ``check_number("dropout", p, 0, 1, high_open=True)`` -> "dropout: expected a finite number in [0, 1),
    got 1.5"; ``check_number("lr", lr, 0, None, low_open=True)`` -> "lr: expected a positive finite number, got 0".
    """
    ok = _is_number(value) and math.isfinite(value) \
        and (low is None or (value > low if low_open else value >= low)) \
        and (high is None or (value < high if high_open else value <= high))
    if not ok:
        if (low, high, low_open) == (0, None, True):
            kind = "a positive finite number"
        else:
            kind = "a finite number" + ("" if low is None and high is None else
                                        " " + _interval(low, high, low_open, high_open))
        raise ValueError(f"{name}: expected {kind}{f' ({hint})' if hint else ''}, got {value!r}")
    return float(value)


def check_choice(name: str, value, choices: Sequence):
    """``value`` unchanged after checking it is one of ``choices``.

    ``check_choice("activation", a, ACTIVATIONS)`` -> "activation: expected one of 'relu', 'gelu', got 'tanh'".
    """
    def same_kind(c) -> bool:  # True is not 1, np.int64(1) is; a string is a string
        if isinstance(c, bool):
            return isinstance(value, (bool, np.bool_))
        if isinstance(c, int):
            return _is_int(value)
        return isinstance(value, type(c))

    if not any(same_kind(c) and value == c for c in choices):
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_instance(name: str, value, cls: type | tuple, what: str | None = None):
    """``value`` unchanged after checking ``isinstance(value, cls)``; ``TypeError`` otherwise.

    ``what`` says what is expected in words (default: the class name).
    """
    if not isinstance(value, cls):
        names = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        raise TypeError(f"{name}: expected {what or 'a ' + names}, got {type(value).__name__}")
    return value


def as_rng(name: str, rng) -> np.random.Generator:
    """A ``np.random.Generator``: ``rng`` itself, or a new one seeded with a non-negative int.

    Every random thing in minitf takes one of the two (DESIGN: explicit seeds only).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if _is_int(rng) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise TypeError(f"{name}: expected a np.random.Generator or a non-negative integer seed, got {rng!r}")


def key_mismatch(expected, got) -> str:
    """Empty if the two collections of names are equal; otherwise an error-message fragment
    ``"missing [...]; unexpected [...]"`` (sorted, cut short after ten names each)."""
    def listing(names):
        names = sorted(names)
        more = f", ... ({len(names) - 10} more)" if len(names) > 10 else ""
        return "[" + ", ".join(repr(n) for n in names[:10]) + more + "]"

    missing, unexpected = set(expected) - set(got), set(got) - set(expected)
    parts = ([f"missing {listing(missing)}"] if missing else []) + \
            ([f"unexpected {listing(unexpected)}"] if unexpected else [])
    return "; ".join(parts)
