"""Task 7.2: "ids above V - n_sentinels are sentinels": the lowest sentinel, V - n_sentinels
itself, is read as an ordinary token (an off-by-one at the boundary; right whenever the pair
uses fewer sentinels than n_sentinels)."""
import numpy as np


def rebuild(inputs, targets, vocab_size, n_sentinels):
    """Task 7.2: inputs (L_in,), targets (L_tgt,) -> the original text (L,), int64.

    The target's ordinary tokens, in order, are the noise tokens in order; the input's
    sentinels, in order, mark where their spans were.  Sentinel k of the input takes the
    k-th run of ordinary tokens of the target: the slots it opens are filled, left to right,
    with the target's ordinary tokens.
    """
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    first_sentinel = vocab_size - n_sentinels
    in_sentinel = inputs > first_sentinel  # (L_in,)
    tgt_ordinary = targets <= first_sentinel  # (L_tgt,)
    prev = np.concatenate([[False], tgt_ordinary[:-1]])  # (L_tgt,)
    run_id = np.cumsum(tgt_ordinary & ~prev) - 1  # (L_tgt,) which run each ordinary token is in
    run_lengths = np.bincount(run_id[tgt_ordinary], minlength=int(in_sentinel.sum()))  # (spans,)
    if len(run_lengths) != in_sentinel.sum():
        raise ValueError(f"targets: expected {int(in_sentinel.sum())} spans (the input's sentinels), "
                         f"got {len(run_lengths)}")
    counts = np.ones(len(inputs), dtype=np.int64)  # (L_in,) how many output tokens each input token becomes
    counts[in_sentinel] = run_lengths
    owner = np.repeat(np.arange(len(inputs)), counts)  # (L,) the input position each output slot comes from
    from_target = in_sentinel[owner]  # (L,) a slot a sentinel opened
    out = np.empty(len(owner), dtype=np.int64)
    out[~from_target] = inputs[~in_sentinel]
    out[from_target] = targets[tgt_ordinary]
    return out
