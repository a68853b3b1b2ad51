"""Runs that put a student's function inside minitf, executed in the grader's process.

A test that wants to know what a student's ``shift_right``, mask or loss does to training
runs one of these with the student's function plugged in (``submission.run("train_losses",
..., shift=Student("shift_right"))``): minitf runs here, and each call of the student's
function goes to the student's process through its proxy, its arguments and result
crossing by value (:mod:`minitf.grading.wire`).  The student's process never holds minitf.
The grader runs the same function with minitf's own pieces for the run to compare with.
(Where a student's function returns plain data -- a mask -- a test may instead put that
data into minitf itself.)
"""
from __future__ import annotations

import numpy as np

from minitf.config import ModelConfig
from minitf.data import shift_right
from minitf.loss import cross_entropy
from minitf.models import EncoderDecoder
from minitf.optim import SGD


def train_losses(config: dict, batches: list, *, start_id: int, pad_id: int, lr: float, momentum: float,
                 shift=None, loss_fn=None, mask_fn=None) -> list:
    """Train ``EncoderDecoder(config)`` with SGD on ``batches`` ([(input_ids, labels)]) and
    return the loss at every step.

    ``shift(labels, start_id, pad_id)`` builds the decoder inputs, ``mask_fn(T, dtype=...)``
    the decoder's self-attention mask and ``loss_fn(logits, labels)`` the loss; each
    defaults to minitf's own (``None``).
    """
    model = EncoderDecoder(ModelConfig.from_dict(config))
    opt = SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    for input_ids, labels in batches:
        decoder_input_ids = (shift or shift_right)(labels.copy(), start_id, pad_id)  # (B, T)
        T = labels.shape[1]
        self_mask = None if mask_fn is None else mask_fn(T, dtype=model.dtype)  # (T, T)
        logits, cache = model.forward(input_ids, decoder_input_ids, self_mask=self_mask)  # (B, T, V)
        loss, dlogits = (loss_fn or cross_entropy)(logits, labels.copy())
        losses.append(float(loss))
        model.zero_grad()
        model.backward(np.asarray(dlogits, dtype=logits.dtype), cache)
        opt.step(model.gradients())
    return losses


def decode_and_record(model: EncoderDecoder, src_ids, start_id: int, eos_id: int, max_len: int, decode) -> tuple:
    """Run ``decode(model, src_ids, start_id, eos_id, max_len)`` (the student's decoder) and
    record every decoder input it gave the model.  Returns ``(generated, inputs)``.

    The grader recomputes the logits of each recorded input itself: what comes back from
    here is only what was fed.
    """
    inputs = []
    model_decode, model_forward = model.decode, model.forward

    def recording_decode(decoder_input_ids, *args, **kwargs):
        inputs.append(np.array(decoder_input_ids, copy=True))
        return model_decode(decoder_input_ids, *args, **kwargs)

    def recording_forward(src, decoder_input_ids, *args, **kwargs):
        inputs.append(np.array(decoder_input_ids, copy=True))
        return model_forward(src, decoder_input_ids, *args, **kwargs)

    model.decode, model.forward = recording_decode, recording_forward  # instance attributes shadow the methods
    try:
        generated = decode(model, src_ids, start_id, eos_id, max_len)
    finally:
        del model.decode, model.forward  # the grader's model, as it was
    return generated, inputs
