"""Cross-entropy over decoder targets, with the gradient p_hat - y.

For each real target position t (label y_t != ignore_index):

    loss_t = -log softmax(z_t)[y_t]                     (with label smoothing eps:
    L      = (1 / n_real) sum_t loss_t                    q = (1 - eps) onehot(y_t) + eps / V,
    dL/dz_t = (p_hat_t - y_t) / n_real                    loss_t = -sum_v q_v log p_v)

Ignored positions (padding, label -100) contribute nothing to the sum, nothing to
n_real, and get exactly zero gradient.  Dividing by n_real, not B*T, keeps a padded
batch's loss equal to the mean over its real tokens.
"""
from __future__ import annotations

import numpy as np

from .checks import check_float, check_number, check_shape, check_token_ids
from .data import IGNORE_INDEX  # -100, as in PyTorch and Hugging Face
from .layers.softmax import log_softmax


def cross_entropy(logits: np.ndarray, labels: np.ndarray, ignore_index: int = IGNORE_INDEX,
                  label_smoothing: float = 0.0):
    """logits (B, T, V) (or (N, V)), labels (B, T) (or (N,)) -> (loss, dlogits).

    ``label_smoothing`` follows ``torch.nn.functional.cross_entropy``: the target
    distribution is (1 - eps) * onehot + eps / V.
    """
    check_float("logits", logits)
    V = logits.shape[-1]
    check_shape("labels", labels, logits.shape[:-1], f"logits are {logits.shape}: one label per position")
    labels = check_token_ids("labels", labels, V, allow=(ignore_index,))
    check_number("label_smoothing", label_smoothing, 0, 1)
    real = labels != ignore_index  # (B, T)  which positions count
    n_real = int(real.sum())
    if n_real == 0:
        raise ValueError(f"labels: every label is ignore_index={ignore_index}; "
                         "expected at least one real target token to average over")
    y = np.where(real, labels, 0)[..., None]  # (B, T, 1)  any valid id where ignored

    logp = log_softmax(logits)  # (B, T, V)
    loss_t = -np.take_along_axis(logp, y, axis=-1)[..., 0]  # (B, T)  -log p_hat[y_t]
    if label_smoothing:
        eps = label_smoothing
        loss_t = (1 - eps) * loss_t - eps * logp.mean(axis=-1)  # (B, T)
    loss = float((loss_t * real).sum() / n_real)

    # dL/dz = (p_hat - q) / n_real on real positions, 0 on ignored ones
    dlogits = np.exp(logp)  # (B, T, V)  p_hat
    np.put_along_axis(dlogits, y, np.take_along_axis(dlogits, y, axis=-1) - (1 - label_smoothing), axis=-1)
    if label_smoothing:
        dlogits -= label_smoothing / V
    dlogits *= (real / n_real)[..., None].astype(dlogits.dtype)  # (B, T, 1)
    return loss, dlogits
