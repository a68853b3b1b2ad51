"""Task 3.4: the leak is built in the logits' dtype (``np.zeros(T, dtype=logits.dtype)``, "float32
in, float32 out"): a float32 model's leak comes back float32, where the template promises a float64
array whatever the model."""
import numpy as np


def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    T = decoder_input_ids.shape[1]
    with model.evaluating():
        logits, _ = model.forward(src_ids, decoder_input_ids)
        leak = np.zeros(T, dtype=logits.dtype)  # the logits' dtype
        for t in range(T - 1):
            changed = decoder_input_ids.copy()
            changed[:, t + 1:] = replacement_ids[:, t + 1:]
            changed_logits, _ = model.forward(src_ids, changed)
            leak[t] = np.abs(changed_logits[:, t] - logits[:, t]).max()
    return leak
