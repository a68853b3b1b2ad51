"""Homework 2, task 2.4 (many heads: split and merge by reshape): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import MultiHeadAttention, merge_heads, scaled_dot_product_attention, split_heads
from minitf.grading.asserts import as_array, call, expect_close, fail
from minitf.grading.problems import shapes

from .common import SHAPES_HINT, expect_untouched, python_loops, submission_source

HOMEWORK = "hw02"
task4 = pytest.mark.hw02_task4
EXACT = dict(rtol=0.0, atol=0.0)  # a reshape moves numbers and computes nothing: the entries must be identical

SPLIT_NO_TRANSPOSE = (
    "split_heads reshaped (B, T, D) straight to (B, H, T, Dh), without the transpose: that cuts each example's T*D "
    "numbers into H consecutive blocks, so a head gets whole feature vectors of a few positions instead of its own "
    "Dh features of every position -- positions are mixed across heads. Reshape to (B, T, H, Dh) first (split the "
    "features), then transpose to (B, H, T, Dh)")
MERGE_NO_TRANSPOSE = (
    "merge_heads reshaped (B, H, T, Dh) straight to (B, T, D), without transposing back: position t's row then holds "
    "pieces of several positions of one head instead of every head's output at position t. Transpose to "
    "(B, T, H, Dh) first, then reshape to (B, T, D)")


# =====================================================================================
# Task 2.4 -- split and merge
# =====================================================================================
def split_candidates(x: np.ndarray, H: int) -> dict:
    B, T, D = x.shape
    Dh = D // H
    return {
        SPLIT_NO_TRANSPOSE: x.reshape(B, H, T, Dh),
        f"the heads are interleaved: head h took features h, h+H, h+2H, ... (a reshape to (B, T, Dh, H)). Head h "
        f"holds the contiguous slice x[:, :, h*Dh:(h+1)*Dh], here Dh = {Dh}: reshape to (B, T, H, Dh)":
            x.reshape(B, T, Dh, H).transpose(0, 3, 1, 2),
    }


def merge_candidates(x: np.ndarray) -> dict:
    B, H, T, Dh = x.shape
    return {
        MERGE_NO_TRANSPOSE: x.reshape(B, T, H * Dh),
        "the heads are interleaved in the merged features (head h's outputs at columns h, h+H, ...): head h's "
        "output goes to the contiguous columns h*Dh:(h+1)*Dh; transpose to (B, T, H, Dh) and reshape":
            x.transpose(0, 2, 3, 1).reshape(B, T, H * Dh),
    }


STRIDES_C_ORDER = (
    "{what} is right for every C-ordered x but wrong for this Fortran-ordered one (x.flags.f_contiguous, shape "
    "{shape}: the same numbers, laid out in memory first axis fastest): the code depends on the memory layout of x, "
    "e.g. it reads the buffer of x with strides worked out from the shape as if x were C-ordered "
    "(np.lib.stride_tricks.as_strided, np.ndarray over x.data). Strides belong to the array, not to its shape: "
    "reshape and transpose work for any layout")


def _origin(x: np.ndarray, value) -> str:
    """Where in ``x`` (B, T, D) the number ``value`` sits: 'x[b, t, d]'."""
    hits = np.argwhere(x == value)
    return f"x[{', '.join(map(str, hits[0]))}]" if len(hits) else "none of x's entries"


def check_split(split_heads_fn, x: np.ndarray, H: int) -> np.ndarray:
    B, T, D = x.shape
    Dh = D // H
    original = x.copy()
    heads = call(split_heads_fn, x, H, shape_hint="split_heads: reshape (B, T, D) -> (B, T, H, Dh), then transpose")
    if getattr(heads, "shape", None) == (B, T, H, Dh) and T != H:
        fail(f"split_heads returned (B, T, H, Dh) = {(B, T, H, Dh)}: the reshape is right, now bring the heads "
             f"forward with a transpose to (B, H, T, Dh)")
    heads = as_array("heads = split_heads(x, H)", heads, shape=(B, H, T, Dh), kind="f")
    expect_untouched(split_heads_fn, {0: ("x", original)})
    if heads.dtype != x.dtype:
        fail(f"heads: expected dtype {x.dtype} (the dtype of x), received {heads.dtype}")
    expected = split_heads(original, H)
    if not np.array_equal(heads, expected):
        if not x.flags.c_contiguous:  # the C-ordered problems, sent first, passed
            fail(STRIDES_C_ORDER.format(what="split_heads", shape=(B, T, D)))
        for mistake, candidate in split_candidates(original, H).items():
            if np.array_equal(heads, candidate) and not np.array_equal(candidate, expected):
                fail(mistake)
        b, h, t, _ = np.argwhere(heads != expected)[0]
        fail(f"heads[{b}, {h}, {t}, :] should be x[{b}, {t}, {h * Dh}:{(h + 1) * Dh}] (head {h}'s slice of position "
             f"{t}'s features), but heads[{b}, {h}, {t}, 0] is {_origin(original, heads[b, h, t, 0])}")
    return heads


def check_merge(merge_heads_fn, x: np.ndarray) -> np.ndarray:
    B, H, T, Dh = x.shape
    original = x.copy()
    merged = call(merge_heads_fn, x, shape_hint="merge_heads: transpose (B, H, T, Dh) -> (B, T, H, Dh), then reshape")
    merged = as_array("merged = merge_heads(x)", merged, shape=(B, T, H * Dh), kind="f")
    expect_untouched(merge_heads_fn, {0: ("x", original)})
    if merged.dtype != x.dtype:
        fail(f"merged: expected dtype {x.dtype} (the dtype of x), received {merged.dtype}")
    expected = merge_heads(original)
    if not np.array_equal(merged, expected):
        if not x.flags.c_contiguous:  # the C-ordered problems, sent first, passed
            fail(STRIDES_C_ORDER.format(what="merge_heads", shape=(B, H, T, Dh)))
        for mistake, candidate in merge_candidates(original).items():
            if np.array_equal(merged, candidate) and not np.array_equal(candidate, expected):
                fail(mistake)
        b, t, d = np.argwhere(merged != expected)[0]
        fail(f"merged[{b}, {t}, {d}] should be x[{b}, {d // Dh}, {t}, {d % Dh}] (head {d // Dh}'s output at position "
             f"{t}), received {merged[b, t, d]:.6g}; merged[b, t, h*Dh:(h+1)*Dh] == x[b, h, t, :]")
    return merged


SIZES = [((2, 5, 12), 3, np.float64), ((3, 4, 8), 2, np.float32), ((1, 3, 6), 6, np.float64),
         ((2, 1, 8), 4, np.float64), ((2, 4, 8), 1, np.float64), ((2, 6, 6), 2, np.float64)]
"""(B, T, D), H and the dtype: ordinary, Dh = 1, T = 1, H = 1, T = D."""


FORTRAN_SIZES = [((2, 5, 12), 3, np.float64), ((3, 4, 8), 2, np.float32)]
"""(B, T, D), H and the dtype of the Fortran-ordered inputs (x.flags.f_contiguous): an x that is the
transpose of another array's product arrives so, and its memory is not laid out as its shape suggests."""


