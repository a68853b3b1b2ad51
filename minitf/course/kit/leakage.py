"""Label leakage, measured: the decoder fed the right way and the two wrong ways, on one
task and model.  Lesson 3 section 1 (why a decoder must not see the future) and Lesson 8
section 2 (shifted inputs and the causal mask) train the same variants of the same model.

* :func:`reverse_task`, :func:`reverse_model_config`, :func:`reverse_train_config` -- the
  task, model and training set-up (Lesson 8's reference run's; Lesson 3 shrinks it);
* :data:`VARIANTS`, :func:`train_variant` -- a fresh model trained with the decoder fed as
  a variant says, and a few of its free-running outputs.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

from ...checks import check_choice, check_instance, check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX, Batch
from ...data.tasks import Task, get_task
from ...decoding import greedy_search
from ...models import EncoderDecoder
from ...training import History, TrainConfig
from .runs import check_batch, check_model, lesson_model_config, lesson_train_config, train_fresh

__all__ = ["reverse_task", "reverse_model_config", "reverse_train_config", "VARIANTS", "labels_as_inputs",
           "LabelsAsInputs", "Run", "free_running_samples", "train_variant"]


def reverse_task() -> Task:
    """The task every experiment of the lesson trains on: reverse strings of 2..12 letters
    over an 8-letter alphabet (targets of 3..13 tokens with ``<eos>``)."""
    return get_task("reverse", min_len=2, max_len=12, n_symbols=8)


def reverse_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """A small encoder-decoder for :func:`reverse_task`: D = 32, H = 2, F = 64, two encoder
    blocks and three decoder blocks (three shares of dL/dH_enc to look at), in float64
    (:mod:`minitf.course.kit.runs` says why).

    Embeddings are neither shared nor tied, so every parameter belongs to exactly one
    stage of the gradient's journey: the source embedding to the encoder, ``W_U`` to the
    head.  ``overrides`` replace any field.
    """
    task = reverse_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=2,
                                                     n_decoder_layers=3, share_embeddings=False, tie_output=False),
                                              **overrides})


def reverse_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """400 AdamW steps of 32 examples, warm-up then cosine decay from 3e-3, evaluated on
    128 fixed examples every 25 steps.  ``overrides`` replace any field."""
    return lesson_train_config(seed, **{**dict(steps=400, batch_size=32, lr=3e-3, warmup=20, eval_every=25,
                                               eval_size=128), **overrides})


VARIANTS = ("teacher_forced", "no_causal_mask", "labels_as_inputs")
"""How :func:`train_variant` feeds the decoder: the right way, and the two leaks of section 2.

* ``"teacher_forced"``: decoder inputs = labels shifted right (position t sees y_{t-1});
* ``"no_causal_mask"``: the same inputs, but the model is built with ``causal=False``: its
  decoder self-attention is unmasked, so position t can read the input at t + 1, which
  *is* y_t;
* ``"labels_as_inputs"``: the decoder is fed y_t itself instead of y_{t-1} (no shift).
"""


def labels_as_inputs(batch: Batch, pad_id: int) -> Batch:
    """The leaky batch: ``decoder_input_ids`` = the labels themselves (y_t at position t,
    no shift), ignored labels turned into ``pad_id``.  Labels are unchanged."""
    check_batch(batch)
    decoder_input_ids = np.where(batch.labels == IGNORE_INDEX, pad_id, batch.labels)  # (B, T)
    return Batch(batch.input_ids, decoder_input_ids.astype(np.int64), batch.labels)


class LabelsAsInputs:
    """A task whose batches feed the decoder y_t instead of y_{t-1} (:func:`labels_as_inputs`).

    Wraps a :class:`~minitf.data.tasks.Task` for :func:`minitf.training.train`: same pairs,
    same tokenizer, same labels; only ``decoder_input_ids`` change.
    """

    def __init__(self, task: Task):
        self.task = check_instance("task", task, Task, "a minitf.data.tasks.Task")
        self.tokenizer = task.tokenizer
        self.name = f"{task.name} (labels as inputs)"

    def batch(self, pairs) -> Batch:
        return labels_as_inputs(self.task.batch(pairs), self.tokenizer.pad_id)

    def batches(self, batch_size: int, rng, exclude=()) -> Iterator[Batch]:
        for b in self.task.batches(batch_size, rng, exclude):
            yield labels_as_inputs(b, self.tokenizer.pad_id)

    def dataset(self, n: int, seed: int):
        return self.task.dataset(n, seed)


class Run(NamedTuple):
    """A model trained by :func:`train_variant`."""

    variant: str
    model: EncoderDecoder  # built with causal=False for "no_causal_mask"
    optimizer: object
    history: History
    samples: list  # [(source, target, free-running output)] for three evaluation examples


def free_running_samples(model: EncoderDecoder, task: Task, n: int = 3, seed: int = 7) -> list:
    """``[(source, target, output)]`` for ``n`` fixed examples of ``task``: the model's greedy,
    free-running output as text (:func:`minitf.decoding.greedy_search`, eval mode)."""
    check_model(model)
    pairs = task.dataset(check_int("n", n, low=1), seed=seed)
    batch = task.batch(pairs)
    out = greedy_search(model, batch.input_ids, max_new_tokens=batch.labels.shape[1] + 2)
    return [(src, tgt, text) for (src, tgt), text in zip(pairs, task.tokenizer.decode_batch(out.sequences))]


def train_variant(variant: str, task: Task | None = None, model_config: ModelConfig | None = None,
                  train_config: TrainConfig | None = None, callback=None) -> Run:
    """Train a fresh model with :func:`minitf.training.train`, feeding the decoder as
    ``variant`` says (one of :data:`VARIANTS`).

    The leaky variants are trained *and evaluated* with their leak (the free-running
    evaluation always feeds the model its own output: there is nothing to leak from at
    the newest position; a model built with ``causal=False`` is decoded without the KV
    cache, which needs the causal mask).  Defaults: :func:`reverse_task`, :func:`reverse_model_config`,
    :func:`reverse_train_config`.  ``callback(model, step, history)`` as for :func:`~minitf.course.kit.runs.train_fresh`.
    """
    check_choice("variant", variant, VARIANTS)
    task = reverse_task() if task is None else task
    model_config = reverse_model_config(task) if model_config is None else model_config
    train_config = reverse_train_config() if train_config is None else train_config
    if variant == "no_causal_mask":
        model_config = model_config.replace(causal=False)
    fed = LabelsAsInputs(task) if variant == "labels_as_inputs" else task
    model, optimizer, history = train_fresh(fed, model_config, train_config, callback=callback)
    return Run(variant, model, optimizer, history, free_running_samples(model, task))
