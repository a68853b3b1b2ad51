"""Task 7.3: the tokens a span deletes are marked -1 with np.where and dropped (``>= 0``)
at the end -- the result keeps the text's dtype, and a pretraining corpus is stored as
uint16 (BART's 50265 ids fit): there -1 is 65535, nothing is dropped."""
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
    marked = np.where(in_span & ~is_start, -1, np.where(is_start, mask_id, tokens))  # -1: deleted
    kept_before = np.concatenate([[0], np.cumsum(marked >= 0)])
    out = marked[marked >= 0].astype(np.int64)
    return np.insert(out, kept_before[np.sort(starts[~real])], mask_id)
