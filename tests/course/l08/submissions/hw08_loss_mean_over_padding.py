"""Task 8.3: the loss averaged over every position, padding included."""
import numpy as np

IGNORE_INDEX = -100


def masked_cross_entropy(logits, labels, ignore_index=IGNORE_INDEX):
    y = np.where(labels == ignore_index, 0, labels)  # padding "handled" by pretending its label is 0
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]
    loss = float(nll.mean())  # over B * T positions
    dlogits = np.exp(log_p)
    np.put_along_axis(dlogits, y[..., None], np.take_along_axis(dlogits, y[..., None], axis=-1) - 1, axis=-1)
    return loss, dlogits / labels.size
