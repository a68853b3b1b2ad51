"""Task 7.2: the rebuild from minitf's noise module, by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def rebuild(inputs, targets, vocab_size, n_sentinels):
    return _lib("data.noise").rebuild_from_span_corruption(inputs, targets, vocab_size, n_sentinels)
