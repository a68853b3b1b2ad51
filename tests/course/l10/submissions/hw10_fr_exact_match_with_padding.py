"""Task 10.2: exact match compares whole rows, padding included: the output's pad_id never
equals the labels' -100, so no padded row can ever match."""
import numpy as np


def free_running_eval(model, input_ids, labels, start_id, eos_id, pad_id, max_len):
    out = _score(_greedy(model, input_ids, start_id, eos_id, pad_id, max_len), labels, eos_id)
    pred = out["predictions"]
    B, T = labels.shape
    P = np.full((B, T), pad_id, dtype=np.int64)
    n = min(T, pred.shape[1])
    P[:, :n] = pred[:, :n]
    out["exact_match"] = float((P == labels).all(axis=1).mean())
    return out
