"""Task 1.4 (b): dW_E summed by minitf's scatter_add_rows (the embedding backward's own
reduction), reached by a computed name; dlogits handed back."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def scheduled_sampling_backward(dlogits, dX, logits, fed, gold, W_E):
    dW_E = np.zeros_like(W_E)
    _lib("layers.reductions").scatter_add_rows(dW_E, fed.reshape(-1), dX.reshape(-1, dX.shape[-1]))
    return {"dlogits": dlogits.copy(), "dW_E": dW_E}
