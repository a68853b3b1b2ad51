"""Learning-rate schedules: the learning rate as a function of the step.

**Convention: ``step`` counts updates from 1.**  ``schedule(1)`` is the learning rate of
the first optimizer update, ``schedule(warmup)`` that of the last warm-up update (the
peak), so a training loop reads::

    for step in range(1, n_steps + 1):
        opt.lr = schedule(step)
        opt.step(grads)

Step 0 (or anything below 1) is refused rather than guessed at.

Every schedule is a small class with ``__call__(step) -> float``, a ``__repr__`` that
reads like its constructor call, and ``to_dict()`` (JSON-friendly, with a ``"name"``
key) such that ``get_schedule(**s.to_dict())`` rebuilds it -- this is how a schedule is
stored in a run's config.
"""
from __future__ import annotations

import math

from .checks import check_choice, check_int, check_number

__all__ = ["Schedule", "Constant", "Noam", "WarmupCosine", "get_schedule", "SCHEDULES"]


def _check_step(step) -> int:
    """Steps count from 1, the first update: step 0 is refused rather than guessed at."""
    return check_int("step", step, low=1)


class Schedule:
    """Base class: ``__call__``, ``__repr__`` and ``to_dict`` from ``name`` and ``_args()``."""

    name = ""

    def __call__(self, step: int) -> float:
        return self.lr_at(_check_step(step))

    def lr_at(self, step: int) -> float:  # step already checked
        raise NotImplementedError

    def _args(self) -> dict:
        raise NotImplementedError

    def to_dict(self) -> dict:
        """``{"name": ..., **constructor arguments}``; ``get_schedule(**d)`` rebuilds the schedule."""
        return {"name": self.name, **self._args()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._args().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._args() == other._args()


class Constant(Schedule):
    """lr(step) = lr for every step.

    Parameters
    ----------
    lr : float
        The learning rate, >= 0.
    """

    name = "constant"

    def __init__(self, lr: float):
        self.lr = check_number("lr", lr, 0, None)

    def lr_at(self, step: int) -> float:
        return self.lr

    def _args(self):
        return {"lr": self.lr}


class Noam(Schedule):
    """The schedule of "Attention Is All You Need" (section 5.3)::

        lr(step) = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

    It rises linearly for ``warmup`` steps, peaks at ``step == warmup`` with
    ``factor * (d_model * warmup)^-0.5``, then decays as ``step^-0.5``.
    ``warmup = 0`` skips the rise (pure inverse-square-root decay from step 1).

    Parameters
    ----------
    d_model : int
        Model width D, > 0.
    warmup : int
        Warm-up steps, >= 0 (the paper uses 4000).
    factor : float
        Overall scale, > 0.
    """

    name = "noam"

    def __init__(self, d_model: int, warmup: int, factor: float = 1.0):
        self.d_model = check_int("d_model", d_model, low=1)
        self.warmup = check_int("warmup", warmup, low=0)
        self.factor = check_number("factor", factor, 0, None, low_open=True)

    def lr_at(self, step: int) -> float:
        scale = self.factor * self.d_model ** -0.5
        if self.warmup == 0:
            return scale * step ** -0.5
        return scale * min(step ** -0.5, step * self.warmup ** -1.5)

    def _args(self):
        return {"d_model": self.d_model, "warmup": self.warmup, "factor": self.factor}


class WarmupCosine(Schedule):
    """Linear warm-up to ``lr``, cosine decay to ``min_lr`` at step ``total``, then constant::

        step <= warmup:          lr * step / warmup                      (peak lr at step == warmup)
        warmup < step <= total:  min_lr + (lr - min_lr) * (1 + cos(pi * p)) / 2,
                                 p = (step - warmup) / (total - warmup)
        step > total:            min_lr

    Parameters
    ----------
    lr : float
        Peak learning rate, >= 0.
    warmup : int
        Warm-up steps, >= 0 (0: start the cosine at once).
    total : int
        The step at which the decay reaches ``min_lr``; ``total > warmup``.
    min_lr : float
        Final learning rate, in [0, lr].
    """

    name = "warmup_cosine"

    def __init__(self, lr: float, warmup: int, total: int, min_lr: float = 0.0):
        self.lr = check_number("lr", lr, 0, None)
        self.warmup = check_int("warmup", warmup, low=0)
        self.total = check_int("total", total, low=1)
        if self.total <= self.warmup:
            raise ValueError(f"total: expected more steps than warmup={self.warmup}, got {total!r}")
        self.min_lr = check_number("min_lr", min_lr, 0, None)
        if self.min_lr > self.lr:
            raise ValueError(f"min_lr: expected a value <= lr={self.lr!r}, got {min_lr!r}")

    def lr_at(self, step: int) -> float:
        if step <= self.warmup:
            return self.lr * step / self.warmup
        if step >= self.total:
            return self.min_lr
        progress = (step - self.warmup) / (self.total - self.warmup)  # in (0, 1)
        return self.min_lr + (self.lr - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def _args(self):
        return {"lr": self.lr, "warmup": self.warmup, "total": self.total, "min_lr": self.min_lr}


SCHEDULES: dict[str, type[Schedule]] = {cls.name: cls for cls in (Constant, Noam, WarmupCosine)}


def get_schedule(name: str, **kwargs) -> Schedule:
    """Build a schedule by name: ``get_schedule("noam", d_model=512, warmup=4000)``.

    Names: ``"constant"``, ``"noam"``, ``"warmup_cosine"``.  ``get_schedule(**s.to_dict())``
    rebuilds ``s``.
    """
    cls = SCHEDULES[check_choice("name", name, tuple(SCHEDULES))]
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise TypeError(f"get_schedule({name!r}): {e}") from None
