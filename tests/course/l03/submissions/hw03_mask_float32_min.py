"""Task 3.1: the masks block with the most negative float32, np.finfo(np.float32).min (-3.4e38,
the convention of several libraries: "the largest negative number the dtype can hold"), for
both dtypes.  Each mask alone is finite and blocks; in float64 the two add up to -6.8e38, still
finite.  But in float32 a cell blocked by the causal mask AND the padding mask overflows to
-inf, and a fully masked row then gives -inf - (-inf) = nan in the stable softmax: the finite
MASK_VALUE (-1e9) is there so that masks can be added."""
import numpy as np

BLOCK = np.finfo(np.float32).min  # -3.4e38, "as negative as float32 goes"


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    S = offset + T if S is None else S
    q_pos = offset + np.arange(T)[:, None]
    k_pos = np.arange(S)[None, :]
    return np.where(k_pos > q_pos, BLOCK, 0.0).astype(dtype)


def padding_mask(ids, pad_id, dtype=np.float32):
    return np.where(np.asarray(ids) == pad_id, BLOCK, 0.0).astype(dtype)[:, None, None, :]
