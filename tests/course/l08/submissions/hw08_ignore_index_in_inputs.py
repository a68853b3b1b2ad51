"""Task 8.1: -100 (the ignored label) is left in the decoder inputs."""
import numpy as np


def shift_right(labels, start_id, pad_id):
    out = np.empty_like(labels)
    out[:, 1:] = labels[:, :-1]
    out[:, 0] = start_id
    return out  # forgot: out[out == -100] = pad_id
