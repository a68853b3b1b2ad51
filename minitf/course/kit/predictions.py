"""A model's predictions both ways: given the true prefix (teacher-forced) and fed its own
output (free-running) -- what Lesson 8 section 5 and Lesson 9 section 6 compare.
"""
from __future__ import annotations

import numpy as np

from ...data import Batch
from ...decoding import greedy_search
from ...models import EncoderDecoder
from .runs import check_batch, check_model

__all__ = ["predict_both_ways", "generated"]


def predict_both_ways(model: EncoderDecoder, batch: Batch):
    """The model's predictions for ``batch`` both ways, in eval mode.

    Returns ``(teacher_forced, free_running)``: the argmax at every position given the true
    prefix (B, T), and the greedy output fed its own prefix (B, T' <= T + 2), ``<pad>``
    after each row's ``<eos>`` (:func:`minitf.decoding.greedy_search`).
    """
    check_model(model)
    check_batch(batch)
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    free_running = greedy_search(model, batch.input_ids, max_new_tokens=batch.labels.shape[1] + 2).sequences
    return logits.argmax(axis=-1), free_running


def generated(sequences: np.ndarray, eos_id: int, T: int) -> np.ndarray:
    """``sequences`` (B, T') cut or padded to (B, T), -1 wherever nothing was generated:
    after the row's first ``<eos>`` (where the decoder pads), and past T'."""
    B, n = sequences.shape[0], min(T, sequences.shape[1])
    out = np.full((B, T), -1, dtype=np.int64)  # (B, T)
    is_eos = sequences[:, :n] == eos_id  # (B, n)
    after_eos = np.cumsum(is_eos, axis=1) > is_eos  # (B, n) an <eos> came before this position
    out[:, :n] = np.where(after_eos, -1, sequences[:, :n])
    return out
