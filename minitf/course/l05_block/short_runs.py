"""Lesson 5, sections 4 and 5: the FFN runs' and the position runs' numbers, stored (what the
notebook prints of them).

Section 4 trains three feed-forward networks on two seeds (:func:`ffn_runs`) and section 5 two
kinds of positions on two seeds (:func:`position_runs`): ten trainings, 13.1 of the notebook's 28.3 s
on a 2-core machine at a load average of 2-3 (19.1 of 45.7 s with two busy processes beside it, at a
load average of 7).  So the notebook reads what it prints of them from the file written here,
measured once with one BLAS thread (the kernel is recorded), and :func:`compare_with_stored` says
how far live runs are from it (``tests/course/l05/test_short_runs.py`` trains them again and
checks)::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l05_block.short_runs --measure

Section 3's warm-up runs stay live (their drawn curves are stored by
:mod:`~minitf.course.l05_block.warmup_curves`); the figure ``l05_positions`` still trains the two
position runs of seed 0 to draw them (it could draw the per-position accuracies stored here).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..kit import stored
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results
from .experiments import (FFN_VARIANTS, POSITION_STEPS, TEST_MAX_LEN, TRAIN_MAX_LEN, PositionAccuracy, RunSummary,
                          accuracy_by_position, ffn_runs, learned_rows_change, position_runs, summarize,
                          weight_decay_shrink)

__all__ = ["RESULTS_PATH", "DIGITS", "TOLERANCE", "COMMAND", "SEEDS", "POSITION_KINDS", "ffn_name", "position_name",
           "run_numbers", "measure", "load_results", "stored_ffn_summaries", "stored_position_accuracy",
           "stored_learned_rows", "compare_with_stored"]

RESULTS_PATH = Path(__file__).resolve().with_name("results") / "short_runs.json"
DIGITS = 8  # significant digits kept of every number: far below what the notebook prints
TOLERANCE = 1e-6  # a live number matches when within this of the stored one (the rounding, and room for a kernel)
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l05_block.short_runs --measure"
SEEDS = (0, 1)  # the seeds the notebook prints
POSITION_KINDS = ("sinusoidal", "learned")


def ffn_name(activation: str, d_ff: int) -> str:
    """The stored name of one FFN run: ``"ffn relu, F=32"``."""
    return f"ffn {activation}, F={d_ff}"


def position_name(kind: str) -> str:
    """The stored name of one position run: ``"positions learned"``."""
    return f"positions {kind}"


def _significant(values) -> list:
    return [float(f"{float(v):.{DIGITS}g}") for v in np.asarray(values, dtype=float).ravel()]


def _ffn_numbers(run) -> dict:
    s = summarize(run)
    return {field: _significant([getattr(s, field)])[0] for field in RunSummary._fields}


def _position_numbers(run, seed: int) -> dict:
    acc = accuracy_by_position(run.model, seed=seed)
    out = {"accuracy": _significant(acc.accuracy), "count": [int(c) for c in acc.count],
           **{f: _significant([getattr(acc, f)])[0] for f in ("seen", "beyond", "eos_beyond", "chance")}}
    if run.model.config.positional == "learned":
        for side, (change, used) in learned_rows_change(run).items():
            out[f"{side}_rows_change"], out[f"{side}_rows_used"] = _significant(change), int(used)
        out["weight_decay_shrink"] = _significant([weight_decay_shrink(run)])[0]
    return out


def run_numbers(seed: int) -> dict:
    """``{name: numbers}`` of the five runs of ``seed``: each FFN run's :class:`RunSummary`, each
    position run's :class:`PositionAccuracy` (and, for the learned positions, the relative change of
    every row of ``W_pos`` on both sides and weight decay's shrink over the run).  Trains them (once
    per process and seed)."""
    out = {ffn_name(act, F): _ffn_numbers(run) for (act, F), run in ffn_runs(seed).items()}
    out.update({position_name(kind): _position_numbers(run, seed) for kind, run in position_runs(seed).items()})
    return out


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seeds=SEEDS) -> dict:
    """Train the FFN and position runs of every seed and write their numbers to ``path`` (None: nothing)."""
    clock = Stopwatch()
    runs: dict = {}
    for seed in seeds:
        for name, numbers in run_numbers(seed).items():
            runs.setdefault(name, {})[str(seed)] = numbers
    results = {"about": (f"Lesson 5's short runs: section 4's FFN variants {list(FFN_VARIANTS)} (one encoder and "
                         f"one decoder block, lesson5_train_config) and section 5's position runs "
                         f"({', '.join(POSITION_KINDS)}; copy of 1..{TRAIN_MAX_LEN} letters, {POSITION_STEPS} steps, "
                         f"tested on 1..{TEST_MAX_LEN}), seeds {list(seeds)}: what the notebook prints of them, "
                         f"{DIGITS} significant digits."),
               **provenance(COMMAND), **clock.seconds(), "runs": runs}
    if path is not None:
        write_results(path, results)
    return results


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    return stored.load_results(path, COMMAND)


def stored_ffn_summaries(seed: int = 0, results: dict | None = None) -> dict:
    """``{(activation, F): RunSummary}`` of the stored FFN runs of ``seed``, in :data:`FFN_VARIANTS`' order."""
    results = load_results() if results is None else results
    return {(act, F): RunSummary(**stored.stored_runs(results, ffn_name(act, F))[seed]) for act, F in FFN_VARIANTS}


def stored_position_accuracy(seed: int = 0, results: dict | None = None) -> dict:
    """``{kind: PositionAccuracy}`` of the stored position runs of ``seed``."""
    results = load_results() if results is None else results
    out = {}
    for kind in POSITION_KINDS:
        r = stored.stored_runs(results, position_name(kind))[seed]
        out[kind] = PositionAccuracy(np.asarray(r["accuracy"]), np.asarray(r["count"]), TRAIN_MAX_LEN, r["seen"],
                                     r["beyond"], r["eos_beyond"], r["chance"])
    return out


def stored_learned_rows(seed: int = 0, results: dict | None = None) -> tuple[dict, float]:
    """``({side: (change, used)}, shrink)`` of the stored learned-positions run of ``seed``: what
    :func:`learned_rows_change` and :func:`weight_decay_shrink` measured on it."""
    results = load_results() if results is None else results
    r = stored.stored_runs(results, position_name("learned"))[seed]
    rows = {side: (np.asarray(r[f"{side}_rows_change"]), r[f"{side}_rows_used"]) for side in ("source", "target")}
    return rows, r["weight_decay_shrink"]


def compare_with_stored(seed: int = 0, results: dict | None = None) -> dict:
    """Each live run of ``seed`` against its stored numbers: ``{name: Match}``, matching when every
    number is within :data:`TOLERANCE` of the stored one (and the counts equal)."""
    results = load_results() if results is None else results
    live = run_numbers(seed)
    out = {}
    for name, numbers in live.items():
        fields = tuple(numbers)
        out[name] = stored.compare_run(name, seed, numbers, stored.stored_runs(results, name)[seed],
                                       {"numbers": (fields, TOLERANCE)})
    return out


def main(argv=None) -> int:
    return stored.measure_main(sys.argv[1:] if argv is None else argv, module="minitf.course.l05_block.short_runs",
                               description="store what Lesson 5's notebook prints of its FFN and position runs",
                               measure=measure, default_out=RESULTS_PATH)


if __name__ == "__main__":
    raise SystemExit(main())
