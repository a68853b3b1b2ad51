"""Task 3.1: the padding mask is put on the query axis, (B, 1, S, 1), instead of the keys."""
import numpy as np

MASK_VALUE = -1e9


def padding_mask(ids, pad_id, dtype=np.float32):
    return np.where(np.asarray(ids) == pad_id, MASK_VALUE, 0.0).astype(dtype)[:, None, :, None]  # (B, 1, S, 1)
