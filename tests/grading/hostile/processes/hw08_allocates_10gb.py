"""Task 8.1: allocate and touch 10 GB."""
import numpy as np


def shift_right(labels, start_id, pad_id):
    big = np.ones(10 * 2 ** 30, dtype=np.uint8)  # 10 GB, every page touched
    return big[: labels.size].reshape(labels.shape).astype(labels.dtype)
