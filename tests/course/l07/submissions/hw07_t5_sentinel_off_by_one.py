"""Task 7.1: the first sentinel is ``vocab_size`` itself (not V - 1): counting "from the top"
one id too high."""
import numpy as np


def _runs_to_sentinels(tokens, is_run, vocab_size):
    prev = np.concatenate([[False], is_run[:-1]])
    first = is_run & ~prev
    sentinel = vocab_size + 1 - np.cumsum(first)
    out = np.where(first, sentinel, tokens)
    return out[~(is_run & prev)].astype(np.int64)
