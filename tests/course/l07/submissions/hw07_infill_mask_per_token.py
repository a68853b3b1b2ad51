"""Task 7.3: every token of a span becomes a <mask> (token masking, BERT-style) instead of
one <mask> per span."""
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
    out = np.where(in_span, mask_id, tokens).astype(np.int64)
    return np.insert(out, np.sort(starts[~real]), mask_id)
