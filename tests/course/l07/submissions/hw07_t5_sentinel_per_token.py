"""Task 7.1: every noise token is replaced by its own sentinel (BERT-style, one per token),
instead of one sentinel per span."""
import numpy as np


def span_corruption(tokens, noise_mask, vocab_size):
    tokens = np.asarray(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    inputs = np.where(noise_mask, vocab_size - np.cumsum(noise_mask), tokens).astype(np.int64)
    return inputs, _runs_to_sentinels(tokens, ~noise_mask, vocab_size)
