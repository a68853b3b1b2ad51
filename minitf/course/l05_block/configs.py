"""Lesson 5's set-up: its task, its model and training configurations, and how a short run ended.

Every section's runs (:mod:`minitf.course.l05_block.experiments`,
:mod:`minitf.course.l05_block.positions`) start from these.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...config import ModelConfig
from ...data.tasks import Task, get_task
from ...training import TrainConfig
from ..kit.runs import Trained, lesson_model_config, lesson_train_config

__all__ = ["lesson5_task", "lesson5_model_config", "lesson5_train_config", "RunSummary", "summarize"]


def lesson5_task() -> Task:
    """Reverse a string of 4 to 10 letters (12 symbols), as in Lesson 4."""
    return get_task("reverse")


def lesson5_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """D = 32, H = 2 (Dh = 16), F = 64, two encoder and two decoder blocks, pre-LN, ReLU,
    sinusoidal positions, shared and tied embeddings, float64."""
    task = lesson5_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=2,
                                                     n_decoder_layers=2), **overrides})


def lesson5_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """150 AdamW steps of 16 examples, 30 warm-up steps then cosine decay from 1e-2; one
    evaluation (64 held-out examples) at the end."""
    return lesson_train_config(seed, **{**dict(steps=150, batch_size=16, lr=1e-2, warmup=30, eval_every=0,
                                               eval_size=64), **overrides})


class RunSummary(NamedTuple):
    """How a short run ended (:func:`summarize`)."""

    held_out_loss: float  # teacher-forced loss on the 64 held-out pairs, after the last step
    token_accuracy: float  # teacher-forced token accuracy on them
    exact_match: float  # free-running (greedy) exact match on them
    final_train_loss: float  # mean training loss over the last 10 steps


def summarize(run: Trained) -> RunSummary:
    """The last evaluation of ``run`` and its mean training loss over the last 10 steps."""
    last = run.history.evals[-1]
    return RunSummary(last["teacher_forced_loss"], last["teacher_forced_token_accuracy"],
                      last["free_running_exact_match"], float(np.mean(run.history.loss[-10:])))
