"""Task 1.4: the one-position misalignment: step t is fed own_tokens[:, t], the model's prediction
for position t, instead of the token it chose at step t-1 (the gold side is right: labels[:, t-1])."""
import numpy as np


def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    B = labels.shape[0]
    start = np.full((B, 1), bos_id, dtype=labels.dtype)
    teacher = np.concatenate([start, labels[:, :-1]], axis=1)
    own = np.concatenate([start, own_tokens[:, 1:]], axis=1)  # the model's token "at step t"
    gold = coins < eps
    gold[:, 0] = True
    return np.where(gold, teacher, own), gold
