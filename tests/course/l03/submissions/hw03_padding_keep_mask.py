"""Task 3.1: the padding mask is a 1/0 keep mask (Hugging Face's attention_mask), not an additive one."""
import numpy as np


def padding_mask(ids, pad_id, dtype=np.float32):
    return (np.asarray(ids) != pad_id).astype(dtype)[:, None, None, :]  # 1 = attend, 0 = padding
