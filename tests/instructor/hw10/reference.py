"""Homework 10 -- Fine-tuning on supervised pairs.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the reasoning.  CI grades this
file and expects full marks (``minitf grade hw10 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B pairs, S source length, T target length (labels right-padded with -100),
V vocabulary, T' generated length.
"""
from __future__ import annotations

import numpy as np

IGNORE_INDEX = -100


def _shift_right(labels, start_id, pad_id):
    """labels (B, T) -> decoder inputs (B, T): start token, then labels[:, :-1], -100 -> pad."""
    dec = np.empty_like(labels)
    dec[:, 0] = start_id
    dec[:, 1:] = labels[:, :-1]
    return np.where(dec == IGNORE_INDEX, pad_id, dec)


# =====================================================================================
# Task 10.1 -- the teacher-forced validation loss
# =====================================================================================
def teacher_forced_eval(model, input_ids, labels, start_id, pad_id):
    """Task 10.1: the mean cross-entropy over the real target tokens, and the share of them
    the argmax gets right, given the true prefix -- in eval mode (no dropout)."""
    with model.evaluating():  # dropout off; the mode is restored afterwards
        logits, _ = model.forward(input_ids, _shift_right(labels, start_id, pad_id))  # (B, T, V)
    real = labels != IGNORE_INDEX  # (B, T)
    z = logits - logits.max(axis=-1, keepdims=True)  # (B, T, V) stable log-softmax
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    safe = np.where(real, labels, 0)  # (B, T) any index at the padding: it is masked out
    nll = -np.take_along_axis(log_p, safe[..., None], axis=-1)[..., 0]  # (B, T)
    n_real = real.sum()
    loss = float((nll * real).sum() / n_real)  # divided by the real tokens, not B * T
    accuracy = float(((logits.argmax(axis=-1) == labels) & real).sum() / n_real)
    return {"loss": loss, "token_accuracy": accuracy}


# =====================================================================================
# Task 10.2 -- the free-running (self-fed) evaluation
# =====================================================================================
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
            done |= nxt == eos_id
            if done.all():
                break
    return prefix[:, 1:]  # (B, T') the generated tokens, without the start token


def _score(pred, labels, eos_id):
    """Generated (B, T') against labels (B, T): exact match and token accuracy."""
    B, T = labels.shape
    P = np.full((B, T), -1, dtype=np.int64)  # (B, T) pred cut or padded to the target length
    n = min(T, pred.shape[1])
    P[:, :n] = pred[:, :n]
    real = labels != IGNORE_INDEX  # (B, T)
    correct = (P == labels) & real  # (B, T)
    n_real = real.sum(axis=1)  # (B,)
    # exact: every real target token right, and the output stops there (the target ends in
    # <eos>; a target without one must be followed by <eos>)
    ends_with_eos = labels[np.arange(B), np.maximum(n_real - 1, 0)] == eos_id  # (B,)
    is_eos = pred == eos_id
    first_eos = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1), -1)  # (B,)
    exact = (correct.sum(axis=1) == n_real) & (ends_with_eos | (first_eos == n_real))
    return {"predictions": pred, "exact_match": float(exact.mean()),
            "token_accuracy": float(correct.sum() / real.sum())}  # over the real tokens of the whole batch


def free_running_eval(model, input_ids, labels, start_id, eos_id, pad_id, max_len):
    """Task 10.2: greedy decoding fed its own outputs, then exact match and token accuracy
    of the outputs against the labels (which are never fed to the model)."""
    return _score(_greedy(model, input_ids, start_id, eos_id, pad_id, max_len), labels, eos_id)


# =====================================================================================
# Task 10.3 -- early stopping on a validation metric
# =====================================================================================
def early_stopping(values, mode, patience, min_delta=0.0):
    """Task 10.3: (best_index, stop_index) of a run evaluated ``len(values)`` times."""
    values = np.asarray(values, dtype=np.float64)
    sign = 1.0 if mode == "min" else -1.0  # "max": negate, and the rule for a loss applies
    best, best_index, wait = np.inf, 0, 0
    for i, v in enumerate(sign * values):  # a loop over evaluations: each depends on the last
        if v < best - min_delta:  # an improvement by more than min_delta
            best, best_index, wait = v, i, 0
        else:
            wait += 1
            if wait >= patience:
                return best_index, i
    return best_index, len(values) - 1


# =====================================================================================
# Task 10.4 -- concept check
# =====================================================================================
ANSWERS = {
    "10.4.1": "c",
    "10.4.2": "b",
    "10.4.3": "d",
    "10.4.4": "a",
    "10.4.5": "c",
}
