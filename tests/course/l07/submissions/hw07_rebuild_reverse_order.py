"""Task 7.2: the spans are matched to the input's sentinels by sorting the sentinel ids in
increasing order -- but the first span has the HIGHEST id (V - 1), so the spans come out
reversed."""
import numpy as np


def rebuild(inputs, targets, vocab_size, n_sentinels):
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    is_s = targets >= first_sentinel
    cuts = np.flatnonzero(np.diff(is_s.astype(np.int8)) != 0) + 1
    spans = [r for r in np.split(targets, cuts) if r.size and r[0] < first_sentinel]
    order = np.argsort(inputs[inputs >= first_sentinel])  # lowest id first
    filled = iter([spans[i] for i in order])
    pieces = [next(filled) if t >= first_sentinel else np.array([t]) for t in inputs.tolist()]
    return np.concatenate(pieces).astype(np.int64) if pieces else np.zeros(0, np.int64)
