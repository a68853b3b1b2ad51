"""Task 7.1: T5's two functions from minitf's noise module, by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def span_corruption(tokens, noise_mask, vocab_size):
    noise = _lib("data.noise")
    return (noise.noise_span_to_unique_sentinel(tokens, noise_mask, vocab_size),
            noise.nonnoise_span_to_unique_sentinel(tokens, noise_mask, vocab_size))
