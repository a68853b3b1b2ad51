"""Task 7.2: each input sentinel is filled with the tokens that follow the same sentinel id
in the target -- right for T5's own masks (the text starts with non-noise), wrong for T5's
test vector, whose text starts with noise."""
import numpy as np


def rebuild(inputs, targets, vocab_size, n_sentinels):
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    out = []
    for t in inputs.tolist():
        if t < first_sentinel:
            out.append(t)
            continue
        at = np.flatnonzero(targets == t)
        if at.size:
            rest = targets[at[0] + 1:]
            stop = np.flatnonzero(rest >= first_sentinel)
            out += rest[:stop[0] if stop.size else len(rest)].tolist()
    return np.array(out, dtype=np.int64)
