"""Lesson 8 (*Training: teacher forcing & the loss*): the runs and measurements.

Each function here runs minitf's own model, loss and training loop and returns what it
measured; the lesson notebook prints these numbers and the figures
(:mod:`minitf.course.l08_teacher_forcing.figures`) draw them, so neither holds model code of its own.  This
module holds the lesson's set-up, its reference run and sections 1-2; sections 3-4 live in
:mod:`~minitf.course.l08_teacher_forcing.loss`, section 5 and the table in
:mod:`~minitf.course.l08_teacher_forcing.gap`.  Every name is importable from here
(``from minitf.course import l08_teacher_forcing as l8``).

======================================  ===================================================
section of Lesson 8                     what is measured, and where
======================================  ===================================================
set-up                                  :func:`lesson8_task`, :func:`lesson8_model_config`,
                                        :func:`lesson8_train_config`, :func:`lesson8_batch`
1  autoregression vs parallel training  :func:`parallel_vs_sequential`: one teacher-forced
                                        pass against T sequential steps, logits and time
2  shift and causal mask                :func:`train_variant` with a leak -- a decoder
                                        built with ``causal=False``, or
                                        :func:`labels_as_inputs` -- loss vs free-running;
                                        :func:`leakage_runs` (stored, for the notebook, by
                                        ``leakage_curves``)
3  the loss                             ``lesson08_loss``: :func:`logit_gradient_check`
                                        (p_hat - y against finite differences),
                                        :func:`padding_invariance`;
                                        ``data_parallel``: :func:`shard_gradients` (N
                                        shards weighted by tokens vs the per-shard mean)
4  the gradient's journey               ``lesson08_loss``: :func:`gradient_journey` (norms
                                        stage by stage, each decoder block's share of
                                        dL/dH_enc), :func:`cross_attention_off`,
                                        :func:`activation_memory`
5  training vs inference                :func:`lesson8_run` (teacher-forced and free-running
                                        accuracy over training); ``lesson08_gap``:
                                        :func:`error_compounding` (1 - (1 - eps)^T against
                                        the model), :func:`exposure_example`
table  learned / config / state         ``lesson08_gap``: :func:`learned_config_state`
======================================  ===================================================

The lesson's reference run (:func:`lesson8_run`) is a small encoder-decoder trained on the
``reverse`` task for 400 steps; the notebook prints how long that took.  It is cached (one
run per process and seed, however the seed is passed), so the notebook and both figures
share one trained model; treat the cached model as read-only (the context managers of
``lesson08_loss`` restore what they change).

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ...checks import check_int
from ...config import ModelConfig
from ...data import Batch
from ...models import EncoderDecoder
from ...data.tasks import Task
from ...training import History, TrainConfig
from ..kit.runs import (check_batch, check_model, once_per_process,
                        to_float64, train_fresh)
from ..kit.leakage import VARIANTS, LabelsAsInputs, Run, free_running_samples, labels_as_inputs, train_variant
from ..kit.leakage import reverse_model_config as lesson8_model_config
from ..kit.leakage import reverse_task as lesson8_task
from ..kit.leakage import reverse_train_config as lesson8_train_config
from .data_parallel import ShardGradients, shard_gradients, uneven_batch
from .gap import (Compounding, Row, edit_distance, error_compounding, exposure_example, format_rows,
                  learned_config_state, predict_both_ways)
from .loss import (GradientJourney, PaddingCheck, Stage, activation_memory, cross_attention_off,
                   encoder_parameter_names, gradient_journey, logit_gradient_check, padding_invariance)

__all__ = [
    "lesson8_task", "lesson8_model_config", "lesson8_train_config", "lesson8_batch", "to_float64",
    "sequential_logits", "ParallelCheck", "parallel_vs_sequential",
    "VARIANTS", "labels_as_inputs", "LabelsAsInputs", "Run", "free_running_samples", "train_variant",
    "leakage_runs",
    "logit_gradient_check", "PaddingCheck", "padding_invariance", "ShardGradients", "shard_gradients",
    "uneven_batch",
    "Stage", "GradientJourney", "gradient_journey", "cross_attention_off", "encoder_parameter_names",
    "activation_memory",
    "predict_both_ways", "Compounding", "error_compounding", "edit_distance", "exposure_example", "Lesson8Run",
    "lesson8_run",
    "Row", "learned_config_state", "format_rows",
]


# ---- the lesson's experiment ----------------------------------------------------------------
def lesson8_batch(seed: int = 0, size: int = 32) -> Batch:
    """A fixed batch of ``size`` examples of :func:`lesson8_task` (the one section 4 and
    Figure 2 measure the gradient on)."""
    task = lesson8_task()
    return task.batch(task.dataset(check_int("size", size, low=1), seed=seed + 30_000))


# ---- section 1: one parallel pass = T sequential steps -----------------------------------------
def sequential_logits(model: EncoderDecoder, src_ids: np.ndarray, decoder_input_ids: np.ndarray) -> np.ndarray:
    """Teacher-forced logits computed one position at a time, as generation would.

    The encoder runs once; then for t = 0 .. T-1 the decoder is run on the true prefix
    ``decoder_input_ids[:, :t+1]`` and only its last position is kept.  T dependent
    passes, against :meth:`EncoderDecoder.forward`'s one.

    src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V)
    """
    check_model(model)
    src_ids, decoder_input_ids = np.asarray(src_ids), np.asarray(decoder_input_ids)
    H_enc, _ = model.encode(src_ids)  # (B, S, D), once
    src_mask = model.source_mask(src_ids)  # (B, 1, 1, S)
    steps = []
    for t in range(decoder_input_ids.shape[1]):
        logits_t, _ = model.decode(decoder_input_ids[:, :t + 1], H_enc, src_mask)  # (B, t+1, V)
        steps.append(logits_t[:, -1])  # (B, V) the newest position only
    return np.stack(steps, axis=1)  # (B, T, V)


class ParallelCheck(NamedTuple):
    """One teacher-forced pass against T sequential steps (:func:`parallel_vs_sequential`)."""

    parallel: np.ndarray  # (B, T, V) logits of model.forward
    sequential: np.ndarray  # (B, T, V) logits of sequential_logits
    max_abs_diff: float  # max |parallel - sequential|
    parallel_seconds: float  # best of `repeats` timings
    sequential_seconds: float
    n_positions: int  # T


def parallel_vs_sequential(model: EncoderDecoder, batch: Batch, repeats: int = 3) -> ParallelCheck:
    """Score every target position of ``batch`` in one pass and in T sequential passes,
    in eval mode; time each (the best of ``repeats`` runs, ``time.perf_counter``)."""
    check_model(model)
    check_batch(batch)
    repeats = check_int("repeats", repeats, low=1)

    def best_time(fn):
        times, out = [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        return out, min(times)

    with model.evaluating():
        parallel, t_par = best_time(lambda: model.forward(batch.input_ids, batch.decoder_input_ids)[0])
        sequential, t_seq = best_time(lambda: sequential_logits(model, batch.input_ids, batch.decoder_input_ids))
    return ParallelCheck(parallel, sequential, float(np.max(np.abs(parallel - sequential))), t_par, t_seq,
                         batch.decoder_input_ids.shape[1])


# ---- section 2: label leakage ----------------------------------------------------------------------


@once_per_process
def leakage_runs(seed: int = 0) -> dict:
    """The two leaky variants trained with the lesson's set-up (cached by seed):
    ``{"no_causal_mask": Run, "labels_as_inputs": Run}``.  The honest run to compare them
    with is :func:`lesson8_run`: the same task, model, seed and training steps.

    Only the evaluation differs: the leaky runs are evaluated once, after their last step
    (``eval_every=0``), since the lesson reads only their final free-running score.
    Evaluating neither draws data nor changes a weight, so the training is step for step
    what it would be with the reference run's evaluations every 25 steps.  The notebook reads
    these runs' numbers from :mod:`~minitf.course.l08_teacher_forcing.leakage_curves`'s file,
    which they wrote (``tests/course/l08/test_leakage_curves.py`` checks that they still do).
    """
    task = lesson8_task()
    return {v: train_variant(v, task, lesson8_model_config(task, seed), lesson8_train_config(seed, eval_every=0))
            for v in VARIANTS[1:]}


# ---- section 5: the reference run, evaluated both ways as it trains ---------------------------------
class Lesson8Run(NamedTuple):
    """The lesson's reference run (:func:`lesson8_run`)."""

    task: Task
    model_config: ModelConfig
    train_config: TrainConfig
    model: EncoderDecoder  # trained; shared by the notebook and the figures: do not modify
    optimizer: object  # its AdamW, moments and all
    history: History  # losses per step; evals: teacher-forced and free-running metrics
    eval_batch: Batch  # 1000 fixed examples for the by-length measurements
    midpoint_step: int  # the step at which `midpoint` was measured
    midpoint: Compounding  # error compounding halfway through training
    final: Compounding  # and at the end
    midpoint_example: dict  # exposure_example halfway through training


