"""Task 7.3: a span is taken as tokens[start .. start + length] with the end included: one
token too many disappears behind each mask."""
import numpy as np


def text_infilling(tokens, starts, lengths, mask_id):
    tokens = np.asarray(tokens)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    L = len(tokens)
    real = lengths > 0
    cover = np.zeros(L + 2, dtype=np.int64)
    np.add.at(cover, starts[real], 1)
    np.add.at(cover, starts[real] + lengths[real] + 1, -1)  # end included
    in_span = np.cumsum(cover)[:L] > 0
    is_start = np.zeros(L, dtype=bool)
    is_start[starts[real]] = True
    keep = ~in_span | is_start
    out = np.where(is_start, mask_id, tokens)[keep].astype(np.int64)
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    return np.insert(out, kept_before[np.sort(starts[~real])], mask_id)
