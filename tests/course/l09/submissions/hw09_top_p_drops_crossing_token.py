"""Task 9.1: top-p keeps the most likely tokens only while their total stays <= p, so the token
that crosses p is dropped (and the kept mass falls short of p)."""
import numpy as np


def top_p_filter(logits, p, min_tokens_to_keep=1):
    out = np.array(logits, copy=True)
    if p >= 1.0:
        return out
    order = np.argsort(-out, axis=-1, kind="stable")  # most likely first
    z = np.take_along_axis(out, order, axis=-1).astype(np.float64)
    probs = np.exp(z - z[..., :1])
    probs /= probs.sum(axis=-1, keepdims=True)
    keep_sorted = np.cumsum(probs, axis=-1) <= p  # stops before the token that crosses p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = np.empty_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    out[~keep] = -np.inf
    return out
