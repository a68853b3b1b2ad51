"""Task 10.1: the decoder's first input is token 1 -- the course tokenizer's <bos> -- not the
``start_id`` it was given."""
import numpy as np


def teacher_forced_eval(model, input_ids, labels, start_id, pad_id):
    """Task 10.1: the mean cross-entropy over the real target tokens, and the share of them
    the argmax gets right, given the true prefix -- in eval mode (no dropout)."""
    with model.evaluating():  # dropout off; the mode is restored afterwards
        logits, _ = model.forward(input_ids, _shift_right(labels, 1, pad_id))  # (B, T, V)
    real = labels != IGNORE_INDEX  # (B, T)
    z = logits - logits.max(axis=-1, keepdims=True)  # (B, T, V) stable log-softmax
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    safe = np.where(real, labels, 0)  # (B, T) any index at the padding: it is masked out
    nll = -np.take_along_axis(log_p, safe[..., None], axis=-1)[..., 0]  # (B, T)
    n_real = real.sum()
    loss = float((nll * real).sum() / n_real)  # divided by the real tokens, not B * T
    accuracy = float(((logits.argmax(axis=-1) == labels) & real).sum() / n_real)
    return {"loss": loss, "token_accuracy": accuracy}
