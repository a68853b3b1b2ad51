"""Task 3.1: the causal mask ignores the offset -- np.triu on (T, S) as if query t sat at position t."""
import numpy as np

MASK_VALUE = -1e9


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    S = offset + T if S is None else S
    return np.triu(np.full((T, S), MASK_VALUE), k=1).astype(dtype)  # right for training, wrong once offset > 0
