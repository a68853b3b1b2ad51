"""Task 7.3: spans of length 0 are skipped ("they cover nothing"): BART inserts a <mask>
for each."""
import numpy as np


def text_infilling(tokens, starts, lengths, mask_id):
    tokens = np.asarray(tokens)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    L = len(tokens)
    real = lengths > 0
    cover = np.zeros(L + 1, dtype=np.int64)
    np.add.at(cover, starts[real], 1)
    np.add.at(cover, starts[real] + lengths[real], -1)
    in_span = np.cumsum(cover)[:L] > 0
    is_start = np.zeros(L, dtype=bool)
    is_start[starts[real]] = True
    keep = ~in_span | is_start
    return np.where(is_start, mask_id, tokens)[keep].astype(np.int64)
