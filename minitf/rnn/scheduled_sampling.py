"""Scheduled sampling (Bengio, Vinyals, Jaitly & Shazeer, 2015): teacher forcing, loosened over training.

At each decoder step t > 0 of a training forward, one coin per row: with probability eps the
gold token y_{t-1} is fed (teacher forcing), otherwise the model's own token from step t-1 --
the argmax of its logits, or a draw from their softmax.  eps decays with the update i:

    linear            eps_i = max(eps_min, k - c i)       k <= 1, slope c > 0
    exponential       eps_i = k ** i                      0 < k < 1
    inverse sigmoid   eps_i = k / (k + exp(i / k))        k >= 1

As in :mod:`minitf.schedules` (whose :class:`~minitf.schedules.Schedule` these extend),
``step`` counts updates from 1; the paper's i is ``step - 1``, the updates before this one,
so ``linear`` starts at k and ``exponential`` at 1.

**No gradient through the choice.**  The chosen token is an integer.  The loss is
differentiated as if that token had been given as the input: its embedding row gets that
step's input gradient like any fed token, and nothing flows back into the logits it was
chosen from (argmax has no useful derivative; the paper does the same).  The gradient is
therefore biased -- the loss's dependence on the model through its own inputs is ignored
(Huszár, 2015) -- which is Lesson 1's point about what scheduled sampling optimises.
"""
from __future__ import annotations

import math

import numpy as np

from ..checks import as_rng, check_choice, check_int, check_number
from ..schedules import Schedule

__all__ = ["ConstantProbability", "LinearDecay", "ExponentialDecay", "InverseSigmoidDecay",
           "TEACHER_FORCING_SCHEDULES", "get_teacher_forcing_schedule", "ScheduledSampling", "CHOICES",
           "choose_tokens", "gold_or_own"]


class ConstantProbability(Schedule):
    """eps_i = eps for every update (eps = 1: plain teacher forcing)."""

    name = "constant"

    def __init__(self, eps: float = 1.0):
        self.eps = check_number("eps", eps, 0, 1)

    def lr_at(self, step: int) -> float:  # (Schedule's name for "the value at this step")
        return self.eps

    def _args(self):
        return {"eps": self.eps}


class LinearDecay(Schedule):
    """eps_i = max(eps_min, k - c i),  i = step - 1."""

    name = "linear"

    def __init__(self, c: float, k: float = 1.0, eps_min: float = 0.0):
        self.c = check_number("c", c, 0, None, low_open=True)
        self.k = check_number("k", k, 0, 1)
        self.eps_min = check_number("eps_min", eps_min, 0, self.k, hint="at most k")

    def lr_at(self, step: int) -> float:
        return max(self.eps_min, self.k - self.c * (step - 1))

    def _args(self):
        return {"c": self.c, "k": self.k, "eps_min": self.eps_min}


class ExponentialDecay(Schedule):
    """eps_i = k ** i,  i = step - 1,  0 < k < 1."""

    name = "exponential"

    def __init__(self, k: float):
        self.k = check_number("k", k, 0, 1, low_open=True, high_open=True)

    def lr_at(self, step: int) -> float:
        return self.k ** (step - 1)

    def _args(self):
        return {"k": self.k}


class InverseSigmoidDecay(Schedule):
    """eps_i = k / (k + exp(i / k)),  i = step - 1,  k >= 1: near 1 for the first few k updates,
    halved around i = k ln k, then falling off like exp(-i / k)."""

    name = "inverse_sigmoid"

    def __init__(self, k: float):
        self.k = check_number("k", k, 1, None)

    def lr_at(self, step: int) -> float:
        x = (step - 1) / self.k
        return self.k / (self.k + math.exp(x)) if x < 700 else 0.0  # exp(710) overflows a float

    def _args(self):
        return {"k": self.k}


TEACHER_FORCING_SCHEDULES: dict[str, type[Schedule]] = {
    cls.name: cls for cls in (ConstantProbability, LinearDecay, ExponentialDecay, InverseSigmoidDecay)}


def get_teacher_forcing_schedule(name: str, **kwargs) -> Schedule:
    """Build one by name: ``get_teacher_forcing_schedule("inverse_sigmoid", k=50)``;
    ``get_teacher_forcing_schedule(**s.to_dict())`` rebuilds ``s``."""
    cls = TEACHER_FORCING_SCHEDULES[check_choice("name", name, tuple(TEACHER_FORCING_SCHEDULES))]
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise TypeError(f"get_teacher_forcing_schedule({name!r}): {e}") from None


CHOICES = ("argmax", "sample")
"""How the model's own token is chosen when the coin says so."""


class ScheduledSampling:
    """The teacher-forcing policy of a model's training forwards (``RNNSeq2Seq(config, scheduled_sampling=...)``).

    Parameters
    ----------
    schedule : Schedule or float
        eps as a function of the update (one of :data:`TEACHER_FORCING_SCHEDULES`), or a
        constant eps in [0, 1].
    choice : "argmax" or "sample"
        The model's own token: its most likely one, or a draw from its softmax.
    rng : np.random.Generator or int
        The coins (and the draws).
    step : int
        Training forwards already taken: the next one uses ``schedule(step + 1)``.

    Each training-mode forward of the model takes one step (minitf's training loop runs one
    forward per update); evaluation-mode forwards are teacher-forced and take none.
    """

    def __init__(self, schedule, *, choice: str = "argmax", rng=0, step: int = 0):
        if not isinstance(schedule, Schedule):
            schedule = ConstantProbability(check_number("schedule", schedule, 0, 1,
                                                        hint="a teacher-forcing schedule, or a constant eps"))
        self.schedule = schedule
        self.choice = check_choice("choice", choice, CHOICES)
        self.rng = as_rng("rng", rng)
        self.step = check_int("step", step, low=0)

    def next_probability(self) -> float:
        """eps for the next training forward; advances ``step``."""
        self.step += 1
        return float(self.schedule(self.step))

    def next_forward(self) -> tuple:
        """(eps, choice, rng): what the next training forward decodes with; advances ``step``."""
        return self.next_probability(), self.choice, self.rng

    def __repr__(self) -> str:
        return f"ScheduledSampling({self.schedule!r}, choice={self.choice!r}, step={self.step})"


def choose_tokens(logits: np.ndarray, choice: str, rng: np.random.Generator) -> np.ndarray:
    """The model's own token per row: logits (B, V) -> ids (B,), by argmax or by a draw
    from softmax(logits) (inverting the CDF, vectorised over rows)."""
    if choice == "argmax":
        return np.argmax(logits, axis=-1)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))  # (B, V) unnormalised
    cdf = np.cumsum(p, axis=-1)  # (B, V)
    u = rng.random(logits.shape[0]) * cdf[:, -1]  # (B,) uniform in [0, total)
    return np.argmax(cdf > u[:, None], axis=-1)  # (B,) the first token whose CDF passes u


def gold_or_own(gold_ids: np.ndarray, logits_prev: np.ndarray, eps: float, choice: str, rng: np.random.Generator):
    """One decoder step's input under scheduled sampling: per row, a coin that gives the gold
    token with probability eps, else the model's own token chosen from the previous step's
    logits.  gold_ids (B,), logits_prev (B, V) -> (fed (B,), gold (B,) bool: where the gold was fed).

    The own token is chosen first (its draw, for "sample"), then the coins are thrown.  An
    integer comes out: no gradient flows through the choice."""
    own = choose_tokens(logits_prev, choice, rng)  # (B,)
    gold = rng.random(gold_ids.shape[0]) < eps  # (B,) the coins
    return np.where(gold, gold_ids, own), gold
