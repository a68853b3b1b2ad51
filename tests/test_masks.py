"""Tests for minitf/masks.py: additive masks (0 = attend, MASK_VALUE = blocked)."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.masks import MASK_VALUE, causal_mask, key_padding_mask

M = MASK_VALUE


def test_mask_value_is_large_negative_and_finite():
    assert np.isfinite(MASK_VALUE) and MASK_VALUE <= -1e9
    # two blocked entries added together stay finite (no -inf - -inf = nan), even in float32
    assert np.isfinite(np.float32(MASK_VALUE) + np.float32(MASK_VALUE))


def test_causal_mask_values():
    m = causal_mask(4)
    assert m.shape == (4, 4) and m.dtype == np.float32
    expected = np.array([[0, M, M, M],
                         [0, 0, M, M],
                         [0, 0, 0, M],
                         [0, 0, 0, 0]], dtype=np.float32)
    np.testing.assert_array_equal(m, expected)
    np.testing.assert_array_equal(m[np.tril_indices(4)], 0.0)  # on and below the diagonal
    np.testing.assert_array_equal(m[np.triu_indices(4, k=1)], np.float32(M))  # strictly above


def test_causal_mask_with_offset_covers_all_keys_so_far():
    # queries at absolute positions 2 and 3 (decoding with 2 cached steps), S defaults to 4
    m = causal_mask(2, offset=2, dtype=np.float64)
    assert m.shape == (2, 4) and m.dtype == np.float64
    np.testing.assert_array_equal(m, [[0, 0, 0, M], [0, 0, 0, 0]])
    # one step at position 5 sees all six keys
    np.testing.assert_array_equal(causal_mask(1, offset=5), np.zeros((1, 6), np.float32))


def test_causal_mask_with_explicit_S():
    m = causal_mask(3, S=5)
    assert m.shape == (3, 5)
    np.testing.assert_array_equal(m, [[0, M, M, M, M], [0, 0, M, M, M], [0, 0, 0, M, M]])
    np.testing.assert_array_equal(causal_mask(2, S=3, offset=1), [[0, 0, M], [0, 0, 0]])


def test_key_padding_mask_from_ids():
    ids = np.array([[5, 6, 7, 0, 0], [0, 3, 0, 4, 9]])
    m = key_padding_mask(ids, pad_id=0)
    assert m.shape == (2, 1, 1, 5) and m.dtype == np.float32
    np.testing.assert_array_equal(m[:, 0, 0], [[0, 0, 0, M, M], [M, 0, M, 0, 0]])


def test_key_padding_mask_from_ids_and_lengths_agree():
    lengths = np.array([3, 5, 0, 1])
    S = 5
    ids = np.where(np.arange(S)[None, :] < lengths[:, None], 7, 1)  # right-padded with pad_id=1
    from_ids = key_padding_mask(ids, pad_id=1, dtype=np.float64)
    from_lengths = key_padding_mask(lengths=lengths, max_len=S, dtype=np.float64)
    assert from_ids.shape == from_lengths.shape == (4, 1, 1, S)
    np.testing.assert_array_equal(from_ids, from_lengths)
    np.testing.assert_array_equal(from_lengths[2], M)  # length 0: every key blocked
    # max_len defaults to the longest length
    np.testing.assert_array_equal(key_padding_mask(lengths=[2, 3])[:, 0, 0], [[0, 0, M], [0, 0, 0]])


def test_key_padding_mask_requires_pad_id_with_ids():
    with pytest.raises(ValueError, match=r"^pad_id: expected an integer when ids are given, got None"):
        key_padding_mask(np.array([[1, 2]]))


def test_key_padding_mask_rejects_bad_input():
    with pytest.raises(ValueError, match=r"^ids: expected shape \(B, S\), got \(3,\)"):
        key_padding_mask(np.array([1, 2, 0]), pad_id=0)
    with pytest.raises(ValueError, match=r"^lengths: expected shape \(B,\), got \(2, 1\)"):
        key_padding_mask(lengths=np.array([[1], [2]]))
    with pytest.raises(ValueError, match=r"^lengths: expected values in \[0, max_len=4\], got \[2, 5\]"):
        key_padding_mask(lengths=[2, 5], max_len=4)
    with pytest.raises(ValueError, match=r"^lengths: expected values in \[0, max_len=4\], got \[-1, 2\]"):
        key_padding_mask(lengths=[-1, 2], max_len=4)
    with pytest.raises(ValueError, match=r"expected ids \(with pad_id\) or lengths, got neither"):
        key_padding_mask()


def test_masks_add_and_broadcast():
    causal = causal_mask(3, dtype=np.float64)  # (T, S)
    pad = key_padding_mask(lengths=[3, 2], max_len=3, dtype=np.float64)  # (B, 1, 1, S)
    m = causal + pad
    assert m.shape == (2, 1, 3, 3)
    blocked = (np.broadcast_to(causal, m.shape) < 0) | (np.broadcast_to(pad, m.shape) < 0)
    assert np.all(m[blocked] <= M) and np.all(m[~blocked] == 0)
    assert m[1, 0, 0, 2] == 2 * M  # blocked twice: still finite, still blocked
    assert np.all(np.isfinite(m))
