"""Tests for minitf.data.noise: T5 span corruption and BART's five noises."""
import math
import re

import numpy as np
import pytest

from minitf.data.noise import (BartNoise, bart_noise, document_rotation, insert_masks, mask_spans,
                               noise_span_to_unique_sentinel, nonnoise_span_to_unique_sentinel,
                               poisson_span_lengths, random_spans_noise_mask, rebuild_from_span_corruption,
                               sentence_permutation, span_corruption, span_corruption_lengths, text_infilling,
                               token_deletion, token_masking)

MASK, STOP = 4, 5  # ids used as <mask> and the full stop below; ordinary tokens are >= 10


def runs(mask: np.ndarray) -> np.ndarray:
    """(n, L) bool -> (n,) number of runs of True in each row."""
    starts = mask & ~np.concatenate([np.zeros((mask.shape[0], 1), bool), mask[:, :-1]], axis=1)
    return starts.sum(axis=1)


def t5_counts(length, density=0.15, mean=3.0):
    """T5's arithmetic, written out independently (float32 and round-half-even, as tf.round)."""
    L = max(length, 2)
    noise = min(max(int(np.round(np.float32(L) * np.float32(density))), 1), L - 1)
    spans = max(int(np.round(np.float32(noise) / np.float32(mean))), 1)
    return noise, spans


# ==== T5 =======================================================================================
def test_t5_reference_vector():
    # t5/data/preprocessors_test.py: noise spans to unique sentinels, vocabulary size 1000
    tokens = np.array([10, 11, 12, 13, 14, 15])
    noise_mask = np.array([True, True, False, False, True, False])
    inputs = noise_span_to_unique_sentinel(tokens, noise_mask, vocab_size=1000)
    targets = nonnoise_span_to_unique_sentinel(tokens, noise_mask, vocab_size=1000)
    np.testing.assert_array_equal(inputs, [999, 12, 13, 998, 15],
                                  err_msg="sentinels count down from vocab_size - 1 (an off-by-one here?)")
    np.testing.assert_array_equal(targets, [10, 11, 999, 14, 998])
    np.testing.assert_array_equal(rebuild_from_span_corruption(inputs, targets, 1000, n_sentinels=100), tokens)


def test_t5_random_spans_helper_lengths():
    # T5's C4 setting: inputs_length 512 -> 568 raw tokens, targets of 114 (both with <eos>)
    assert span_corruption_lengths(568) == (512, 114)


@pytest.mark.parametrize("length", [1, 2, 3, 5, 10, 16, 30, 37, 48, 100])
def test_noise_mask_follows_t5_arithmetic(length, rng):
    mask = random_spans_noise_mask(length, rng, n=200)  # (200, length)
    assert mask.shape == (200, length) and mask.dtype == bool
    noise, spans = t5_counts(length)
    if length >= 2:  # (length 1 is computed as 2 and cut back)
        assert (mask.sum(axis=1) == noise).all()
        assert (runs(mask) == spans).all()
        assert not mask[:, 0].any(), "the spans interleave starting with a non-noise span"
        assert mask[:, -1].all(), "...and end with a noise span"


def test_noise_statistics_over_10000_draws(rng):
    # T5's pretraining length (568 tokens): density and mean span length within 2 % of 15 % and 3
    mask = random_spans_noise_mask(568, rng, n=10_000)
    density = mask.mean()
    mean_span = mask.sum() / runs(mask).sum()
    assert abs(density - 0.15) / 0.15 < 0.02, density
    assert abs(mean_span - 3.0) / 3.0 < 0.02, mean_span
    # every one of the 28 noise spans has the same expected length: the segmentation is uniform
    starts = np.argwhere(mask & ~np.roll(mask, 1, axis=1))  # (n * spans, 2)
    first_span_length = np.array([np.argmin(row[s:]) for row, s in zip(mask, starts[::28, 1])])
    assert abs(first_span_length.mean() - 85 / 28) / (85 / 28) < 0.02


def test_noise_mask_is_uniform_over_segmentations(rng):
    # length 10 -> 2 noise tokens in 1 span at the end, 8 non-noise; length 20 -> 3 noise tokens in
    # 1 span; length 40 -> 6 noise in 2 spans: where the first noise span starts is spread out
    mask = random_spans_noise_mask(40, rng, n=10_000)
    first = mask.argmax(axis=1)
    assert first.min() == 1 and first.max() >= 30


def test_noise_mask_single_row_and_seeds():
    a = random_spans_noise_mask(50, np.random.default_rng(3))
    b = random_spans_noise_mask(50, np.random.default_rng(3))
    c = random_spans_noise_mask(50, np.random.default_rng(4))
    assert a.shape == (50,)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


