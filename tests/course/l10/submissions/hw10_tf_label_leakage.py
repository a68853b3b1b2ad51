"""Task 10.1: the decoder is fed the labels as they are (-100 mapped to pad), not shifted
right: each position sees the token it must predict, and the validation loss looks
wonderful."""
import numpy as np


def teacher_forced_eval(model, input_ids, labels, start_id, pad_id):
    with model.evaluating():
        logits, _ = model.forward(input_ids, np.where(labels == IGNORE_INDEX, pad_id, labels))
    real = labels != IGNORE_INDEX
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_p, np.where(real, labels, 0)[..., None], axis=-1)[..., 0]
    loss = float((nll * real).sum() / real.sum())
    accuracy = float(((logits.argmax(axis=-1) == labels) & real).sum() / real.sum())
    return {"loss": loss, "token_accuracy": accuracy}
