"""Task 8.2: an off-by-one causal mask -- position t can see position t+1."""
import numpy as np


def causal_mask(T, dtype=np.float32):
    return np.triu(np.full((T, T), -1e9), k=2).astype(dtype)  # k=2: the first superdiagonal stays open
