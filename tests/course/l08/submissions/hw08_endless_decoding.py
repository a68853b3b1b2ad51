"""Task 8.5 only: a decoding loop that never stops (it waits for an <eos> that never comes)."""
import numpy as np


def free_running_decode(model, src_ids, start_id, eos_id, max_len):
    src_ids = np.asarray(src_ids)
    prefix = np.full((src_ids.shape[0], 1), start_id, dtype=np.int64)
    while True:  # ignores max_len, and checks for <eos> in the wrong place
        if (prefix[:, 0] == eos_id).all():
            return prefix[:, 1:]
        prefix = prefix[:, :1]
