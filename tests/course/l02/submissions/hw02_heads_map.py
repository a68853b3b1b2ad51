"""Task 2.4: right values, but the heads taken one at a time with map (a loop over the heads
written as a function call, "map is not a for loop"), in both split and merge."""
import numpy as np


def split_heads(x, H):
    Dh = x.shape[-1] // H
    return np.stack(list(map(lambda h: x[:, :, h * Dh:(h + 1) * Dh], range(H))), axis=1)


def merge_heads(x):
    return np.concatenate(list(map(lambda h: x[:, h], range(x.shape[1]))), axis=-1)
