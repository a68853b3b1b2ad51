"""Attacks through processes and time: code that never returns, allocates 10 GB, or starts a
process that would outlive grading and rewrite the results."""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pytest
from grading.tools import hostile_file, requires_bwrap, task_result  # noqa: F401
from grading import tools


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


def test_code_that_never_returns_is_stopped(hostile_file):
    t0 = time.perf_counter()
    result = graded(hostile_file("hw08_never_returns"), tasks=[1, 2], test_timeout=2, task_timeout=5)
    assert time.perf_counter() - t0 < 90
    for t in result.tasks:
        assert t.score == 0 and t.status == "timeout", (t.label, t.status, t.message)


def test_allocating_10_gb_fails_in_the_students_process(hostile_file):
    result = graded(hostile_file("hw08_allocates_10gb"), tasks=[1])
    t1 = task_result(result, 1)
    assert t1.score == 0 and "MemoryError" in t1.message, t1.message


@pytest.mark.parametrize("name, marker", [
    ("hw08_detached_process", "minitf-hostile-detached-ran"),  # subprocess, os.system, fork, ctypes, posix_spawn
    pytest.param("hw08_fork_exec", "minitf-hostile-fork-exec-ran", marks=requires_bwrap),  # the unaudited fork
])
def test_a_process_that_would_outlive_grading_changes_nothing(hostile_file, tmp_path, name, marker):
    marker = Path(tempfile.gettempdir()) / marker
    marker.unlink(missing_ok=True)
    results = tmp_path / "results.json"
    result = graded(hostile_file(name), tasks=[1, 6])
    result.write_results(results)
    time.sleep(4)  # a detached script would have woken up by now
    assert result.score == 0 and json.loads(results.read_text())["score"] == 0
    assert not marker.exists()  # it never started, or ran in the sandbox's own /tmp and died with it
