"""``minitf bench --busy``: does ``minitf train`` keep going when another program holds a core?

The bench runs ``minitf train --task reverse`` (in a child process, as a user would) twice: on
the machine as it is ("quiet"), then with one busy process -- a Python loop pinned to the last
usable CPU, started by the bench before the run and stopped after it ("busy") -- and reports
the training time of each and their ratio.  The goal is a ratio within 2: the busy core leaves
the run one core and a share of the other, and it should slow down in proportion, not stall.

It also runs the setting that stalled (``--workers 1`` with ``OPENBLAS_NUM_THREADS=2``: one
worker whose BLAS products are split over two threads) for a few steps, quiet and busy.  Every
product then waits at its end for both threads, and one of them for its turn on the busy core.

The times are the training loop's own (``--metrics-out``'s ``seconds``), not the start-up.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from ..process import BLAS_THREAD_VARS, usable_cpus
from .process import busy_machine_note, load_average

TASK = "reverse"
STALL_STEPS = 40  # the stalling setting's run: 40 steps took 16.6 s busy against 1.8 s quiet (the issue's)

_SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@contextlib.contextmanager
def busy_core(cpu: int | None = None):
    """A child process spinning on one CPU (the last usable one by default) while the block runs.
    Yields the CPU it holds; the process is killed when the block ends, whatever happens."""
    if cpu is None:
        cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    load = subprocess.Popen([sys.executable, "-c", _SPIN, str(cpu)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.2)  # let it start spinning
        yield cpu
    finally:
        load.kill()
        load.wait()


def train_run(steps: int | None, workers: int | None = None, blas_threads: int | None = None) -> dict:
    """One ``minitf train --task reverse`` in a child process: its ``seconds`` (the training loop),
    ``wall_seconds`` (the whole command), the settings and the final free-running exact match."""
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "metrics.json")
        argv = [sys.executable, "-m", "minitf", "train", "--task", TASK, "--no-progress", "--samples", "0",
                "--metrics-out", path]
        argv += [] if steps is None else ["--steps", str(steps)]
        argv += [] if workers is None else ["--workers", str(workers)]
        t0 = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"minitf train failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        with open(path) as f:
            m = json.load(f)
    note = next((line.strip() for line in done.stdout.splitlines() if "worker" in line), "")
    return {"seconds": m["seconds"], "wall_seconds": wall, "steps": m["steps"], "workers": workers,
            "blas_threads": blas_threads, "threads_note": note, "exact_match": m["free_running_exact_match"]}


def run_busy_bench(steps: int | None = None, stall_steps: int = STALL_STEPS, with_stall: bool = True) -> dict:
    """``minitf train --task reverse`` (``steps``: its default when None) quiet, then with one core
    busy; with ``with_stall``, the stalling setting for ``stall_steps`` steps both ways too."""
    out = {"load_average": load_average(), "cpu_count": os.cpu_count(), "usable_cpus": usable_cpus(),
           "task": TASK}
    out["quiet"] = train_run(steps)
    with busy_core() as cpu:
        out["busy_cpu"] = cpu
        out["busy"] = train_run(steps)
    out["ratio"] = out["busy"]["seconds"] / out["quiet"]["seconds"]
    if with_stall:
        out["stall_quiet"] = train_run(stall_steps, workers=1, blas_threads=2)
        with busy_core():
            out["stall_busy"] = train_run(stall_steps, workers=1, blas_threads=2)
        out["stall_ratio"] = out["stall_busy"]["seconds"] / out["stall_quiet"]["seconds"]
    out["load_average_after"] = load_average()
    return out


def format_busy_report(r: dict) -> str:
    q, b = r["quiet"], r["busy"]
    lines = [f"minitf train --task {r['task']} on a busy machine: one process spinning on CPU {r['busy_cpu']} "
             f"of {r['usable_cpus']} for the whole run",
             f"  defaults ({q['threads_note'].strip('()')})",
             f"    quiet  {q['seconds']:7.1f} s training ({q['steps']} steps, exact match {q['exact_match']:.3f})",
             f"    busy   {b['seconds']:7.1f} s training ({b['steps']} steps, exact match {b['exact_match']:.3f})",
             f"    busy / quiet: {r['ratio']:.2f} (goal: within 2)"]
    if "stall_quiet" in r:
        sq, sb = r["stall_quiet"], r["stall_busy"]
        lines += [f"  the setting that stalled: --workers 1, OPENBLAS_NUM_THREADS=2, {sq['steps']} steps",
                  f"    quiet  {sq['seconds']:7.1f} s   busy {sb['seconds']:7.1f} s   busy / quiet: {r['stall_ratio']:.2f}"]
    lines.append(f"  1-minute load average before: {r['load_average']}, after: {r['load_average_after']} "
                 "(the busy process itself counts 1 while it runs)")
    busy = busy_machine_note(r.get("load_average"), r.get("cpu_count"))
    if busy:
        lines.append("  " + busy.replace("benchmark", "quiet run"))
    return "\n".join(lines)
