"""Homework 5, task 5.4 (sinusoidal positions): the public tests.

minitf's answer is ``minitf.layers.sinusoidal_table``, the table its ``PositionalEncoding``
adds to the embeddings.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, close, expect_close, fail
from minitf.layers import sinusoidal_table

HOMEWORK = "hw05"
task4 = pytest.mark.hw05_task4
TOL = dict(rtol=1e-9, atol=1e-12)  # sin and cos of the same float64 angles: ~1e-15 apart


def table_variant(max_len: int, D: int, *, layout: str = "interleaved", exponent: str = "2i",
                  start: int = 0) -> np.ndarray:
    """The table with one thing changed.

    layout: "interleaved" (right: sin in even columns, cos in odd), "halves" (sines in the
    first ceil(D/2) columns, cosines after), "swapped" (cos in even columns, sin in odd);
    exponent: "2i" (right: column pair i uses 10000^(2i/D)), "i" (10000^(i/D), i the pair
    index), "column" (10000^(j/D), j the column's own index, odd columns included);
    start: the first row's position.
    """
    t = np.arange(start, start + max_len, dtype=np.float64)[:, None]  # (max_len, 1)
    j = np.arange(D, dtype=np.float64)  # (D,) the column
    pair = np.floor(j / 2)  # i for columns 2i and 2i+1
    if exponent == "2i":
        power = 2 * pair / D
    elif exponent == "i":
        power = pair / D
    else:
        power = j / D
    angle = t / 10000.0 ** power  # (max_len, D) each column's own angle
    even = (j % 2 == 0)
    if layout == "interleaved":
        return np.where(even, np.sin(angle), np.cos(angle))
    if layout == "swapped":
        return np.where(even, np.cos(angle), np.sin(angle))
    half = (D + 1) // 2  # "halves": frequency k in columns k (sin) and half + k (cos)
    k = np.arange(half, dtype=np.float64)
    a = t / 10000.0 ** ({"2i": 2 * k, "i": k, "column": 2 * k}[exponent] / D)  # (max_len, half)
    return np.concatenate([np.sin(a), np.cos(a[:, : D - half])], axis=1)


MISTAKES = [
    (dict(layout="halves"), "the sines and cosines were put in two halves (all sines, then all cosines): minitf, like "
                            "Vaswani et al., interleaves them, P[t, 2i] = sin, P[t, 2i+1] = cos of the same angle"),
    (dict(layout="swapped"), "sine and cosine are swapped: the even columns 2i hold sin(t / 10000^(2i/D)), the odd "
                             "columns 2i+1 the cosine"),
    (dict(exponent="i"), "the exponent is 10000^(i/D) with i the pair's index: it is 10000^(2i/D), 2i being the "
                         "even column's index, so that the frequencies span 1 to 1/10000 across the D columns"),
    (dict(exponent="column"), "each column used its own index j in 10000^(j/D): the odd column 2i+1 shares the "
                              "frequency of its even partner 2i, 10000^(2i/D)"),
    (dict(start=1), "the positions start at 1: row t is position t, counting from 0, so P[0] = (0, 1, 0, 1, ...)"),
    (dict(layout="halves", start=1), "the positions start at 1 and the sines and cosines were put in two halves: "
                                     "rows count from position 0, and sin and cos alternate column by column"),
]


def check_table(P, max_len: int, D: int) -> None:
    P = as_array("sinusoidal_positions' P", P, shape=(max_len, D), kind="f", dtype=np.float64)
    expected = sinusoidal_table(max_len, D)
    if close(P, expected, **TOL):
        return
    for kwargs, message in MISTAKES:
        if close(P, table_variant(max_len, D, **kwargs), **TOL):
            fail(message)
    if close(P[:-1], expected[1:], **TOL):
        fail("the positions start at 1: row t is position t, counting from 0, so P[0] = (0, 1, 0, 1, ...)")
    expect_close("sinusoidal_positions' P", P, expected, **TOL,
                 hint="P[t, 2i] = sin(t / 10000^(2i/D)), P[t, 2i+1] = cos(t / 10000^(2i/D)), t from 0")


@task4
def test_sinusoidal_positions(submission, homework_seed):
    """An even and an odd d_model, drawn afresh."""
    sinusoidal_positions = submission.function("sinusoidal_positions")
    rng = np.random.default_rng(homework_seed + 400)
    for D in (2 * int(rng.integers(4, 17)), 2 * int(rng.integers(3, 9)) + 1):
        max_len = int(rng.integers(20, 60))
        check_table(sinusoidal_positions(max_len, D), max_len, D)


@task4
def test_sinusoidal_positions_small(submission, homework_seed):
    """The corners: one position; D = 1 and D = 2."""
    sinusoidal_positions = submission.function("sinusoidal_positions")
    for max_len, D in ((1, 8), (5, 1), (7, 2), (3 + homework_seed % 5, 6)):
        check_table(sinusoidal_positions(max_len, D), max_len, D)
