"""Input checks that fail early with a message naming the argument, what was expected
and what was given.  Layers call these on entry; nothing here is part of the maths."""
from __future__ import annotations

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


def check_positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def check_probability(name: str, value, low_inclusive: bool = True, high_inclusive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    lo_ok = value >= 0 if low_inclusive else value > 0
    hi_ok = value <= 1 if high_inclusive else value < 1
    if not (lo_ok and hi_ok):
        interval = ("[" if low_inclusive else "(") + "0, 1" + ("]" if high_inclusive else ")")
        raise ValueError(f"{name}: expected a value in {interval}, got {value!r}")
    return float(value)


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