@pytest.mark.parametrize("length", [1, 2, 5, 17, 40, 120])
def test_span_corruption_rebuilds_the_original(length, rng):
    V, n_sentinels = 500, 50
    for _ in range(50):
        tokens = rng.integers(10, V - n_sentinels, size=length)
        inputs, targets = span_corruption(tokens, rng, V)
        np.testing.assert_array_equal(rebuild_from_span_corruption(inputs, targets, V, n_sentinels), tokens)
        if length == 1:  # T5 computes the mask for length 2 and cuts it: no noise, the target is one sentinel
            np.testing.assert_array_equal(targets, [V - 1])
            continue
        sentinels_in = inputs[inputs >= V - n_sentinels]
        sentinels_out = targets[targets >= V - n_sentinels]
        k = len(sentinels_in)
        np.testing.assert_array_equal(sentinels_in, V - 1 - np.arange(k))  # <extra_id_0>, <extra_id_1>...
        np.testing.assert_array_equal(sentinels_out, V - 1 - np.arange(k))
        assert targets[0] == V - 1, "the target starts with the first sentinel, then its span"


def test_span_corruption_target_is_short(rng):
    tokens = rng.integers(10, 400, size=568)
    inputs, targets = span_corruption(tokens, rng, 500)
    assert (len(inputs) + 1, len(targets) + 1) == span_corruption_lengths(568)


# ==== BART ===================================================================================
def document(rng, n_sentences=4):
    """Distinct ordinary tokens (>= 10), sentences ending with STOP."""
    lengths = rng.integers(2, 7, size=n_sentences)
    out, nxt = [], 10
    for L in lengths:
        out += list(range(nxt, nxt + L - 1)) + [STOP]
        nxt += L - 1
    return np.array(out)


def test_token_masking_keeps_length_and_masks_ceil_03n(rng):
    for n in (1, 7, 10, 33):
        tokens = np.arange(10, 10 + n)
        out = token_masking(tokens, rng, MASK)
        assert len(out) == n
        assert (out == MASK).sum() == math.ceil(0.3 * n)
        np.testing.assert_array_equal(out[out != MASK], tokens[out != MASK])


def test_token_deletion_only_deletes(rng):
    for n in (1, 7, 10, 33):
        tokens = rng.integers(10, 1000, size=n)
        out = token_deletion(tokens, rng)
        assert len(out) == n - math.ceil(0.3 * n)
        it = iter(tokens.tolist())
        assert all(t in it for t in out.tolist()), "the output must be a subsequence of the input"


def test_poisson_span_lengths_sum_to_the_budget_and_follow_poisson3(rng):
    for budget in (1, 2, 9, 30):
        for _ in range(200):
            lengths = poisson_span_lengths(budget, rng, 3.0)
            assert lengths.sum() == budget and lengths[-1] >= 1, "the last span is cut to fit the budget"
    # a large budget, so that stopping at the budget (which favours a long last draw) hardly matters
    draws = np.concatenate([poisson_span_lengths(3000, rng, 3.0)[:-1] for _ in range(40)])
    freq = np.bincount(draws, minlength=10)[:10] / len(draws)
    pmf = np.array([math.exp(-3) * 3 ** k / math.factorial(k) for k in range(10)])
    assert np.abs(freq - pmf).max() < 0.01, (freq.round(3), pmf.round(3))
    assert abs(draws.mean() - 3.0) < 0.05


def test_mask_spans_one_mask_per_span_merging_and_clipping():
    t = np.arange(10, 20)
    np.testing.assert_array_equal(mask_spans(t, [2], [3], MASK), [10, 11, MASK, 15, 16, 17, 18, 19])
    np.testing.assert_array_equal(mask_spans(t, [2, 3], [3, 4], MASK), [10, 11, MASK, 17, 18, 19])  # merged
    np.testing.assert_array_equal(mask_spans(t, [8], [5], MASK), [10, 11, 12, 13, 14, 15, 16, 17, MASK])  # clipped
    np.testing.assert_array_equal(mask_spans(t, [0, 5], [1, 1], MASK), [MASK, 11, 12, 13, 14, MASK, 16, 17, 18, 19])


def test_insert_masks_a_zero_length_span_adds_a_mask():
    np.testing.assert_array_equal(insert_masks(np.array([10, 11, 12]), [0, 3], MASK), [MASK, 10, 11, MASK, 12])
    np.testing.assert_array_equal(insert_masks(np.array([10, 11]), [2], MASK), [10, 11, MASK])


def _matches_with_wildcards(original, noised) -> bool:
    """True if ``original`` is ``noised`` with each MASK standing for zero or more tokens."""
    words = " ".join(map(str, original))
    pattern = r"\s*".join(r"(?:\S+(?:\s+\S+)*)?" if t == MASK else re.escape(str(t)) for t in noised)
    return re.fullmatch(pattern, words) is not None


def test_text_infilling_each_mask_stands_for_a_possibly_empty_span(rng):
    n_inserts = 0
    for _ in range(300):
        tokens = document(rng, n_sentences=5)
        out = text_infilling(tokens, rng, MASK)
        assert _matches_with_wildcards(tokens, out)
        assert (out == MASK).sum() >= 1
        kept = out[out != MASK]
        assert len(tokens) - len(kept) <= math.ceil(0.3 * len(tokens)), "never more than the budget removed"
        # a mask between two tokens that were neighbours in the original is an insertion
        pos = {t: i for i, t in enumerate(tokens.tolist())}
        seq = out.tolist()
        for i in range(1, len(seq) - 1):
            if seq[i] == MASK and seq[i - 1] != MASK and seq[i + 1] != MASK \
                    and pos[seq[i + 1]] == pos[seq[i - 1]] + 1:
                n_inserts += 1
    assert n_inserts > 0, "length-0 spans (probability e^-3 each) should insert masks"