@once_per_process
def lesson8_run(seed: int = 0) -> Lesson8Run:
    """Train the lesson's model (:func:`lesson8_task`, :func:`lesson8_model_config`,
    :func:`lesson8_train_config`) once per process and seed, and measure error compounding
    on 1000 fixed examples halfway through training and at the end.

    ``lesson8_run()``, ``lesson8_run(0)`` and ``lesson8_run(seed=0)`` are one cached run
    (:func:`~minitf.course.kit.runs.once_per_process`).
    """
    task = lesson8_task()
    model_config = lesson8_model_config(task, seed)
    train_config = lesson8_train_config(seed)
    eval_batch = task.batch(task.dataset(1000, seed=seed + 20_000))
    half = train_config.steps // 2
    at_half: dict = {}

    def callback(model, step, history):  # after each evaluation; measure once, at the first one past half-way
        if step >= half and not at_half:
            both = predict_both_ways(model, eval_batch)
            at_half["step"] = step
            at_half["compounding"] = error_compounding(model, eval_batch, predictions=both)
            at_half["example"] = exposure_example(model, eval_batch, task.tokenizer, predictions=both)

    model, optimizer, history = train_fresh(task, model_config, train_config, callback=callback)
    final = error_compounding(model, eval_batch)
    return Lesson8Run(task, model_config, train_config, model, optimizer, history, eval_batch, at_half["step"],
                      at_half["compounding"], final, at_half["example"])
