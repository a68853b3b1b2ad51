"""Task 7.2: each input sentinel opens as many holes, marked -1, as its span has tokens, and
the holes (``== -1``) are then filled with the target's ordinary tokens -- but the marks are
made in the input's dtype, and a data pipeline stores T5's pairs as uint16 (its 32128 ids
fit): there -1 becomes 65535, and no slot equals -1."""
import numpy as np


def rebuild(inputs, targets, vocab_size, n_sentinels):
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    in_sentinel = inputs >= first_sentinel
    tgt_ordinary = targets < first_sentinel
    prev = np.concatenate([[False], tgt_ordinary[:-1]])
    run_id = np.cumsum(tgt_ordinary & ~prev) - 1
    run_lengths = np.bincount(run_id[tgt_ordinary], minlength=int(in_sentinel.sum()))
    counts = np.ones(len(inputs), dtype=np.int64)
    counts[in_sentinel] = run_lengths
    slots = np.repeat(np.where(in_sentinel, -1, inputs), counts)  # a hole (-1) per missing token
    holes = slots == -1
    if holes.sum() == tgt_ordinary.sum():
        slots[holes] = targets[tgt_ordinary]
    return slots.astype(np.int64)
