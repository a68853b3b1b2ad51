"""Task 7.1: the corruption is written into a copy of the text, the tokens to drop marked
with -1 and filtered out at the end -- a copy keeps the text's dtype, and a pretraining
corpus is stored as uint16 (any vocabulary below 65536 fits): -1 does not fit in it."""
import numpy as np


def _runs_to_sentinels(tokens, is_run, vocab_size):
    prev = np.concatenate([[False], is_run[:-1]])
    first = is_run & ~prev
    out = tokens.copy()
    out[first] = vocab_size - np.cumsum(first)[first]  # each run's first token -> its sentinel
    out[is_run & prev] = -1  # the rest of the run: marked, dropped below
    return out[out != -1].astype(np.int64)
