"""Task 8.1: the decoder input at position t is y_t, not y_(t-1) -- label leakage."""
import numpy as np

IGNORE_INDEX = -100


def shift_right(labels, start_id, pad_id):
    out = np.array(labels, copy=True)  # (B, T) the labels themselves: position t sees the answer
    out[out == IGNORE_INDEX] = pad_id
    return out
