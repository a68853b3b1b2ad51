"""Task 9.1: top-k picks exactly k indices with argsort, so tokens tied with the k-th largest
logit are removed (Hugging Face keeps every logit >= the k-th value)."""
import numpy as np


def top_k_filter(logits, k):
    out = np.array(logits, copy=True)
    V = out.shape[-1]
    if k == 0 or k >= V:
        return out
    top = np.argsort(-out, axis=-1, kind="stable")[..., :k]
    keep = np.zeros(out.shape, dtype=bool)
    np.put_along_axis(keep, top, True, axis=-1)
    out[~keep] = -np.inf
    return out
