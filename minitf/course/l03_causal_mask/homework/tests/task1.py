"""Homework 3, task 3.1 (the causal mask and the key-padding mask): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import scaled_dot_product_attention
from minitf.grading.asserts import as_array, expect_close, fail
from minitf.grading.problems import shapes
from minitf.masks import causal_mask as minitf_causal_mask
from minitf.masks import key_padding_mask

from .common import PAD, expect_inputs_unchanged

HOMEWORK = "hw03"
task1 = pytest.mark.hw03_task1
BLOCKED_AT_MOST = -1e4  # large enough that exp(score + mask) is 0 in float32 and float64


# =====================================================================================
# Task 3.1 -- additive masks: what every mask must be
# =====================================================================================
def check_additive(name: str, mask, shape: tuple, dtype) -> np.ndarray:
    """The mask is a float array of ``shape`` and ``dtype`` holding 0 (attend) or a large finite
    negative number (blocked); the classic wrong kinds of mask are named."""
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        fail(f"{name} returned a boolean array; minitf's masks are additive floats, added to the scores before "
             f"the softmax: 0 where attention is allowed, a large negative number (MASK_VALUE = -1e9) where it is "
             f"blocked")
    m = as_array(name, mask, kind="f")
    if m.shape != shape:
        return m  # the caller names what the shape means
    as_array(name, m, dtype=dtype)
    if np.isneginf(m).any():
        fail(f"{name} holds -inf; use a large finite negative number such as -1e9. A row whose every key is "
             f"blocked then stays finite, where -inf makes the stable softmax compute -inf - (-inf) = nan")
    if not np.isfinite(m).all():
        fail(f"{name} holds non-finite values {np.unique(m[~np.isfinite(m)]).tolist()}")
    if np.isin(m, (0.0, 1.0)).all() and (m == 1).any():
        fail(f"{name} is a 1/0 'keep' mask (1 = attend, 0 = blocked): a keep mask can only be multiplied, and "
             f"multiplied after the softmax it leaves the blocked keys in the softmax's denominator (rows that do not "
             f"sum to 1, blocked keys still moving the output). Build an additive mask: 0 where attention is "
             f"allowed, MASK_VALUE = -1e9 where it is blocked")
    if (m > 0).any():
        fail(f"{name} holds positive values (up to {m.max():g}): an additive mask holds 0 (attend) or a large "
             f"negative number (blocked)")
    allowed = m == 0
    if not (allowed | (m <= BLOCKED_AT_MOST)).all():
        idx = tuple(int(i) for i in np.argwhere(~(allowed | (m <= BLOCKED_AT_MOST)))[0])
        fail(f"{name}{list(idx)} = {m[idx]:g}: an additive mask holds 0 (attend) or a large negative number such "
             f"as -1e9 (blocked); anything above {BLOCKED_AT_MOST:g} leaves the key partly visible after the softmax")
    return m


# =====================================================================================
# Task 3.1 (a) -- the causal mask
# =====================================================================================
def check_causal(mask, T: int, S: int | None, offset: int, dtype) -> np.ndarray:
    """Check ``causal_mask(T, S, offset, dtype)``; name the classic mistakes."""
    n_keys = offset + T if S is None else S
    call = f"causal_mask({T}" + (f", S={S}" if S is not None else "") + (f", offset={offset}" if offset else "") + ")"
    m = check_additive(call, mask, (T, n_keys), dtype)
    if m.shape != (T, n_keys):
        why = (f"with S=None there are offset + T = {offset} + {T} keys: the {offset} cached positions and the "
               f"{T} new ones" if S is None and offset else f"T = {T} queries by S = {n_keys} keys")
        fail(f"{call}: expected shape (T, S) = {(T, n_keys)} ({why}), received shape {m.shape}")
    allowed = m == 0
    t, s = np.indices((T, n_keys))
    q_pos = offset + t  # the absolute position of query t
    if offset and np.array_equal(allowed, s <= t):
        fail(f"{call} ignores the offset: query 0 sits at absolute position offset = {offset} and sees keys 0 .. "
             f"{offset}, yet your mask lets it see key 0 only. Block key s when s > offset + t")
    if (allowed & (s == q_pos + 1)).any():
        t0 = int(np.argwhere(allowed & (s == q_pos + 1))[0][0])
        fail(f"{call}: query {t0} (position {offset + t0}) can see position {offset + t0 + 1}: the decoder input "
             f"there is y_{offset + t0}, the label position {offset + t0} must predict, so this mask leaks the "
             f"answer (label leakage). Block every key s > offset + t")
    if (allowed & (s > q_pos)).any():
        t0, s0 = np.argwhere(allowed & (s > q_pos))[0]
        fail(f"{call}: query {t0} (position {offset + t0}) can see the later position {s0}: a causal mask blocks "
             f"every key after the query's own position")
    if (~allowed & (s == q_pos)).any():
        t0 = int(np.argwhere(~allowed & (s == q_pos))[0][0])
        fail(f"{call}: the diagonal is blocked (query {t0} cannot see its own position {offset + t0}): a position "
             f"must see itself, its input y_(t-1) is the newest thing it may know. Block only s > t")
    if (~allowed & (s < q_pos)).any():
        t0, s0 = np.argwhere(~allowed & (s < q_pos))[0]
        fail(f"{call}: query {t0} (position {offset + t0}) cannot see the earlier position {s0}: a causal mask "
             f"blocks the future only")
    return m


@task1
def test_causal_mask_for_training(submission, homework_seed):
    """offset = 0, S = T: the training mask, (T, T)."""
    causal_mask = submission.function("causal_mask")
    T = int(np.random.default_rng(homework_seed).integers(3, 10))
    for T_, dtype in [(5, np.float32), (1, np.float32), (T, np.float64)]:
        check_causal(causal_mask(T_, dtype=dtype), T_, None, 0, dtype)
        check_causal(causal_mask(T_, None, 0, dtype), T_, None, 0, dtype)


@task1
def test_causal_mask_with_an_offset(submission, homework_seed):
    """New queries after ``offset`` cached positions: decoding with a cache of keys."""
    causal_mask = submission.function("causal_mask")
    rng = np.random.default_rng(homework_seed + 1)
    offset = int(rng.integers(2, 7))
    cases = [(1, None, offset), (3, None, offset), (2, offset + 2 + int(rng.integers(1, 4)), offset), (4, 4, 0)]
    for T, S, off in cases:  # (1, None, offset): one decoding step sees every key
        check_causal(causal_mask(T, S=S, offset=off, dtype=np.float32), T, S, off, np.float32)


@task1
def test_a_chunk_of_queries_agrees_with_the_full_causal_pass(submission, homework_seed):
    """The last T queries against all S keys, masked with causal_mask(T, offset=S-T), must give
    exactly the last T rows of the full causal pass (minitf's attention, in the grader)."""
    causal_mask = submission.function("causal_mask")
    rng = np.random.default_rng(homework_seed + 2)
    S = int(rng.integers(5, 9))
    T = int(rng.integers(1, S))
    mask = check_causal(causal_mask(T, S=None, offset=S - T, dtype=np.float64), T, None, S - T, np.float64)
    Q, K, V = (rng.normal(size=(2, 2, S, 4)) for _ in range(3))  # (B, H, S, Dh) every position
    full, _ = scaled_dot_product_attention(Q, K, V, minitf_causal_mask(S, dtype=np.float64))  # (B, H, S, Dh)
    chunk, _ = scaled_dot_product_attention(Q[:, :, S - T:], K, V, mask)  # (B, H, T, Dh)
    expect_close(f"the last {T} queries of {S} under your causal_mask({T}, offset={S - T})", chunk, full[:, :, S - T:],
                 rtol=1e-12, atol=1e-12, hint="they must equal the last rows of the full causal pass")


# =====================================================================================
# Task 3.1 (b) -- the key-padding mask
# =====================================================================================
def padded_ids(rng, B: int, S: int, pad_id: int) -> np.ndarray:
    """(B, S) ids in [4, 12) (pad_id excluded), right-padded, one row left-padded, one row unpadded."""
    ids = rng.integers(4, 12, size=(B, S))
    ids[ids == pad_id] = 12
    lengths = rng.integers(1, S, size=B)
    ids[np.arange(S)[None, :] >= lengths[:, None]] = pad_id
    ids[0] = rng.integers(4, 12, size=S)  # no padding
    ids[0][ids[0] == pad_id] = 12
    ids[-1] = np.concatenate([np.full(2, pad_id), rng.integers(4, 12, size=S - 2)])  # left padding
    ids[-1][2:][ids[-1][2:] == pad_id] = 12
    return ids


def check_padding(padding_mask, ids, pad_id: int, dtype) -> np.ndarray:
    B, S = ids.shape
    before = ids.copy()
    out = padding_mask(ids, pad_id, dtype)
    expect_inputs_unchanged(padding_mask, "padding_mask", [("ids", before)])
    m = check_additive("padding_mask", out, (B, 1, 1, S), dtype)
    if m.shape != (B, 1, 1, S):
        if m.shape == (B, 1, S, 1) or m.shape == (B, S, 1):
            fail(f"padding_mask has shape {m.shape}: that masks padded *queries* (rows of the scores), not padded "
                 f"keys. A real query would still read the padding. Block keys: shape (B, 1, 1, S) = {(B, 1, 1, S)}")
        if m.shape == (B, S):
            fail(f"padding_mask has shape (B, S) = {m.shape}: it does not broadcast against the scores (B, H, T, S) "
                 f"as a mask on the keys. Add the head and query axes: (B, 1, 1, S), e.g. mask[:, None, None, :]")
        fail(f"padding_mask: expected shape (B, 1, 1, S) = {(B, 1, 1, S)}, received shape {m.shape}")
    blocked = m[:, 0, 0, :] != 0  # (B, S)
    is_pad = ids == pad_id
    if np.array_equal(blocked, ~is_pad):
        fail("padding_mask blocks the real tokens and lets the padding through: it is inverted. MASK_VALUE where "
             "ids == pad_id, 0 elsewhere")
    if pad_id != PAD and np.array_equal(blocked, ids == PAD):
        fail(f"padding_mask blocks token {PAD}, not pad_id = {pad_id}: use the pad_id argument")
    if not np.array_equal(blocked, is_pad):
        b, s = np.argwhere(blocked != is_pad)[0]
        fail(f"padding_mask[{b}, 0, 0, {s}]: ids[{b}, {s}] = {ids[b, s]} is "
             f"{'padding' if is_pad[b, s] else 'a real token'}, so the key must be "
             f"{'blocked (MASK_VALUE)' if is_pad[b, s] else 'allowed (0)'}; row {b}: ids {ids[b].tolist()}, "
             f"mask {m[b, 0, 0].tolist()}")
    return m


@task1
def test_padding_mask(submission, homework_seed):
    padding_mask = submission.function("padding_mask")
    rng = np.random.default_rng(homework_seed + 3)
    sizes = shapes(homework_seed, [(4, 7), (3, 5), (1, 4)], B=(1, 5), S=(3, 8))
    for (B, S), (pad_id, dtype) in zip(sizes, [(PAD, np.float32), (3, np.float64), (PAD, np.float32)]):
        check_padding(padding_mask, padded_ids(rng, B, S, pad_id), pad_id, dtype)


@task1
def test_the_two_masks_add_up_and_stay_finite(submission, homework_seed):
    """causal_mask(T) + padding_mask(ids) on a left-padded batch: (B, 1, T, T), finite in float64 and in
    float32 (a cell blocked twice holds -2e9), and minitf's attention under it gives what it gives under
    minitf's own masks -- fully masked rows included."""
    causal_mask = submission.function("causal_mask")
    padding_mask = submission.function("padding_mask")
    rng = np.random.default_rng(homework_seed + 4)
    B, T = 3, int(rng.integers(4, 8))
    ids = padded_ids(rng, B, T, PAD)  # the last row starts with two pads: its queries 0 and 1 see only padding
    Q, K, V = (rng.normal(size=(B, 2, T, 4)) for _ in range(3))
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):  # in float32 too: a sum of two masks must not overflow
        name = "" if dtype == np.float64 else f" in {np.dtype(dtype).name}"
        causal = check_causal(causal_mask(T, dtype=dtype), T, None, 0, dtype)
        padding = check_padding(padding_mask, ids, PAD, dtype)
        with np.errstate(over="ignore"):
            mask = causal + padding  # (B, 1, T, T)
        if not np.isfinite(mask).all():
            if np.isfinite(causal).all() and np.isfinite(padding).all():
                fail(f"causal_mask(T) + padding_mask(ids){name} holds {mask.min():g}: each mask is finite, but a cell "
                     f"blocked by both adds their blocking values, {causal.min():g} + {padding.min():g}, and that "
                     f"overflows {np.dtype(dtype).name}. A fully masked row then gives -inf - (-inf) = nan in the "
                     f"stable softmax. Block with MASK_VALUE = -1e9: large enough that exp(score + mask) is 0, small "
                     f"enough that masks add up (-2e9) in float32 and float64")
            fail(f"causal_mask(T) + padding_mask(ids){name} is not finite: both masks must use a finite MASK_VALUE")
        out, _ = scaled_dot_product_attention(*(x.astype(dtype) for x in (Q, K, V)), mask)
        expected, _ = scaled_dot_product_attention(*(x.astype(dtype) for x in (Q, K, V)),
                                                   minitf_causal_mask(T, dtype=dtype)
                                                   + key_padding_mask(ids, PAD, dtype=dtype))
        expect_close(f"minitf's attention under your causal_mask + padding_mask{name}", out, expected, rtol=tol,
                     atol=tol, hint="it must equal the attention under minitf's own masks")
