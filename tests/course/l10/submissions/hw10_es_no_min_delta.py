"""Task 10.3: min_delta is ignored: any gain, however small, counts as an improvement."""
import numpy as np


def early_stopping(values, mode, patience, min_delta=0.0):
    sign = 1.0 if mode == "min" else -1.0
    best, best_index, wait = np.inf, 0, 0
    for i, v in enumerate(sign * np.asarray(values, dtype=np.float64)):
        if v < best:
            best, best_index, wait = v, i, 0
        else:
            wait += 1
            if wait >= patience:
                return best_index, i
    return best_index, len(values) - 1
