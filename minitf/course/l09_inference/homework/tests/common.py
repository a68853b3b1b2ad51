"""What every task's tests of homework 9 share: calling a student's function (inputs left
alone, a tuple of the right length back) and the first position where two arrays differ.

The test problems are drawn from the run's ``homework_seed`` (``minitf grade`` draws a
fresh one each time), so their answers cannot be recorded beforehand."""
from __future__ import annotations

import numpy as np

from minitf.grading.asserts import call_read_only, fail


def call(fn, name: str, names: list, args: tuple, n_out: int | None = None):
    """``fn(*args)`` with its array arguments read-only; with ``n_out``, a tuple of that many
    results is expected back."""
    out = call_read_only(fn, names, args, "the caller still needs them")
    if n_out is not None and (not isinstance(out, (tuple, list)) or len(out) != n_out):
        fail(f"{name}: expected a tuple of {n_out} results, received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    return out


def first_index(flags: np.ndarray) -> tuple:
    """The first index where ``flags`` is True, as a tuple of ints."""
    return tuple(int(i) for i in np.argwhere(flags)[0])
