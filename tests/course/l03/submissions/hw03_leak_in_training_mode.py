"""Task 3.4: the leak is measured with the model as it comes, in training mode: dropout moves the
logits at every forward."""
import numpy as np


def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    T = decoder_input_ids.shape[1]
    leak = np.zeros(T)
    logits, _ = model.forward(src_ids, decoder_input_ids)  # no model.evaluating()
    for t in range(T - 1):
        changed = decoder_input_ids.copy()
        changed[:, t + 1:] = replacement_ids[:, t + 1:]
        changed_logits, _ = model.forward(src_ids, changed)
        leak[t] = np.abs(changed_logits[:, t] - logits[:, t]).max()
    return leak
