"""Attention masks, as *additive* arrays: 0 where attention is allowed, ``MASK_VALUE``
where it is blocked.  They are added to the scores before the softmax.

``MASK_VALUE`` is a large finite negative number, not ``-inf``: two masks can be
added together (``causal_mask(T) + key_padding_mask(ids, pad_id)``, broadcast to
(B, 1, T, S)) without ``-inf - -inf = nan``, and a row whose
every key is blocked stays finite.  Such a fully-masked row (a query at the front of a
left-padded row, say, which sees only padding) is normal input; attention turns it into a
zero output with a zero gradient (see ``attention.py``).

Shapes broadcast against the scores (B, H, T, S):
  * causal mask        (T, S)          future keys blocked (a decoding step's: causal_step_mask)
  * key padding mask   (B, 1, 1, S)    padded keys blocked
"""
from __future__ import annotations

import numpy as np

MASK_VALUE = -1e9


def causal_mask(T: int, S: int | None = None, offset: int = 0, dtype=np.float32) -> np.ndarray:
    """(T, S) additive mask: query t (at absolute position ``offset + t``) may attend to keys
    0 .. offset + t and no further.  ``S`` defaults to ``offset + T`` (all keys so far)."""
    S = offset + T if S is None else S
    q_pos = offset + np.arange(T)[:, None]  # (T, 1)
    k_pos = np.arange(S)[None, :]  # (1, S)
    return np.where(k_pos > q_pos, MASK_VALUE, 0.0).astype(dtype)  # (T, S)


def key_padding_mask(ids: np.ndarray | None = None, pad_id: int | None = None,
                     lengths=None, max_len: int | None = None, dtype=np.float32) -> np.ndarray:
    """(B, 1, 1, S) additive mask that blocks padded *keys*.

    Give either ``ids`` (B, S) with the ``pad_id`` that marks padding, or ``lengths`` (B,)
    with ``max_len`` = S (positions >= length are padding).
    """
    if ids is not None:
        if pad_id is None:
            raise ValueError("pad_id: expected an integer when ids are given, got None")
        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"ids: expected shape (B, S), got {ids.shape}")
        is_pad = ids == pad_id  # (B, S)
    elif lengths is not None:
        lengths = np.asarray(lengths)
        if lengths.ndim != 1:
            raise ValueError(f"lengths: expected shape (B,), got {lengths.shape}")
        if max_len is None:
            max_len = int(lengths.max())
        if (lengths < 0).any() or (lengths > max_len).any():
            raise ValueError(f"lengths: expected values in [0, max_len={max_len}], got {lengths.tolist()}")
        is_pad = np.arange(max_len)[None, :] >= lengths[:, None]  # (B, S)
    else:
        raise ValueError("key_padding_mask: expected ids (with pad_id) or lengths, got neither")
    return np.where(is_pad, MASK_VALUE, 0.0).astype(dtype)[:, None, None, :]  # (B, 1, 1, S)



def causal_step_mask(T_new: int, t: int, dtype=np.float32) -> np.ndarray | None:
    """The causal mask of a decoding step that feeds T_new positions after t cached ones:
    (T_new, t + T_new), or None for a single new position (it may see every cached key)."""
    return None if T_new == 1 else causal_mask(T_new, t + T_new, offset=t, dtype=dtype)
