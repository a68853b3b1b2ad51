"""Homework 9, task 9.1 (top-k and top-p filtering): the public tests.

The expected results are minitf's own ``top_k_filter`` and ``top_p_filter`` (Hugging Face's
``TopKLogitsWarper`` and ``TopPLogitsWarper``).  A filter's answer is exact: the same tokens
removed (``-inf``), the kept logits unchanged to the bit."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.decoding import top_k_filter as minitf_top_k
from minitf.decoding import top_p_filter as minitf_top_p
from minitf.grading.asserts import as_array, call, fail, softmax_overflow
from minitf.grading.problems import shapes

from .common import first_index

HOMEWORK = "hw09"
task1 = pytest.mark.hw09_task1
MARGIN = 1e-6  # no cumulative mass within this of 1 - p: float32 and float64 sums agree on every token


# =====================================================================================
# Task 9.1 -- problems
# =====================================================================================
def distinct_logits(rng, shape, scale=2.0, dtype=np.float64) -> np.ndarray:
    """Random logits without ties (a tie would make the order among equals matter)."""
    return (rng.normal(0.0, scale, size=shape) + 1e-3 * rng.permutation(int(np.prod(shape))).reshape(shape)
            ).astype(dtype)


def tied_logits(rng, shape, dtype=np.float64) -> np.ndarray:
    """Small integers: many ties, among them ties at the k-th largest."""
    return rng.integers(-3, 4, size=shape).astype(dtype)


def sorted_mass(logits: np.ndarray) -> tuple:
    """(order, probs, cum): tokens from least to most likely, their probabilities, and the mass of
    each with all below it (float64)."""
    z = np.asarray(logits, dtype=np.float64)
    order = np.argsort(z, axis=-1, kind="stable")
    zs = np.take_along_axis(z, order, axis=-1)
    p = np.exp(zs - zs[..., -1:])
    p /= p.sum(axis=-1, keepdims=True)
    return order, p, np.cumsum(p, axis=-1)


def top_p_problem(rng, shape, p: float, dtype=np.float64) -> np.ndarray:
    """Logits whose cumulative masses all stay MARGIN away from 1 - p (redrawn until they do)."""
    for _ in range(1000):
        logits = distinct_logits(rng, shape, scale=1.5, dtype=dtype)
        if np.abs(sorted_mass(logits)[2] - (1.0 - p)).min() > MARGIN:
            return logits
    raise RuntimeError("no top-p problem away from the boundary")  # pragma: no cover


def large_top_p_problem(rng, shape, p: float, shift: float, dtype) -> np.ndarray:
    """Logits around ``shift`` (a confident model, a low temperature): softmax does not change when a
    constant is added to a row, but np.exp of these overflows. Redrawn until, in this dtype, no two logits
    of a row tie, no cumulative mass is within MARGIN of 1 - p, and every row loses a token."""
    for _ in range(1000):
        logits = (distinct_logits(rng, shape, scale=1.5) + shift).astype(dtype)
        rows = np.sort(logits, axis=-1)
        if ((np.diff(rows, axis=-1) > 0).all() and np.abs(sorted_mass(logits)[2] - (1.0 - p)).min() > MARGIN
                and np.isneginf(minitf_top_p(logits, p)).any(axis=-1).all()):
            return logits
    raise RuntimeError("no large-logit top-p problem away from the boundary")  # pragma: no cover


# =====================================================================================
# Task 9.1 -- checks
# =====================================================================================
def call_filter(fn, name: str, logits, *args):
    out = call(fn, logits, *args, names=["logits"])
    return as_array(f"{name}'s result", out, shape=logits.shape, kind="f", dtype=logits.dtype)


def kept_count(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x).sum(axis=-1)


def describe(logits, idx) -> str:
    row = np.asarray(logits[idx[:-1]], dtype=np.float64)
    return f"row {list(idx[:-1])} (logits {np.round(row, 3).tolist()})"


def expect_same_filter(name: str, got: np.ndarray, expected: np.ndarray, logits: np.ndarray, what: str,
                       diagnose=None) -> None:
    """Same tokens removed (-inf), kept logits unchanged; else the classic mistake, or the first row that differs."""
    gone, gone_exp = np.isneginf(got), np.isneginf(expected)
    if (gone != gone_exp).any():
        mistake = diagnose(got) if diagnose else None
        if mistake:
            fail(f"{name} ({what}): {mistake}")
        idx = first_index(gone != gone_exp)
        fail(f"{name} ({what}): token {idx[-1]} of {describe(logits, idx)} is "
             f"{'removed' if gone[idx] else 'kept'}; minitf's {name} {'keeps' if gone[idx] else 'removes'} it "
             f"(kept: {int(kept_count(got)[idx[:-1]])} tokens, expected {int(kept_count(expected)[idx[:-1]])})")
    if not np.array_equal(np.where(gone, 0, got), np.where(gone, 0, logits)):
        idx = first_index(~gone & (got != logits))
        fail(f"{name} ({what}): the kept logit {idx} is {got[idx]!r}, the input held {logits[idx]!r}: a filter "
             f"replaces removed logits by -inf and leaves the kept ones as they are")


# ---- what classic mistakes compute -------------------------------------------------------------------
def top_k_diagnosis(logits, k):
    def diagnose(got):
        n, n_exp = kept_count(got), kept_count(minitf_top_k(logits, k))
        if (n == k - 1).all():
            return (f"keeps k-1 = {k - 1} tokens per row, not k = {k}: the threshold is the k-th largest value "
                    f"(np.sort(row)[V - k]), and every logit >= it stays (an off-by-one in the index, or > instead "
                    f"of >=)")
        if (n == k).all() and (n_exp > k).any():
            idx = first_index(n_exp > k)
            return (f"keeps exactly k = {k} tokens even where logits tie with the k-th largest: "
                    f"{describe(logits, idx + (0,))} has {int(n_exp[idx])} logits >= its k-th largest value. "
                    f"Hugging Face's TopKLogitsWarper removes only logits *below* the k-th value, so tied tokens "
                    f"all stay (do not pick k indices with argsort)")
        return None
    return diagnose


def top_p_diagnosis(logits, p, m=1):
    order, probs, cum = sorted_mass(logits)
    V = logits.shape[-1]
    # the mistake: from the top, keep a token while the mass of it and everything above it is <= p
    keep_sorted = 1.0 - cum + probs <= p
    without_crossing = []  # with and without the most likely tokens forced in
    for forced in (False, True):
        ks = keep_sorted.copy()
        ks[..., V - m:] |= forced
        kept = np.empty_like(ks)
        np.put_along_axis(kept, order, ks, axis=-1)
        without_crossing.append(kept)

    def diagnose(got):
        kept = np.isfinite(got)
        if any(np.array_equal(kept, w) for w in without_crossing):
            return (f"drops the token that crosses p = {p:g}: it keeps the most likely tokens only while their "
                    f"total stays <= p, so what is left holds less than p. Keep the smallest set whose mass "
                    f"reaches p, the crossing token included: remove a token only if its cumulative mass from "
                    f"the bottom (its own and every less likely one's) is <= 1 - p")
        with np.errstate(over="ignore"):
            overflows = not np.isfinite(np.exp(logits)).all()
        if overflows and kept.all() and not np.isfinite(minitf_top_p(logits, p)).all():
            return softmax_overflow(f"keeps every token of logits as large as {float(np.max(logits)):.4g}", "logits",
                                    also="The probabilities are then nan, and a nan mass is never <= 1 - p")
        n_p = max(round(p * V), 1)
        if (kept_count(got) == n_p).all():
            return (f"keeps {n_p} = p * V tokens in every row: p is a probability mass, not a share of the "
                    f"vocabulary")
        return None
    return diagnose


# =====================================================================================
# Task 9.1 -- the tests
# =====================================================================================
@task1
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_top_k_matches_minitf(submission, homework_seed, dtype):
    """Distinct logits (B, V) and (B, K, V): exactly the k largest stay."""
    top_k = submission.function("top_k_filter")
    rng = np.random.default_rng(homework_seed + 100 + (dtype == "float32"))
    (B1, _, V1), (B2, K2, V2) = shapes(homework_seed, [(4, 1, 11), (2, 3, 9)], B=(1, 5), K=(1, 4), V=(4, 16))
    for shape in ((B1, V1), (B2, K2, V2)):
        logits = distinct_logits(rng, shape, dtype=np.dtype(dtype))
        k = int(rng.integers(2, shape[-1] - 1))
        got = call_filter(top_k, "top_k_filter", logits, k)
        expect_same_filter("top_k_filter", got, minitf_top_k(logits, k), logits, f"k = {k}, shape {shape}",
                           top_k_diagnosis(logits, k))


@task1
def test_top_k_keeps_every_tie_with_the_kth(submission, homework_seed):
    """Integer-valued logits: every logit equal to the k-th largest stays (more than k tokens)."""
    top_k = submission.function("top_k_filter")
    rng = np.random.default_rng(homework_seed + 110)
    logits = tied_logits(rng, (6, 10))
    k = 3
    got = call_filter(top_k, "top_k_filter", logits, k)
    expect_same_filter("top_k_filter", got, minitf_top_k(logits, k), logits, f"k = {k}, tied logits",
                       top_k_diagnosis(logits, k))


@task1
@pytest.mark.parametrize("k", ["0", "V", "V+3"])
def test_top_k_zero_or_at_least_v_keeps_everything(submission, homework_seed, k):
    """k = 0 or k >= V keeps every token -- and, on the same logits, k = 2 keeps two (a filter that
    removes nothing must not pass these tests)."""
    top_k = submission.function("top_k_filter")
    logits = distinct_logits(np.random.default_rng(homework_seed + 120), (3, 7))
    k_value = {"0": 0, "V": 7, "V+3": 10}[k]
    got = call_filter(top_k, "top_k_filter", logits, k_value)
    expect_same_filter("top_k_filter", got, logits, logits, f"k = {k_value} with V = 7: nothing is removed")
    got = call_filter(top_k, "top_k_filter", logits, 2)
    expect_same_filter("top_k_filter", got, minitf_top_k(logits, 2), logits, "k = 2 with V = 7",
                       top_k_diagnosis(logits, 2))


@task1
@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_top_p_matches_minitf(submission, homework_seed, p):
    """(B, V) and (B, K, V) in float64 and float32: the smallest set of most likely tokens with mass >= p."""
    top_p = submission.function("top_p_filter")
    rng = np.random.default_rng(homework_seed + 130 + int(100 * p))
    (B1, _, V1), (B2, K2, V2) = shapes(homework_seed, [(6, 1, 12), (2, 3, 10)], B=(1, 6), K=(1, 4), V=(3, 16))
    for shape, dtype in (((B1, V1), np.float64), ((B2, K2, V2), np.float32)):
        logits = top_p_problem(rng, shape, p, dtype)
        got = call_filter(top_p, "top_p_filter", logits, p)
        expect_same_filter("top_p_filter", got, minitf_top_p(logits, p), logits, f"p = {p:g}, shape {shape}",
                           top_p_diagnosis(logits, p))


@task1
def test_top_p_keeps_the_crossing_token(submission, homework_seed):
    """Rows where the most likely token alone holds less than p: the kept mass is >= p in every row."""
    top_p = submission.function("top_p_filter")
    rng = np.random.default_rng(homework_seed + 140)
    p = 0.6
    logits = top_p_problem(rng, (8, 9), p)
    got = call_filter(top_p, "top_p_filter", logits, p)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    kept_mass = (probs * np.isfinite(got)).sum(-1)
    if (kept_mass < p).any():
        b = int(np.argmin(kept_mass))
        mistake = top_p_diagnosis(logits, p)(got)
        fail(f"top_p_filter (p = {p}): row {b} keeps mass {kept_mass[b]:.4f} < p"
             + (f": it {mistake}" if mistake else ""))
    expect_same_filter("top_p_filter", got, minitf_top_p(logits, p), logits, f"p = {p}", top_p_diagnosis(logits, p))


@task1
def test_top_p_min_tokens_to_keep(submission, homework_seed):
    """A small p with min_tokens_to_keep = 3: the 3 most likely always stay (Hugging Face's min_tokens_to_keep)."""
    top_p = submission.function("top_p_filter")
    rng = np.random.default_rng(homework_seed + 150)
    p, m = 0.3, 3
    logits = top_p_problem(rng, (6, 8), p)
    got = call_filter(top_p, "top_p_filter", logits, p, m)
    keep = np.isfinite(minitf_top_p(logits, p)) | np.isfinite(minitf_top_k(logits, m))
    expected = np.where(keep, logits, -np.inf)
    expect_same_filter("top_p_filter", got, expected, logits, f"p = {p}, min_tokens_to_keep = {m}",
                       top_p_diagnosis(logits, p, m))


@task1
@pytest.mark.parametrize("m", ["V", "V+2"])
def test_top_p_min_tokens_to_keep_at_least_v_keeps_everything(submission, homework_seed, m):
    """min_tokens_to_keep >= V (a small vocabulary, or one token for each of many beams): every token stays,
    whatever p, as k >= V does for top-k -- and on the same logits min_tokens_to_keep = 2 still filters."""
    top_p = submission.function("top_p_filter")
    rng = np.random.default_rng(homework_seed + 180 + (m == "V+2"))
    (B, V), = shapes(homework_seed, [(4, 6)], B=(1, 6), V=(3, 12))
    p = 0.2
    m_value = {"V": V, "V+2": V + 2}[m]
    logits = top_p_problem(rng, (B, V), p)
    order = np.argsort(logits, axis=-1, kind="stable")
    for _ in range(1000):  # the nucleus with the 2 most likely forced in must remove a token somewhere
        if (sorted_mass(logits)[2][..., :V - 2] <= 1.0 - p).any():
            break
        logits = top_p_problem(rng, (B, V), p)
        order = np.argsort(logits, axis=-1, kind="stable")
    else:
        raise RuntimeError(f"no top-p problem that removes a token with 2 kept in 1000 draws (B={B}, V={V}): the "
                           f"grader's problem, not the submission's")
    got = call_filter(top_p, "top_p_filter", logits, p, m_value)
    if np.isneginf(got).any():
        # what the slice remove[..., V - m:] gives when V - m < 0: only the last m - V tokens forced in
        remove_sorted = sorted_mass(logits)[2] <= 1.0 - p
        remove_sorted[..., V - m_value:] = False
        wrong = np.empty_like(remove_sorted)
        np.put_along_axis(wrong, order, remove_sorted, axis=-1)
        if m_value > V and np.array_equal(np.isneginf(got), wrong):
            fail(f"top_p_filter (p = {p:g}, min_tokens_to_keep = {m_value} > V = {V}): tokens are removed, but "
                 f"min_tokens_to_keep >= V keeps every token. The slice [..., V - min_tokens_to_keep:] starts at "
                 f"a negative index when min_tokens_to_keep > V, counted from the end: it forces in only the last "
                 f"min_tokens_to_keep - V = {m_value - V} tokens. Clip the start at 0, or slice [..., -m:]")
    expect_same_filter("top_p_filter", got, logits, logits,
                       f"p = {p:g}, min_tokens_to_keep = {m_value} with V = {V}: nothing is removed")
    got = call_filter(top_p, "top_p_filter", logits, p, 2)
    keep = np.isfinite(minitf_top_p(logits, p)) | np.isfinite(minitf_top_k(logits, 2))
    expect_same_filter("top_p_filter", got, np.where(keep, logits, -np.inf), logits,
                       f"p = {p:g}, min_tokens_to_keep = 2", top_p_diagnosis(logits, p, 2))


@task1
def test_top_p_one_keeps_everything_and_a_tiny_p_keeps_the_top_token(submission, homework_seed):
    top_p = submission.function("top_p_filter")
    logits = distinct_logits(np.random.default_rng(homework_seed + 160), (5, 7))
    got = call_filter(top_p, "top_p_filter", logits, 1.0)
    expect_same_filter("top_p_filter", got, logits, logits, "p = 1: nothing is removed")
    got = call_filter(top_p, "top_p_filter", logits, 1e-9)
    expect_same_filter("top_p_filter", got, minitf_top_k(logits, 1), logits,
                       "p = 1e-9: only the most likely token stays (it alone crosses p)")


@task1
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_top_p_large_logits(submission, homework_seed, dtype):
    """Logits far from 0 (around 1000 in float64, 120 in float32, where np.exp overflows): the same tokens
    stay as for the same logits near 0, since softmax does not change when a constant is added to a row."""
    top_p = submission.function("top_p_filter")
    rng = np.random.default_rng(homework_seed + 170 + (dtype == "float32"))
    (B, V), = shapes(homework_seed, [(5, 9)], B=(1, 6), V=(4, 16))
    shift = {"float64": 1000.0, "float32": 120.0}[dtype]
    p = 0.7
    logits = large_top_p_problem(rng, (B, V), p, shift, np.dtype(dtype))
    got = call_filter(top_p, "top_p_filter", logits, p)
    expect_same_filter("top_p_filter", got, minitf_top_p(logits, p), logits,
                       f"p = {p:g}, {dtype} logits around {shift:g}", top_p_diagnosis(logits, p))
