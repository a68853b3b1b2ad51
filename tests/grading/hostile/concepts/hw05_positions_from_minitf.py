"""Task 5.4: the sinusoidal table from minitf's layers (the positional encoding's own)."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def sinusoidal_positions(max_len, d_model):
    return _lib("layers").sinusoidal_table(max_len, d_model).astype(np.float64)
