"""Task 7.3: the masks of the length-0 spans are placed through "the index of tokens[start] in
the result", which does not exist for start == L (an IndexError); the student patches that
case with ONE mask appended -- however many length-0 spans sit at the end."""
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
    out = np.where(is_start, mask_id, tokens)[keep].astype(np.int64)
    index_in_out = np.cumsum(keep) - 1  # (L,) where tokens[s] (or its span's mask) lands
    zero = np.sort(starts[~real])
    out = np.insert(out, index_in_out[zero[zero < L]], mask_id)
    if (zero == L).any():  # "a mask at the end"
        out = np.append(out, mask_id)
    return out
