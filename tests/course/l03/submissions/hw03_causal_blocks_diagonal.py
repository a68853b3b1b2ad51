"""Task 3.1: the causal mask blocks the diagonal too -- position t cannot see itself."""
import numpy as np

MASK_VALUE = -1e9


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    S = offset + T if S is None else S
    q_pos = offset + np.arange(T)[:, None]
    k_pos = np.arange(S)[None, :]
    return np.where(k_pos >= q_pos, MASK_VALUE, 0.0).astype(dtype)  # >=: "position t predicts y_t, so hide t"
