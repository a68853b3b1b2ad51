"""Task 8.5: a row is finished when it produces token 2 -- the course tokenizer's <eos> -- not
the ``eos_id`` it was given: right for that tokenizer only."""
import numpy as np


def free_running_decode(model, src_ids, start_id, eos_id, max_len):
    src_ids = np.asarray(src_ids)
    B = src_ids.shape[0]
    H_enc, _ = model.encode(src_ids)
    src_mask = model.source_mask(src_ids)
    prefix = np.full((B, 1), start_id, dtype=np.int64)
    done = np.zeros(B, dtype=bool)
    for _ in range(max_len):
        logits, _ = model.decode(prefix, H_enc, src_mask)
        next_id = logits[:, -1].argmax(axis=-1)
        next_id = np.where(done, model.config.pad_id, next_id)
        prefix = np.concatenate([prefix, next_id[:, None]], axis=1)
        done |= next_id == 2  # "<eos> is 2"
        if done.all():
            break
    return prefix[:, 1:]
