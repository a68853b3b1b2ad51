"""Task 10.1: the teacher-forced loss and accuracy from minitf (shift_right, cross_entropy,
token_accuracy), by computed names."""
import importlib

import numpy as np


def _lib(dotted):
    """A minitf module by a computed name: no import statement names it, no source scan sees it."""
    return importlib.import_module("mini" + "tf." + dotted)


def teacher_forced_eval(model, input_ids, labels, start_id, pad_id):
    dec = _lib("data").shift_right(labels, start_id, pad_id)
    with model.evaluating():
        logits, _ = model.forward(input_ids, dec)
    loss, _ = _lib("loss").cross_entropy(logits, labels)
    return {"loss": float(loss), "token_accuracy": _lib("training").token_accuracy(logits, labels)}
