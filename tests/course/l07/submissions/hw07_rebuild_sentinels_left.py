"""Task 7.2: the target is cut at its sentinels and the k-th piece fills the input's k-th
sentinel -- sentinel and all: the target's sentinels are left in the rebuilt text."""
import numpy as np


def rebuild(inputs, targets, vocab_size, n_sentinels):
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    pieces_t = [p for p in np.split(targets, np.flatnonzero(targets >= first_sentinel)) if p.size]
    filled = iter(pieces_t)
    pieces = [next(filled, np.zeros(0, np.int64)) if t >= first_sentinel else np.array([t]) for t in inputs.tolist()]
    return np.concatenate(pieces).astype(np.int64)
