"""Stored results: the small files a lesson's long runs write into its folder's ``results/``
(a sweep of training runs, a pretrained checkpoint), each recording what produced it and the
command that writes it again, so that a notebook can show a sweep it could not run in its
time budget and re-run one point of it live to check the file.

Used by Lesson 1 (its sweep), Lesson 9 section 6 (scheduled-sampling runs) and Lesson 10
(fine-tuning sweep and pretrained checkpoint).
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ... import __version__
from ...process import numpy_blas_threads

__all__ = ["one_blas_thread", "provenance", "Stopwatch", "dump", "write_results", "load_results",
           "stored_runs", "largest_difference", "Match", "compare_run", "measure_main"]



def one_blas_thread(fn):
    """Decorator: run ``fn`` with NumPy's OpenBLAS on one thread (:func:`minitf.process.numpy_blas_threads`),
    as the lessons' notebooks do for their whole process.  With the lessons' small matrices one
    thread is several times faster on a busy machine, a decode's time is one core's, and no
    number changes."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with numpy_blas_threads(1):
            return fn(*args, **kwargs)
    return wrapped


def provenance(command: str) -> dict:
    """What a results file records about how it was made: the command that writes it again,
    the versions, the BLAS thread setting and kernel, and the date."""
    return {"command": command, "minitf_version": __version__, "numpy_version": np.__version__,
            "python": platform.python_version(), "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "blas_kernel": os.environ.get("OPENBLAS_CORETYPE") or "default",
            "measured_on": datetime.date.today().isoformat()}


class Stopwatch:
    """Wall and processor time since it was made: ``Stopwatch().seconds()`` ->
    ``{"wall_seconds": ..., "cpu_seconds": ...}``, as results files record them."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def seconds(self) -> dict:
        return {"wall_seconds": round(time.perf_counter() - self.wall, 1),
                "cpu_seconds": round(time.process_time() - self.cpu, 1)}


def dump(obj, indent: int = 0) -> str:
    """JSON with one line per run (lists of numbers kept on one line): small diffs, readable."""
    pad = " " * indent
    if isinstance(obj, dict) and any(isinstance(v, (dict, list)) for v in obj.values()) and indent < 6:
        items = [f'{pad} {json.dumps(k)}: {dump(v, indent + 1).lstrip()}' for k, v in obj.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    return pad + json.dumps(obj)


def write_results(path: Path | str, results: dict) -> None:
    """Write ``results`` to ``path`` (:func:`dump`), creating its folder."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(dump(results) + "\n")


def load_results(path: Path | str, command: str) -> dict:
    """The stored results at ``path``; if there are none, say which ``command`` writes them."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no stored results; run {command}")
    return json.loads(path.read_text())


def stored_runs(results: dict, name: str) -> dict:
    """``{seed: run numbers}`` of the variant ``name`` in ``results["runs"]`` (seeds as ints)."""
    if name not in results["runs"]:
        raise KeyError(f"variant: {name!r} is not in the stored results; they hold {sorted(results['runs'])}")
    return {int(s): r for s, r in results["runs"][name].items()}


def largest_difference(live: dict, stored: dict, fields) -> float:
    """max |live - stored| over the named ``fields`` of a run's numbers (each a number or a list):
    how far a live re-run of a stored point is from the stored file."""
    return max(float(np.max(np.abs(np.subtract(live[f], stored[f])))) for f in fields)


class Match(NamedTuple):
    """A live re-run of one stored point against the file: what every lesson's
    ``compare_with_stored`` returns."""

    variant: str  # the stored run's variant (its name in the file)
    seed: int
    differences: dict  # {what was compared: largest |live - stored| over its fields}
    matches: bool  # every difference within its tolerance
    stored: dict  # the stored run's numbers


def compare_run(variant: str, seed: int, live: dict, stored: dict, tolerances: dict) -> Match:
    """Compare a live re-run's numbers with the stored run's.  ``tolerances`` maps a name to
    ``(fields, tol)``: ``differences[name]`` is :func:`largest_difference` over ``fields``, and
    the run matches when each is at most its ``tol`` (0 for numbers stored as computed; the
    rounding of a stored field for the rest, e.g. 1e-4 for a loss curve kept to 4 digits)."""
    differences = {name: largest_difference(live, stored, fields) for name, (fields, _) in tolerances.items()}
    matches = all(differences[name] <= tol for name, (_, tol) in tolerances.items())
    return Match(str(variant), int(seed), differences, matches, stored)


def measure_main(argv, *, module: str, description: str, measure, default_out: Path) -> int:
    """The ``python -m <module> --measure [--out FILE]`` command of a lesson whose ``measure(path)``
    trains every variant with every seed and writes the file."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument("--measure", action="store_true", help="train every variant with every seed; write the file")
    parser.add_argument("--out", default=str(default_out), help="where to write it")
    args = parser.parse_args(argv)
    if not args.measure:
        parser.print_help()
        return 0
    results = measure(args.out)
    print(f"wrote {args.out}: {sum(len(v) for v in results['runs'].values())} runs in "
          f"{results['wall_seconds']:.0f} s ({results['cpu_seconds']:.0f} s of processor time)")
    return 0
