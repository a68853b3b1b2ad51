"""Task 5.4: the frequency of pair i taken as 1 / 10000^(i/D) (i the pair's index), where
the paper's 2i is the even column's index: 10000^(2i/D)."""
import numpy as np


def sinusoidal_positions(max_len, d_model):
    t = np.arange(max_len, dtype=np.float64)[:, None]
    i = np.arange((d_model + 1) // 2, dtype=np.float64)[None, :]  # the pair index
    angle = t / 10000.0 ** (i / d_model)
    P = np.empty((max_len, d_model))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return P
