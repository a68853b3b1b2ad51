"""Task 10.3: every metric is treated as a loss (lower is better), an exact match too: on an
accuracy, early stopping keeps the worst checkpoint."""
import numpy as np


def early_stopping(values, mode, patience, min_delta=0.0):
    best, best_index, wait = np.inf, 0, 0
    for i, v in enumerate(np.asarray(values, dtype=np.float64)):
        if v < best - min_delta:
            best, best_index, wait = v, i, 0
        else:
            wait += 1
            if wait >= patience:
                return best_index, i
    return best_index, len(values) - 1
