"""Task 8.2: the causal mask from minitf's masks module, by a computed name."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def causal_mask(T, dtype=np.float32):
    return _lib("masks").causal_mask(T, dtype=dtype)
