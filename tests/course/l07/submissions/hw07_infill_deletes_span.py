"""Task 7.3: the spans are deleted without a trace (token deletion), no <mask> left in
their place; length-0 spans still insert one."""
import numpy as np


def text_infilling(tokens, starts, lengths, mask_id):
    tokens = np.asarray(tokens)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    L = len(tokens)
    real = lengths > 0
    cover = np.zeros(L + 1, dtype=np.int64)
    np.add.at(cover, starts[real], 1)
    np.add.at(cover, starts[real] + lengths[real], -1)
    keep = np.cumsum(cover)[:L] == 0
    out = tokens[keep].astype(np.int64)
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    return np.insert(out, kept_before[np.sort(starts[~real])], mask_id)
