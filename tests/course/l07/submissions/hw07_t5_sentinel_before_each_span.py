"""Task 7.1: the target written from the paper's picture: sentinel k, then the k-th noise
span, and a closing sentinel -- instead of T5's code, which turns each run of NON-noise
tokens into a sentinel (the two agree only when the text starts and ends with non-noise)."""
import numpy as np


def span_corruption(tokens, noise_mask, vocab_size):
    tokens = np.asarray(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    prev = np.concatenate([[False], noise_mask[:-1]])
    first = noise_mask & ~prev  # where each noise span starts
    k = np.cumsum(first)  # (L,) the span number (1-based) of each noise token
    # each noise token, preceded by its span's sentinel when it starts the span
    pieces = np.stack([np.where(first, vocab_size - k, -1), np.where(noise_mask, tokens, -1)], axis=1).ravel()
    targets = np.concatenate([pieces[pieces >= 0], [vocab_size - 1 - int(first.sum())]]).astype(np.int64)
    return _runs_to_sentinels(tokens, noise_mask, vocab_size), targets
