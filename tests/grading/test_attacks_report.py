"""Attacks on the report and the score: rewriting the report or the results file, patching the
grader's report writer, rewriting the answer key, forging a reply on the pipe, mutating the
model the tests hand over.  The report is written in the grader's process, which runs no
student code; only data crosses, unpacked without pickle."""
from __future__ import annotations

import json
import time

import pytest
from grading.tools import hostile_file, task_result  # noqa: F401
from grading import tools


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


@pytest.mark.parametrize("name, tasks", [
    ("hw08_overwrite_key", [6]),
    ("hw08_rewrite_report", [1, 3, 6]),
    ("hw08_patch_writer", [1, 3, 6]),
])
def test_hostile_submission_steals_nothing(hostile_file, tmp_path, name, tasks):
    results = tmp_path / "results.json"
    result = graded(hostile_file(name), tasks=tasks)
    result.write_results(results)
    assert result.score == 0, [(t.label, t.score, t.message) for t in result.tasks]
    assert json.loads(results.read_text())["score"] == 0


@pytest.mark.parametrize("name, tasks, status", [
    ("hw08_mutates_model", [5], "failed"),  # the model stays in the grader: its weights come as copies
    ("hw08_forged_reply", [1], "failed"),  # a model in a reply, a deflated member: refused before unpacking
])
def test_hostile_submission_scores_zero(hostile_file, name, tasks, status):
    t0 = time.perf_counter()
    result = graded(hostile_file(name), tasks=tasks)
    assert time.perf_counter() - t0 < 60
    for t in result.tasks:
        assert t.score == 0 and t.status == status, (t.label, t.status, t.message)
