"""Task 8.2 only: causal_mask ends the Python process."""
import os

import numpy as np


def causal_mask(T, dtype=np.float32):
    os._exit(3)
