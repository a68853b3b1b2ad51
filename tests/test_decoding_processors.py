"""Tests for minitf.decoding.processors: no-repeat n-grams, top-k, top-p and temperature,
each by hand and against Hugging Face's formulation."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.decoding import banned_ngram_tokens, top_k_filter, top_p_filter, warp_logits
from minitf.layers.softmax import softmax


# =====================================================================================
# No repeated n-grams
# =====================================================================================
def test_banned_ngram_tokens_by_hand():
    def banned(prefix, n, V=8):
        return set(np.flatnonzero(banned_ngram_tokens(np.array([prefix]), n, V)[0]))

    assert banned([1, 5, 6, 5], 2) == {6}  # "5 6" seen: after 5, no 6
    assert banned([1, 5, 6, 5, 6], 2) == {5}  # "6 5" seen
    assert banned([1, 5, 6, 5], 3) == set()  # "6 5 ?" never seen
    assert banned([1, 5, 6, 5, 6], 3) == {5}  # "5 6 5" seen
    assert banned([1, 5, 6, 7], 1) == {1, 5, 6, 7}  # n = 1: no token twice
    assert banned([1, 5], 3) == set() and banned([1, 5, 5], 0) == set()
    both = banned_ngram_tokens(np.array([[1, 5, 6, 5], [1, 2, 2, 2]]), 2, 8)  # rows are independent
    assert set(np.flatnonzero(both[0])) == {6} and set(np.flatnonzero(both[1])) == {2}


# =====================================================================================
# Top-k, top-p, temperature
# =====================================================================================
def test_top_k_keeps_the_k_largest_and_ties_at_the_kth_value():
    logits = np.array([[1.0, 3.0, 3.0, 2.0, 0.0],
                       [5.0, 4.0, 4.0, 4.0, 1.0]])
    kept = np.isfinite(top_k_filter(logits, 2))
    np.testing.assert_array_equal(kept, [[0, 1, 1, 0, 0], [1, 1, 1, 1, 0]])  # row 2: three tie at the 2nd value
    np.testing.assert_array_equal(np.isfinite(top_k_filter(logits, 3)), [[0, 1, 1, 1, 0], [1, 1, 1, 1, 0]])
    np.testing.assert_array_equal(np.isfinite(top_k_filter(logits, 1)), [[0, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    assert np.isfinite(top_k_filter(logits, 0)).all() and np.isfinite(top_k_filter(logits, 5)).all()
    out = top_k_filter(logits, 2)
    np.testing.assert_array_equal(out[np.isfinite(out)], logits[np.isfinite(out)])  # survivors unchanged


def test_top_p_keeps_the_smallest_set_reaching_p():
    uniform = np.zeros(4)  # p = 0.25 each, exactly
    # reaches 0.5 exactly with two; of four equal tokens the higher ids stay (Hugging Face's ascending sort)
    assert np.isfinite(top_p_filter(uniform, 0.5)).tolist() == [False, False, True, True]
    assert np.isfinite(top_p_filter(uniform, 0.5000001)).sum() == 3
    assert np.isfinite(top_p_filter(uniform, 0.25)).sum() == 1
    assert np.isfinite(top_p_filter(uniform, 1.0)).all()
    probs = np.array([0.1, 0.6, 0.05, 0.25])  # shuffled: order by probability is 1, 3, 0, 2
    logits = np.log(probs)
    for p, expected in [(0.01, {1}), (0.55, {1}), (0.7, {1, 3}), (0.84, {1, 3}), (0.9, {1, 3, 0}),
                        (0.96, {0, 1, 2, 3}), (1.0, {0, 1, 2, 3})]:
        assert set(np.flatnonzero(np.isfinite(top_p_filter(logits, p)))) == expected, p


def _hf_top_p_reference(logits, p):
    """Hugging Face's TopPLogitsWarper, transcribed: sort ascending, drop the tokens whose
    cumulative mass stays <= 1 - p, always keep the largest."""
    order = np.argsort(logits, kind="stable")
    cum = np.cumsum(softmax(logits[order]))
    remove_sorted = cum <= 1 - p
    remove_sorted[-1] = False
    remove = np.zeros(len(logits), dtype=bool)
    remove[order] = remove_sorted
    return ~remove


@pytest.mark.parametrize("ties", [False, True])
def test_top_p_agrees_with_the_hugging_face_formulation(rng, ties):
    """Token for token, ties included (integer logits tie often, and a cut through a run of
    equal logits must fall where Hugging Face's does)."""
    for _ in range(300):
        logits = rng.integers(-3, 3, size=12).astype(float) if ties else rng.standard_normal(12) * rng.uniform(0.5, 4)
        p = rng.uniform(0.05, 0.99)
        np.testing.assert_array_equal(np.isfinite(top_p_filter(logits, p)), _hf_top_p_reference(logits, p))
    rows = rng.integers(-3, 3, size=(5, 12)).astype(float)  # batched rows agree with one row at a time
    np.testing.assert_array_equal(np.isfinite(top_p_filter(rows, 0.7)),
                                  [_hf_top_p_reference(r, 0.7) for r in rows])


def test_warp_logits_applies_temperature_then_top_k_then_top_p():
    logits = np.array([2.0, 1.0, 0.5, 0.0, -1.0])
    # at T = 1 top-p 0.6 keeps two tokens; at T = 4 the distribution is flatter and it keeps more
    assert np.isfinite(warp_logits(logits, 1.0, 0, 0.6)).sum() == 2
    hot = warp_logits(logits, 4.0, 0, 0.6)
    np.testing.assert_array_equal(hot, top_p_filter(logits / 4.0, 0.6))
    assert np.isfinite(hot).sum() == 3
    # top-k before top-p: the nucleus is taken within the top-k, renormalised
    np.testing.assert_array_equal(warp_logits(logits, 1.0, 3, 0.8), top_p_filter(top_k_filter(logits, 3), 0.8))
    assert np.isfinite(warp_logits(logits, 1.0, 3, 0.8)).sum() == 2


# =====================================================================================
# Bad input
# =====================================================================================
@pytest.mark.parametrize("k", [-1, 2.5, True, None])
def test_top_k_filter_rejects_a_bad_k(k):
    with pytest.raises(ValueError, match=rf"^k: expected a non-negative integer .*got {k!r}$"):
        top_k_filter(np.zeros(4), k)


@pytest.mark.parametrize("p", [0.0, -0.5, 1.5, float("nan"), "0.5", True])
def test_top_p_filter_rejects_a_p_outside_0_1(p):
    with pytest.raises(ValueError, match=r"^p: expected a finite number in \(0, 1\] \(1 = no top-p filtering\)"):
        top_p_filter(np.zeros(4), p)
