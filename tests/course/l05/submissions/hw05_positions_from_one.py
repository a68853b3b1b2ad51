"""Task 5.4: positions counted from 1 (the first token is "position 1"), where row t is
position t counted from 0."""
import numpy as np


def sinusoidal_positions(max_len, d_model):
    t = np.arange(1, max_len + 1, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angle = t / 10000.0 ** (two_i / d_model)
    P = np.empty((max_len, d_model))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return P
