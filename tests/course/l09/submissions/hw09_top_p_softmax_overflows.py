"""Task 9.1 (b): the probabilities are np.exp(logits) / sum, without subtracting the row's
maximum first: right for logits near 0, but large logits overflow (np.exp(89) is inf in float32,
np.exp(710) in float64), the probabilities become inf / inf = nan, and no token is removed."""
import numpy as np


def top_p_filter(logits, p, min_tokens_to_keep=1):
    out = np.array(logits, copy=True)
    if p >= 1.0:
        return out
    probs = np.exp(out)  # "softmax": no max subtracted
    probs = probs / probs.sum(axis=-1, keepdims=True)
    order = np.argsort(out, axis=-1, kind="stable")  # least likely first
    cum = np.cumsum(np.take_along_axis(probs, order, axis=-1), axis=-1)
    remove_sorted = cum <= 1.0 - p
    remove_sorted[..., max(out.shape[-1] - min_tokens_to_keep, 0):] = False
    remove = np.empty_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)
    out[remove] = -np.inf
    return out
