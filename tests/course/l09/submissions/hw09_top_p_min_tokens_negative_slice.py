"""Task 9.1 (b): the most likely tokens are forced in with ``remove_sorted[..., V - m:] = False``:
right for m <= V, but with min_tokens_to_keep = m > V the slice starts at the negative index
V - m, counted from the END, and forces only the last m - V tokens (every token must stay)."""
import numpy as np


def top_p_filter(logits, p, min_tokens_to_keep=1):
    out = np.array(logits, copy=True)
    if p >= 1.0:
        return out
    order = np.argsort(out, axis=-1, kind="stable")
    z = np.take_along_axis(out, order, axis=-1).astype(np.float64)
    probs = np.exp(z - z[..., -1:])
    probs /= probs.sum(axis=-1, keepdims=True)
    cum = np.cumsum(probs, axis=-1)
    remove_sorted = cum <= 1.0 - p
    remove_sorted[..., out.shape[-1] - min_tokens_to_keep:] = False  # V - m < 0 when m > V
    remove = np.empty_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)
    out[remove] = -np.inf
    return out
