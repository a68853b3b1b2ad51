"""What a benchmark reports of the machine around it: :func:`load_average` and
:func:`busy_machine_note` let the benchmarks say when other work shared the CPUs.  (The
process setting they time with, :func:`minitf.process.keep_freed_memory`, is the training
loop's own.)
"""
from __future__ import annotations

import os

def load_average() -> float | None:
    """The 1-minute load average: how many processes were running or waiting for a CPU,
    averaged over the last minute; None where the OS does not report one.

    The benchmarks record it before they start: on a busy machine their timings measure
    the competition as much as the code."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def busy_machine_note(load: float | None, cpu_count: int | None) -> str | None:
    """A warning line for a benchmark report when ``load`` says other work was running
    (at least one busy CPU's worth), else None."""
    if load is None or load < 1.0:
        return None
    return (f"warning: the machine was busy in the minute before the benchmark (1-minute load average "
            f"{load:.2f} on {cpu_count or '?'} CPUs); if other processes are still running they share the "
            f"CPUs, and these timings are not reliable: run again on a quiet machine")