def test_sentence_permutation_keeps_the_sentences(rng):
    moved = 0
    for _ in range(200):
        tokens = document(rng, n_sentences=4)
        out = sentence_permutation(tokens, rng, STOP)
        split = lambda a: sorted(tuple(s) for s in np.split(a, np.flatnonzero(a == STOP) + 1) if s.size)
        assert split(out) == split(tokens)
        moved += not np.array_equal(out, tokens)
    assert moved > 150  # 4 sentences: 23 of 24 orders differ from the original


def test_sentence_permutation_last_sentence_without_full_stop(rng):
    tokens = np.array([10, 11, STOP, 12, 13])
    outs = {tuple(sentence_permutation(tokens, rng, STOP)) for _ in range(50)}
    assert outs == {(10, 11, STOP, 12, 13), (12, 13, 10, 11, STOP)}


def test_document_rotation_is_a_rotation_with_a_uniform_start(rng):
    tokens = np.arange(10, 16)
    starts = []
    for _ in range(6000):
        out = document_rotation(tokens, rng)
        starts.append(int(out[0]) - 10)
        np.testing.assert_array_equal(out, np.roll(tokens, -starts[-1]))
    freq = np.bincount(starts, minlength=6) / len(starts)
    assert np.abs(freq - 1 / 6).max() < 0.02


def test_bart_defaults_are_the_papers_recipe():
    noise = BartNoise()
    assert (noise.masking, noise.mask_ratio, noise.poisson_lambda, noise.permute_sentences, noise.rotate) == \
        ("infilling", 0.3, 3.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="masking"):
        BartNoise(masking="spans")
    with pytest.raises(ValueError, match="poisson_lambda"):
        BartNoise(poisson_lambda=0)


@pytest.mark.parametrize("masking", ["infilling", "token", "deletion", "none"])
def test_bart_noise_each_masking(masking, rng):
    tokens = document(rng, n_sentences=3)
    out = bart_noise(tokens, rng, BartNoise(masking=masking, permute_sentences=0.0), mask_id=MASK,
                     full_stop_id=STOP)
    assert _matches_with_wildcards(tokens, out) if masking != "deletion" else len(out) < len(tokens)
    if masking == "none":
        np.testing.assert_array_equal(out, tokens)


def test_bart_noise_rotate_and_input_untouched(rng):
    tokens = document(rng)
    before = tokens.copy()
    out = bart_noise(tokens, rng, BartNoise(masking="none", permute_sentences=0.0, rotate=1.0), mask_id=MASK,
                     full_stop_id=STOP)
    np.testing.assert_array_equal(tokens, before)
    assert any(np.array_equal(out, np.roll(tokens, -r)) for r in range(len(tokens)))


@pytest.mark.parametrize("fn", [
    lambda t, r: span_corruption(t, r, 500)[0],
    lambda t, r: token_masking(t, r, MASK),
    lambda t, r: token_deletion(t, r),
    lambda t, r: text_infilling(t, r, MASK),
    lambda t, r: sentence_permutation(t, r, STOP),
    lambda t, r: document_rotation(t, r),
    lambda t, r: bart_noise(t, r, BartNoise(rotate=0.5), mask_id=MASK, full_stop_id=STOP),
], ids=["t5", "token_masking", "deletion", "infilling", "permutation", "rotation", "bart"])
def test_seeds_reproduce(fn):
    # (long enough for several T5 spans: one span is always the last tokens, whatever the seed)
    tokens = document(np.random.default_rng(0), n_sentences=20)
    a = [fn(tokens, np.random.default_rng(7)) for _ in range(2)]
    np.testing.assert_array_equal(a[0], a[1])
    others = [fn(tokens, np.random.default_rng(s)) for s in range(8, 20)]
    assert any(len(o) != len(a[0]) or (o != a[0]).any() for o in others)


def test_zero_noise_density_corrupts_nothing():
    # T5's own code returns an all-False mask for noise_density = 0 (its 2022 fix, "corrupt
    # nothing if noise_density is 0.0"); the clip to one noise token is for positive densities
    for length in (1, 2, 7, 40):
        assert not random_spans_noise_mask(length, 0, noise_density=0.0).any()
        assert random_spans_noise_mask(length, 0, noise_density=0.0, n=3).shape == (3, length)
    tokens = np.arange(3, 13)
    inputs, targets = span_corruption(tokens, 0, 100, noise_density=0.0)
    np.testing.assert_array_equal(inputs, tokens)  # the whole text, uncorrupted
    np.testing.assert_array_equal(targets, [99])  # the non-noise span's one sentinel, as T5's targets
    assert random_spans_noise_mask(10, 0, noise_density=0.01).sum() == 1  # any positive density: at least one
