"""Task 7.1: the target is the whole original text ("the decoder reconstructs the input"),
BART's target, not T5's (Lesson 7, section 2: T5's targets are short)."""
import numpy as np


def span_corruption(tokens, noise_mask, vocab_size):
    tokens = np.asarray(tokens)
    noise_mask = np.asarray(noise_mask, dtype=bool)
    return _runs_to_sentinels(tokens, noise_mask, vocab_size), tokens.astype(np.int64)
