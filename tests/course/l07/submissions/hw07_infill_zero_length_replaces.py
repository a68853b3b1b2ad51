"""Task 7.3: a span of length 0 masks the token at its start (as if its length were 1)
instead of inserting a <mask> before it."""
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
    is_start = np.zeros(L + 1, dtype=bool)
    is_start[starts] = True  # length-0 spans too: their token becomes the mask
    is_start = is_start[:L]
    keep = ~in_span | is_start
    return np.where(is_start, mask_id, tokens)[keep].astype(np.int64)
