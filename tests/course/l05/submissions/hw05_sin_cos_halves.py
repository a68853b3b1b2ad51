"""Task 5.4: sines in the first half of the columns and cosines in the second (as some
implementations lay them out), where minitf interleaves them."""
import numpy as np


def sinusoidal_positions(max_len, d_model):
    t = np.arange(max_len, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angle = t / 10000.0 ** (two_i / d_model)
    return np.concatenate([np.sin(angle), np.cos(angle[:, : d_model // 2])], axis=1)
