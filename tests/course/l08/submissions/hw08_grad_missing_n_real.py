"""Task 8.3: the right loss, but a gradient missing the 1/n_real of the mean."""
import numpy as np

IGNORE_INDEX = -100


def masked_cross_entropy(logits, labels, ignore_index=IGNORE_INDEX):
    real = labels != ignore_index
    n_real = int(real.sum())
    y = np.where(real, labels, 0)
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]
    loss = float((nll * real).sum() / n_real)
    dlogits = np.exp(log_p)
    np.put_along_axis(dlogits, y[..., None], np.take_along_axis(dlogits, y[..., None], axis=-1) - 1, axis=-1)
    dlogits *= real[..., None].astype(dlogits.dtype)  # p_hat - y at real positions, but no / n_real
    return loss, dlogits
