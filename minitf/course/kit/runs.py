"""What every lesson's experiments need, written once.

* :func:`lesson_model_config`, :func:`lesson_train_config` -- a lesson's model and training
  set-up: the lesson's own values on top of minitf's defaults, a seed, the caller's overrides;
* :func:`train_fresh` -- a new model of a config, trained on a task: model, optimizer, history;
* :func:`once_per_process` -- the cache of every lesson's reference run: one run per process
  and per arguments, however the call spells them;
* :func:`copy_model`, :func:`to_float64` -- the same weights in a model of another config;
* :func:`norm`, :func:`grad_norm` -- Frobenius norms of several arrays taken as one vector;
* :func:`check_model`, :func:`check_batch` -- the argument checks of the course's entry points.

Why the lessons compute in float64: a lesson's numbers and figures should come out the same on
every machine.  In float32 the last-bit differences between BLAS builds and thread counts grow
over a few hundred training steps into visibly different curves, weights and outputs; in
float64 they stay far below the digits printed.  They are not zero: in a figure drawn from a
training run they reach the sixth decimal of an SVG coordinate, and with another CPU kernel of
the same OpenBLAS (``OPENBLAS_CORETYPE=Prescott``) one of Lesson 5's warm-up curves moved by
almost a point.  So ``figures/`` is checked within a tolerance
(:mod:`minitf.course.kit.figures.compare`), and "the same on every machine" is a claim a lesson
makes only for what it has compared.  At the lessons' sizes float64 costs little time.
"""
from __future__ import annotations

import functools
import inspect
import math
from typing import NamedTuple

import numpy as np

from ...checkpoint import copy_params_into
from ...checks import check_instance, check_int
from ...config import ModelConfig
from ...data import Batch
from ...models import EncoderDecoder
from ...training import History, TrainConfig, default_model_config, make_optimizer, train

__all__ = ["lesson_model_config", "lesson_train_config", "Trained", "train_fresh", "once_per_process",
           "copy_model", "to_float64", "norm", "grad_norm", "check_model", "check_batch"]


# ---- a lesson's set-up --------------------------------------------------------------------------
def lesson_model_config(task, seed: int, **fields) -> ModelConfig:
    """:func:`minitf.training.default_model_config` for ``task`` (vocabulary, special ids and
    ``max_len`` from its tokenizer) with ``fields`` on top, in float64 unless ``fields`` say
    otherwise (see the module docstring), initialised with ``seed``."""
    return default_model_config(task, **{"dtype": "float64", **fields, "seed": seed})


def lesson_train_config(seed: int, **fields) -> TrainConfig:
    """A :class:`~minitf.training.TrainConfig` of ``fields``, data order ``seed``, no progress bar."""
    return TrainConfig(**{"progress": False, **fields, "seed": seed})


class Trained(NamedTuple):
    """A model trained by :func:`train_fresh`."""

    model: EncoderDecoder
    optimizer: object  # its optimizer, moments and all
    history: History


def train_fresh(task, model_config: ModelConfig, train_config: TrainConfig, *, callback=None,
                held_out=()) -> Trained:
    """A new :class:`EncoderDecoder` of ``model_config``, trained on ``task`` by
    :func:`minitf.training.train`.

    ``callback(model, step, history)`` is called after each evaluation (the model is passed,
    since it does not exist before this call); ``held_out``: source texts no training batch
    may contain.
    """
    model = EncoderDecoder(model_config)
    optimizer = make_optimizer(model.parameters(), train_config)
    after_eval = None if callback is None else (lambda step, history: callback(model, step, history))
    history = train(model, task, train_config, optimizer=optimizer, callback=after_eval, held_out=held_out)
    return Trained(model, optimizer, history)


# ---- one run per process ----------------------------------------------------------------------------
def _integer_argument(name: str, value) -> int:
    check_instance(name, value, (int, np.integer), "an integer")
    return check_int(name, value, low=0)


def once_per_process(fn):
    """Decorator: run ``fn`` once per process for each set of arguments, then return the
    same result.

    ``functools.lru_cache`` keys on the call as written: ``f(0)``, ``f(seed=0)`` and ``f()``
    are three entries, and a notebook calling one spelling while a figure calls another
    would train the lesson's model twice.  Here the call is bound to ``fn``'s signature and
    its defaults filled in first (``inspect.signature(fn).bind`` + ``apply_defaults``), so
    all three are one entry.  Every argument must be a non-negative integer (a seed, a
    count), checked before the cache is consulted; NumPy integers are the same entry as the
    int of the same value.  ``fn.cache_clear()`` forgets every result.

    The results are shared by everyone who asks: treat them as read-only.
    """
    signature = inspect.signature(fn)
    results: dict = {}

    @functools.wraps(fn)
    def cached(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = tuple((name, _integer_argument(name, value)) for name, value in bound.arguments.items())
        if key not in results:
            results[key] = fn(**dict(key))
        return results[key]

    cached.cache_clear = results.clear
    return cached


# ---- copies of a model ---------------------------------------------------------------------------------
def copy_model(model: EncoderDecoder, **config_changes) -> EncoderDecoder:
    """A new model with ``model``'s weights, its config changed by ``config_changes``
    (``dtype="float64"``; ``causal=False``: the same weights with an unmasked decoder).
    The changes must keep every parameter's shape."""
    check_model(model)
    twin = EncoderDecoder(model.config.replace(**config_changes))
    copy_params_into(twin.parameters(), model.parameters(), what="model")  # names and shapes checked
    return twin


def to_float64(model: EncoderDecoder) -> EncoderDecoder:
    """A float64 copy of ``model`` with the same weights (for finite differences)."""
    return copy_model(model, dtype="float64")


# ---- norms ---------------------------------------------------------------------------------------------
def norm(arrays) -> float:
    """Frobenius norm of several arrays taken together, as one vector (summed in float64)."""
    return float(math.sqrt(sum(float(np.vdot(a, a)) for a in (np.asarray(x, dtype=np.float64) for x in arrays))))


def grad_norm(module) -> float:
    """The norm of every gradient of ``module`` (its sub-modules' included), as one vector."""
    return norm(module.gradients().values())


# ---- argument checks -----------------------------------------------------------------------------------
def check_model(model) -> None:
    check_instance("model", model, EncoderDecoder, "a minitf EncoderDecoder")


def check_batch(batch) -> None:
    check_instance("batch", batch, Batch, "a minitf.data.Batch")
