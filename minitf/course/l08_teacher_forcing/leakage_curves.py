"""Lesson 8, section 2: the two leaky runs, stored (what the notebook's leakage table prints).

The two models trained with a leak (no causal mask; labels fed as inputs) are trained as long as
the lesson's model: together they took half of the notebook's time (13.8 of 26.2 s on a quiet
2-core machine, 21 of 40 s with two busy processes beside it).  So the notebook reads their
training losses, their final free-running exact match and their first free-running outputs from
the file written here, measured once with one BLAS thread (the kernel is recorded), and
:func:`compare_with_stored` says how far a live run is from it (``tests/course/l08`` trains the
two again and checks)::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l08_teacher_forcing.leakage_curves --measure

The honest run they are compared with, :func:`~minitf.course.l08_teacher_forcing.lesson8_run`,
stays live.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..kit import stored
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results
from .experiments import VARIANTS, leakage_runs, lesson8_train_config

__all__ = ["RESULTS_PATH", "DIGITS", "KERNEL_NOISE", "COMMAND", "LEAKS", "run_numbers", "measure", "load_results",
           "stored_leakage_runs", "compare_with_stored"]

RESULTS_PATH = Path(__file__).resolve().with_name("results") / "leakage_curves.json"
DIGITS = 6  # the loss kept to 6 decimals: the notebook prints 10-step means of it to 3
KERNEL_NOISE = 1e-6  # room for another CPU kernel's last bits (Prescott's gave the same 6 decimals on the machine that stored them)
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l08_teacher_forcing.leakage_curves --measure"
LEAKS = VARIANTS[1:]  # "no_causal_mask", "labels_as_inputs"


def run_numbers(run) -> dict:
    """What the file keeps of one leaky run (a :class:`~minitf.course.kit.leakage.Run`): the training
    loss per step (:data:`DIGITS` decimals), the free-running exact match of its last evaluation, and
    its free-running samples ``[source, target, output]``."""
    return {"step": [int(s) for s in run.history.step],
            "loss": [round(float(x), DIGITS) for x in run.history.loss],
            "free_running_exact_match": float(run.history.evals[-1]["free_running_exact_match"]),
            "samples": [list(s) for s in run.samples]}


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seed: int = 0) -> dict:
    """Train the two leaky runs of ``seed`` (:func:`leakage_runs`) and write their numbers to ``path``
    (None: nothing)."""
    clock = Stopwatch()
    cfg = lesson8_train_config(seed)
    runs = {name: {str(seed): run_numbers(run)} for name, run in leakage_runs(seed).items()}
    results = {"about": (f"Lesson 8 section 2's leaky runs ({', '.join(LEAKS)}), each trained like the lesson's "
                         f"model ({cfg.steps} steps of {cfg.batch_size}, peak learning rate {cfg.lr:g}): the training "
                         f"loss per step ({DIGITS} decimals), the free-running exact match on the {cfg.eval_size} "
                         f"evaluation examples after the last step, and three free-running outputs; what the "
                         f"notebook's leakage table prints."),
               **provenance(COMMAND), **clock.seconds(), "runs": runs}
    if path is not None:
        write_results(path, results)
    return results


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    return stored.load_results(path, COMMAND)


def stored_leakage_runs(seed: int = 0, results: dict | None = None) -> dict:
    """``{leak: {"step", "loss", "free_running_exact_match", "samples"}}`` of the stored runs of
    ``seed``, the loss as an array and the samples as ``(source, target, output)`` tuples."""
    results = load_results() if results is None else results
    out = {}
    for name in LEAKS:
        r = stored.stored_runs(results, name)[seed]
        out[name] = {**r, "loss": np.asarray(r["loss"], dtype=float), "samples": [tuple(s) for s in r["samples"]]}
    return out


def compare_with_stored(runs: dict, results: dict | None = None, seed: int = 0) -> dict:
    """Each live run of :func:`leakage_runs` against its stored numbers: ``{leak: Match}``, matching
    when every step's loss is within the rounding (half of ``10**-DIGITS``) plus :data:`KERNEL_NOISE`
    and the exact match is the stored one.  The samples are compared apart (they are text)."""
    results = load_results() if results is None else results
    tolerance = {"loss": (("loss",), 0.5 * 10.0 ** -DIGITS + KERNEL_NOISE),
                 "free_running_exact_match": (("free_running_exact_match",), 0.0)}
    return {name: stored.compare_run(
                name, seed, {"loss": np.asarray(run.history.loss, dtype=float),
                             "free_running_exact_match": run.history.evals[-1]["free_running_exact_match"]},
                stored.stored_runs(results, name)[seed], tolerance)
            for name, run in runs.items()}


def main(argv=None) -> int:
    return stored.measure_main(sys.argv[1:] if argv is None else argv,
                               module="minitf.course.l08_teacher_forcing.leakage_curves",
                               description="store Lesson 8's leaky runs' training losses and free-running outputs",
                               measure=measure, default_out=RESULTS_PATH)


if __name__ == "__main__":
    raise SystemExit(main())