def drawn_sizes(seed) -> list:
    """Two more sizes on the secret problems (none on the public ones): D = H * Dh drawn."""
    if not getattr(seed, "secret", False):
        return []
    drawn = shapes(seed, [(2, 5, 3, 4), (1, 1, 1, 1)], B=(1, 3), T=(1, 6), H=(1, 4), Dh=(1, 5))
    return [((B, T, H * Dh), H, np.float64) for B, T, H, Dh in drawn]


@task4
def test_split_heads_gives_each_head_its_slice_of_every_position(submission, homework_seed):
    split_heads_fn = submission.function("split_heads")
    rng = np.random.default_rng(homework_seed + 51)
    for shape, H, dtype in SIZES + drawn_sizes(homework_seed):
        check_split(split_heads_fn, rng.standard_normal(shape).astype(dtype), H)
    for shape, H, dtype in FORTRAN_SIZES:  # the same numbers, another memory layout (a transposed product's)
        check_split(split_heads_fn, np.asfortranarray(rng.standard_normal(shape).astype(dtype)), H)


@task4
def test_merge_heads_concatenates_the_heads_of_each_position(submission, homework_seed):
    merge_heads_fn = submission.function("merge_heads")
    rng = np.random.default_rng(homework_seed + 52)
    for (B, T, D), H, dtype in SIZES + drawn_sizes(homework_seed):
        check_merge(merge_heads_fn, rng.standard_normal((B, H, T, D // H)).astype(dtype))
    for (B, T, D), H, dtype in FORTRAN_SIZES:
        check_merge(merge_heads_fn, np.asfortranarray(rng.standard_normal((B, H, T, D // H)).astype(dtype)))


@task4
def test_your_heads_inside_multi_head_attention(submission, homework_seed):
    """merge(split(x)) == x, and minitf's multi-head attention with your split and merge in
    place of its own gives the same output (the attention itself is minitf's, here)."""
    split_heads_fn = submission.function("split_heads")
    merge_heads_fn = submission.function("merge_heads")
    rng = np.random.default_rng(homework_seed + 53)
    B, T, S, D, H = 2, 5, 7, 12, 3
    x = rng.standard_normal((B, T, D))
    round_trip = call(merge_heads_fn, call(split_heads_fn, x, H, shape_hint=SHAPES_HINT), shape_hint=SHAPES_HINT)
    round_trip = as_array("merge_heads(split_heads(x, H))", round_trip, shape=x.shape, kind="f")
    expect_close("merge_heads(split_heads(x, H))", round_trip, x, **EXACT,
                 hint="merge_heads must undo split_heads exactly")
    attn = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        attn.params[name][:] = rng.normal(0, 0.5, size=D)
    p = attn.params
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    Q = call(split_heads_fn, x_q @ p["W_q"] + p["b_q"], H, shape_hint=SHAPES_HINT)  # (B, H, T, Dh)
    K = call(split_heads_fn, x_kv @ p["W_k"] + p["b_k"], H, shape_hint=SHAPES_HINT)  # (B, H, S, Dh)
    V = call(split_heads_fn, x_kv @ p["W_v"] + p["b_v"], H, shape_hint=SHAPES_HINT)  # (B, H, S, Dh)
    Dh = D // H
    Q, K, V = (as_array(n, a, shape=(B, H, L, Dh), kind="f") for n, a, L in (("Q", Q, T), ("K", K, S), ("V", V, S)))
    heads, _ = scaled_dot_product_attention(Q, K, V)  # (B, H, T, Dh)
    o = as_array("o = merge_heads(heads)", call(merge_heads_fn, heads, shape_hint=SHAPES_HINT), shape=(B, T, D), kind="f")
    y = o @ p["W_o"] + p["b_o"]  # (B, T, D)
    expected, _ = attn.forward(x_q, x_kv)
    expect_close("the multi-head attention's output with your split_heads and merge_heads", y, expected,
                 rtol=1e-12, atol=1e-12,
                 hint="split and merge undo each other, but the heads are not each a slice of every position's "
                      "features, so each head attends with pieces of other positions mixed in")


@task4
def test_split_and_merge_have_no_python_loop(submission, homework_seed, request):
    """Lesson 2, section 5: all heads at once, by reshape and transpose."""
    split_heads_fn = submission.function("split_heads")
    merge_heads_fn = submission.function("merge_heads")
    rng = np.random.default_rng(homework_seed + 54)
    x = rng.standard_normal((2, 3, 8))
    check_merge(merge_heads_fn, check_split(split_heads_fn, x, 4))
    loops = python_loops(submission_source(request), ("split_heads", "merge_heads"))
    if loops:
        fail(f"a Python loop over heads (or positions): {'; '.join(loops)}. Heads need no loop: split_heads is one "
             f"reshape, (B, T, D) -> (B, T, H, Dh), and one transpose to (B, H, T, Dh); merge_heads undoes both")
