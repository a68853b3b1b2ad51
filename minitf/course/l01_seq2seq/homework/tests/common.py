"""What every task's tests of homework 1 share: the tolerances, calling the student's function
with a check that it left its inputs alone, reading the dict of gradients it returns, and
recognising a classic mistake by the numbers it computes instead.

Each task module draws its problems from the run's ``homework_seed`` (the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand, and computes
minitf's answer in this (the grader's) process, from minitf's own modules loaded with the
problem's weights.
"""
from __future__ import annotations

import numpy as np

from minitf.grading.asserts import as_array, close, fail

# Forward tolerances: two float64 implementations of the same formula agree to ~1e-15.
FORWARD_TOL = {np.dtype(np.float64): dict(rtol=1e-9, atol=1e-11), np.dtype(np.float32): dict(rtol=1e-4, atol=1e-5)}
# The backward, float64: a backward written out agrees with minitf's to ~1e-15 (the reference uses at
# most 2% of this tolerance on 300 random problems of every task); central finite differences of the
# forward reach only ~1e-10 to 1e-11, and fail -- the task is the backward itself.
BACKWARD_TOL = dict(rtol=1e-11, atol=1e-13)


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def uniform_params(rng: np.random.Generator, shapes: dict, scale: float, dtype=np.float64) -> dict:
    """A dict of arrays U(-scale, scale) (biases nonzero, so that a forgotten bias shows)."""
    return {name: rng.uniform(-scale, scale, size=shape).astype(dtype) for name, shape in shapes.items()}


def load(module, params: dict) -> None:
    """Copy ``params`` into a minitf module's parameters of the same names."""
    for name, value in params.items():
        module.params[name][...] = value


# ---- inputs left alone ----------------------------------------------------------------------------------
READ_ONLY = "the same weights and states are reused at every step and by every row"  # why a test checks that an input came back unchanged (asserts.call)


# ---- what comes back ---------------------------------------------------------------------------------------
def pair(out, fn_name: str, what: str) -> tuple:
    """``out`` as a pair, or fail saying what was expected."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"{fn_name}: expected a pair {what}, received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    return tuple(out)


def gradient_dict(out, fn_name: str, shapes: dict, dtype=np.float64) -> dict:
    """The student's dict of gradients, every entry checked for shape and dtype: name -> array."""
    if not isinstance(out, dict):
        fail(f"{fn_name}: expected a dict {{{', '.join(repr(k) + ': ...' for k in shapes)}}}, "
             f"received {type(out).__name__}")
    missing = [k for k in shapes if k not in out]
    if missing:
        fail(f"{fn_name}: the dict lacks {missing}; expected the keys {', '.join(shapes)}")
    return {k: as_array(k, out[k], shape=shape, kind="f", dtype=dtype) for k, shape in shapes.items()}


def all_close(got: dict, expected: dict, keys=None, tol: dict = BACKWARD_TOL) -> bool:
    """Every entry of ``keys`` (default: all of ``expected``) within tolerance."""
    return all(close(got[k], expected[k], **tol) for k in (keys or expected))


def wrong_keys(got: dict, expected: dict, tol: dict = BACKWARD_TOL) -> list:
    return [k for k in expected if not close(got[k], expected[k], **tol)]


def matches_variant(got: dict, variant: dict, keys, tol: dict = BACKWARD_TOL) -> bool:
    """The student's wrong entries ``keys`` are what a classic mistake computes (and not empty)."""
    keys = list(keys)
    return bool(keys) and all(close(got[k], variant[k], **tol) for k in keys)
