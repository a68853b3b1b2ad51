"""Task 7.1: the target's trailing sentinel is dropped ("it marks nothing"): when the text
ends with non-noise tokens, T5's target ends with the sentinel that stands for them."""
import numpy as np


def span_corruption(tokens, noise_mask, vocab_size):
    tokens = np.asarray(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    targets = _runs_to_sentinels(tokens, ~noise_mask, vocab_size)
    if len(targets) > 1 and not noise_mask[-1]:
        targets = targets[:-1]
    return _runs_to_sentinels(tokens, noise_mask, vocab_size), targets
