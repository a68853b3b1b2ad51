"""Task 3.4: the future is replaced in the caller's decoder_input_ids, without a copy."""
import numpy as np


def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    T = decoder_input_ids.shape[1]
    leak = np.zeros(T)
    with model.evaluating():
        logits, _ = model.forward(src_ids, decoder_input_ids)
        for t in range(T - 1):
            changed = decoder_input_ids  # no copy: the replacements pile up in the caller's array
            changed[:, t + 1:] = replacement_ids[:, t + 1:]
            changed_logits, _ = model.forward(src_ids, changed)
            leak[t] = np.abs(changed_logits[:, t] - logits[:, t]).max()
    return leak
