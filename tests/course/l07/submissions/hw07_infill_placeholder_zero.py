"""Task 7.3: the tokens a span deletes are first overwritten with 0 ("an id no text uses") and
then every 0 is dropped -- but 0 is an ordinary id (BART's <s>, which begins every document
fairseq feeds it): a document's own 0s disappear too."""
import numpy as np


def text_infilling(tokens, starts, lengths, mask_id):
    tokens = np.asarray(tokens)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    L = len(tokens)
    real = lengths > 0
    out = tokens.astype(np.int64)  # a copy
    for s, n in zip(starts[real].tolist(), lengths[real].tolist()):
        out[s] = mask_id
        out[s + 1:s + n] = 0  # deleted: marked, dropped below
    zero_at = np.sort(starts[~real])
    dropped_before = np.concatenate([[0], np.cumsum(out == 0)])  # (L + 1,)
    out = out[out != 0]
    return np.insert(out, zero_at - dropped_before[zero_at], mask_id)
