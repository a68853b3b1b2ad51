"""Task 10.2: generation written out, its scoring taken from minitf's sequence_metrics."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def free_running_eval(model, input_ids, labels, start_id, eos_id, pad_id, max_len):
    B = input_ids.shape[0]
    prefix = np.full((B, 1), start_id, dtype=np.int64)
    done = np.zeros(B, dtype=bool)
    with model.evaluating():
        for _ in range(max_len):
            logits, _ = model.forward(input_ids, prefix)
            nxt = np.where(done, pad_id, logits[:, -1].argmax(axis=-1))
            prefix = np.concatenate([prefix, nxt[:, None]], axis=1)
            done |= nxt == eos_id
            if done.all():
                break
    pred = prefix[:, 1:]
    return {"predictions": pred, **_lib("training").sequence_metrics(pred, labels, eos_id)}
