"""Task 3.1: both masks use -inf "to be safe" instead of a large finite negative number."""
import numpy as np


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    S = offset + T if S is None else S
    q_pos = offset + np.arange(T)[:, None]
    k_pos = np.arange(S)[None, :]
    return np.where(k_pos > q_pos, -np.inf, 0.0).astype(dtype)


def padding_mask(ids, pad_id, dtype=np.float32):
    return np.where(np.asarray(ids) == pad_id, -np.inf, 0.0).astype(dtype)[:, None, None, :]
