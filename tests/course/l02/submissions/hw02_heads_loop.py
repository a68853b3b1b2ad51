"""Task 2.4: right values, but a Python loop over the heads in both split and merge ("each
head needs its own pass")."""
import numpy as np


def split_heads(x, H):
    Dh = x.shape[-1] // H
    return np.stack([x[:, :, h * Dh:(h + 1) * Dh] for h in range(H)], axis=1)


def merge_heads(x):
    heads = []
    for h in range(x.shape[1]):
        heads.append(x[:, h])
    return np.concatenate(heads, axis=-1)
