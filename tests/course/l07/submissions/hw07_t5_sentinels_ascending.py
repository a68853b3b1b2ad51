"""Task 7.1: the sentinels are the top ids of the vocabulary, but counted upwards (the
first span gets the lowest of them), not from V - 1 down."""
import numpy as np


def _runs_to_sentinels(tokens, is_run, vocab_size):
    prev = np.concatenate([[False], is_run[:-1]])
    first = is_run & ~prev
    n_runs = int(first.sum())
    sentinel = vocab_size - n_runs - 1 + np.cumsum(first)  # the first run: V - n_runs, the last: V - 1
    out = np.where(first, sentinel, tokens)
    return out[~(is_run & prev)].astype(np.int64)
