"""Homework 10, task 10.3 (early stopping on a validation metric): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import call_read_only, fail, returned_arg

from .common import early_stopping_rule

HOMEWORK = "hw10"
task3 = pytest.mark.hw10_task3

MISTAKES = {
    "ignore_mode": "an accuracy was treated as a loss (lower is better): with mode 'max' HIGHER is better, and the "
                   "checkpoint kept is the one with the highest value",
    "ignore_delta": "min_delta was ignored: an improvement must beat the best value so far by MORE than min_delta; "
                    "a smaller gain counts as no improvement",
    "patience_extra": "patience is off by one: training stops at the evaluation where the count of evaluations "
                      "without improvement REACHES patience, not when it exceeds it",
    "keep_last": "the last checkpoint was kept, not the best: early stopping keeps the checkpoint of the last "
                 "improvement (restore_best_weights); the last one is past it by the patience",
    "no_reset": "the count of evaluations without improvement was not reset at an improvement: patience counts "
                "evaluations in a row since the last improvement",
}


# =====================================================================================
# Task 10.3 -- early_stopping
# =====================================================================================
def check_early_stopping(fn, values, mode, patience, min_delta) -> None:
    given = np.array(values, dtype=np.float64) if not isinstance(values, list) else list(values)
    out = call_read_only(fn, ["values", "mode", "patience", "min_delta"], (given, mode, patience, min_delta),
                         "the same validation curve is read again to plot it")
    if isinstance(values, list) and returned_arg(fn, 0) is not None and list(returned_arg(fn, 0)) != values:
        fail("early_stopping changed its argument values in place: inputs are read-only")
    if not isinstance(out, tuple) or len(out) != 2 or not all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in out):
        fail(f"early_stopping: expected a tuple of two ints (best_index, stop_index), received {out!r}"[:300])
    got = (int(out[0]), int(out[1]))
    want = early_stopping_rule(values, mode, patience, min_delta)
    if got == want:
        return
    shown = [round(float(v), 4) for v in values]
    problem = f"values {shown}, mode {mode!r}, patience {patience}, min_delta {min_delta}"
    named = [phrase for flag, phrase in MISTAKES.items()
             if early_stopping_rule(values, mode, patience, min_delta, **{flag: 1 if flag == "patience_extra" else True})
             == got]
    if named:
        fail(f"{' -- or -- '.join(named)}: expected (best_index, stop_index) = {want}, received {got} ({problem})")
    fail(f"early_stopping: expected (best_index, stop_index) = {want}, received {got} ({problem})")


def loss_curve(rng, n: int) -> np.ndarray:
    """A validation loss: falls, flattens with noise, then rises (overfitting)."""
    t = np.arange(n)
    bottom = rng.uniform(0.3, 0.7) * n
    return 1.0 + 2.0 * np.exp(-t / rng.uniform(2, 5)) + 0.02 * np.maximum(t - bottom, 0) ** 1.5 \
        + rng.normal(0, 0.03, n)


def accuracy_curve(rng, n: int) -> np.ndarray:
    """A validation accuracy / exact match: rises in steps of 1/64, plateaus, sometimes falls back."""
    t = np.arange(n)
    acc = 0.9 / (1 + np.exp(-(t - rng.uniform(2, 6)) / 1.5)) - 0.01 * np.maximum(t - 0.6 * n, 0)
    return np.clip(np.round((acc + rng.normal(0, 0.03, n)) * 64) / 64, 0, 1)


@task3
def test_early_stopping_docstring_example(submission, homework_seed):
    """The template's example; on the secret seed, one like it that no public run shows."""
    early_stopping = submission.function("early_stopping")
    check_early_stopping(early_stopping, [3.0, 2.0, 2.5, 1.95, 2.2], "min", 2, 0.1)
    if homework_seed.secret:
        rng = homework_seed.rng("docstring example")
        check_early_stopping(early_stopping, np.round(loss_curve(rng, 7), 2).tolist(), "min", 2, 0.1)


@task3
def test_early_stopping_on_a_loss(submission, homework_seed):
    early_stopping = submission.function("early_stopping")
    rng = np.random.default_rng(homework_seed + 301)
    for i in range(8):
        values = loss_curve(rng, int(rng.integers(8, 25)))
        check_early_stopping(early_stopping, values if i % 2 else values.tolist(), "min", int(rng.integers(1, 5)),
                             float(rng.choice([0.0, 0.01, 0.05])))
    # a plateau of tiny gains: only min_delta stops it
    check_early_stopping(early_stopping, [2.0, 1.5, 1.49, 1.48, 1.47, 1.46, 1.45], "min", 2, 0.02)
    # improvements that stop just in time, and a run that never stops early
    check_early_stopping(early_stopping, [5.0, 4.0, 4.5, 3.0, 3.5, 2.0, 2.5, 2.6], "min", 2, 0.0)
    check_early_stopping(early_stopping, [5.0, 4.0, 3.0, 2.0], "min", 1, 0.0)


@task3
def test_early_stopping_on_an_accuracy(submission, homework_seed):
    early_stopping = submission.function("early_stopping")
    rng = np.random.default_rng(homework_seed + 302)
    for i in range(8):
        values = accuracy_curve(rng, int(rng.integers(8, 25)))
        check_early_stopping(early_stopping, values if i % 2 else values.tolist(), "max", int(rng.integers(1, 5)),
                             float(rng.choice([0.0, 0.02])))
    check_early_stopping(early_stopping, [0.1, 0.5, 0.5, 0.6, 0.4, 0.3, 0.2], "max", 2, 0.0)  # a tie is no gain


@task3
def test_early_stopping_on_loss_vs_on_exact_match(submission, homework_seed):
    """Lesson 10, section 4: a run whose teacher-forced loss keeps falling after its exact
    match has peaked; stopping on each keeps a different checkpoint.  (On the secret seed, the
    two curves are drawn: a loss that falls throughout, an exact match that peaks early.)"""
    early_stopping = submission.function("early_stopping")
    loss = [2.1, 1.4, 1.0, 0.8, 0.7, 0.64, 0.61, 0.6, 0.59, 0.585, 0.6, 0.62]
    exact = [0.0, 0.05, 0.2, 0.35, 0.42, 0.41, 0.38, 0.36, 0.37, 0.35, 0.34, 0.33]
    if homework_seed.secret:
        rng = homework_seed.rng("loss vs exact match")
        n, peak = int(rng.integers(10, 16)), int(rng.integers(3, 6))
        loss = np.round(np.sort(rng.uniform(0.5, 2.5, n))[::-1], 3).tolist()  # falls throughout
        rise, fall = np.sort(rng.uniform(0.0, 0.5, peak + 1)), np.sort(rng.uniform(0.1, 0.45, n - peak - 1))[::-1]
        exact = np.round(np.concatenate([rise, np.minimum(fall, rise[-1] - 0.01)]), 3).tolist()  # peaks at `peak`
    check_early_stopping(early_stopping, loss, "min", 2, 0.0)
    check_early_stopping(early_stopping, exact, "max", 3, 0.0)
    best_loss, _ = early_stopping(loss, "min", 2, 0.0)
    best_em, _ = early_stopping(exact, "max", 3, 0.0)
    if best_loss == best_em:
        fail("stopping on the loss and on the exact match kept the same checkpoint; they should not here")
