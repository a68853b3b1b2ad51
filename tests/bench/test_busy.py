"""``minitf bench --busy`` (minitf/bench/busy.py): it starts and stops its own load, runs `minitf
train` both ways and reports what it claims.  No timing is asserted."""
from __future__ import annotations

import os
import time

import pytest

from minitf.bench.busy import busy_core, format_busy_report, run_busy_bench

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs CPU affinity (Linux)")


def _cpu_seconds_of_children() -> float:
    t = os.times()
    return t.children_user + t.children_system


def test_the_busy_core_spins_while_the_block_runs_and_stops_after():
    with busy_core() as cpu:
        assert cpu in os.sched_getaffinity(0)
        time.sleep(0.5)
    spent = _cpu_seconds_of_children()  # a child's time is counted once it has been waited for
    assert spent > 0.2, spent  # it did spin
    time.sleep(0.3)
    assert _cpu_seconds_of_children() == spent  # and it is gone: nothing more is counted


def test_busy_bench_runs_train_quiet_and_busy_and_reports_the_ratios():
    r = run_busy_bench(steps=2, stall_steps=2)
    for key in ("quiet", "busy", "stall_quiet", "stall_busy"):
        assert r[key]["seconds"] > 0 and r[key]["steps"] == 2, key
    assert r["stall_quiet"]["workers"] == 1 and r["stall_quiet"]["blas_threads"] == 2
    assert r["ratio"] == pytest.approx(r["busy"]["seconds"] / r["quiet"]["seconds"])
    assert "worker" in r["quiet"]["threads_note"]
    text = format_busy_report(r)
    for field in ("quiet", "busy / quiet", "goal: within 2", "the setting that stalled", "OPENBLAS_NUM_THREADS=2",
                  "load average"):
        assert field in text, text
