"""Lesson 5, section 3: the warm-up runs' training-loss curves, stored (what ``l05_prepost`` draws).

The post-LN run without warm-up trains at the edge of stability.  Its loss curve moves by a few
hundredths between two CPU kernels of the same OpenBLAS (``OPENBLAS_CORETYPE=Haswell`` against
SkylakeX, the default on the machine that stored the curves: 0.045 at step 140, while the other three runs agree to 1e-6), which moves the
figure's line by more than the committed figures' tolerance.  So the figure draws the curves
stored here, measured once with one BLAS thread (the kernel is recorded), and
:func:`compare_with_stored` says how far a live run is from them::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l05_block.warmup_curves --measure

The notebook's numbers stay live; only the drawing is fixed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..kit import stored
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results
from .experiments import ARRANGEMENTS, HIGH_LR, WARMUP, WARMUP_STEPS, warmup_runs

__all__ = ["RESULTS_PATH", "DIGITS", "KERNEL_NOISE", "COMMAND", "curve_name", "curves", "measure", "load_results",
           "stored_curves", "compare_with_stored"]

RESULTS_PATH = Path(__file__).resolve().with_name("results") / "warmup_curves.json"
DIGITS = 4  # the loss kept to 4 decimals: a live run on the stored kernel matches to half of 1e-4
KERNEL_NOISE = 1e-5  # what the three stable runs move between CPU kernels (at most 9.3e-7 measured), with room
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l05_block.warmup_curves --measure"


def curve_name(arrangement: str, warmup: int) -> str:
    """The stored name of one run: ``"post-LN, warm-up 0"``."""
    return f"{arrangement}, warm-up {warmup}"


def curves(runs: dict) -> dict:
    """``{curve_name: {"step": [...], "loss": [...]}}`` of :func:`warmup_runs`' runs, the loss
    rounded to :data:`DIGITS` decimals."""
    return {curve_name(name, warmup): {"step": [int(s) for s in run.history.step],
                                       "loss": [round(float(x), DIGITS) for x in run.history.loss]}
            for (name, warmup), run in runs.items()}


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seed: int = 0) -> dict:
    """Train the four runs of ``seed`` and write their curves to ``path`` (None: nothing)."""
    clock = Stopwatch()
    runs = {name: {str(seed): numbers} for name, numbers in curves(warmup_runs(seed)).items()}
    results = {"about": (f"Lesson 5 section 3's warm-up runs (pre-LN and post-LN, {WARMUP} warm-up steps and none, "
                         f"peak learning rate {HIGH_LR:g}, {WARMUP_STEPS} steps): the training loss per step, "
                         f"{DIGITS} decimals; what l05_prepost draws."),
               **provenance(COMMAND), **clock.seconds(), "runs": runs}
    if path is not None:
        write_results(path, results)
    return results


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    return stored.load_results(path, COMMAND)


def stored_curves(seed: int = 0, results: dict | None = None) -> dict:
    """``{(arrangement, warmup): {"step", "loss"}}`` of the stored runs of ``seed``."""
    results = load_results() if results is None else results
    return {(name, warmup): stored.stored_runs(results, curve_name(name, warmup))[seed]
            for name in ARRANGEMENTS for warmup in (WARMUP, 0)}


def compare_with_stored(runs: dict, results: dict | None = None, seed: int = 0) -> dict:
    """Each live run of :func:`warmup_runs` against its stored curve: ``{curve_name: Match}``,
    matching when every step's loss is within the rounding (half of ``10**-DIGITS``) plus
    :data:`KERNEL_NOISE`.  The post-LN run without warm-up matches only on the kernel it was
    stored with."""
    results = load_results() if results is None else results
    tolerance = {"loss": (("loss",), 0.5 * 10.0 ** -DIGITS + KERNEL_NOISE)}
    return {curve_name(name, warmup): stored.compare_run(
                curve_name(name, warmup), seed, {"loss": np.asarray(run.history.loss, dtype=float)},
                stored.stored_runs(results, curve_name(name, warmup))[seed], tolerance)
            for (name, warmup), run in runs.items()}


def main(argv=None) -> int:
    return stored.measure_main(sys.argv[1:] if argv is None else argv, module="minitf.course.l05_block.warmup_curves",
                               description="store Lesson 5's warm-up runs' training-loss curves",
                               measure=measure, default_out=RESULTS_PATH)


if __name__ == "__main__":
    raise SystemExit(main())
