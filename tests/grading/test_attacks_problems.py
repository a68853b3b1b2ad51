"""Attacks on the test problems: answers that fit the problems rather than the task -- finite
differences snapped or stepped to be exact on the tests' numbers, the input handed back where an
edge case's answer is the input, and a lookup table of the public problems' answers (which the
secret problems, and scoring each check over all its problems, leave with nothing).
"""
from __future__ import annotations

import pytest
from grading.tools import base_name, hostile_file, submission_file, task_result  # noqa: F401
from grading import tools


def graded(path, tasks=None, homework: str | None = None, **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


def test_finite_differences_of_the_forward_are_not_a_backward(hostile_file):
    t = task_result(graded(hostile_file("hw08_finite_differences"), tasks=[4]), 4)
    assert t.score == 0 and t.status == "failed", (t.label, t.status, t.message)


def test_snapped_finite_differences_score_nothing_on_the_coverage_gradient(hostile_file):
    t = task_result(graded(hostile_file("hw09_snapped_differences"), tasks=[4]), 4)
    assert t.score == 0 and t.status == "failed", (t.status, t.score, t.message)
    assert all(x["outcome"] != "passed" for x in t.tests), [(x["name"], x["outcome"]) for x in t.tests]


def test_plain_finite_differences_lose_every_coverage_test(submission_file):
    """The honest mistake (central differences, step 1e-6) used to pass all but one of task 9.4's
    tests; now each holds a tie, and its message still names finite differences."""
    t = task_result(graded(submission_file("hw09_coverage_finite_differences"), tasks=[4]), 4)
    assert t.passed == 0 and t.score == 0, [(x["name"], x["outcome"]) for x in t.tests]
    assert "precision of finite differences" in t.message, t.message


def test_unit_step_differences_fail_every_float64_backward_test(hostile_file):
    t = task_result(graded(hostile_file("hw09_unit_step_differences"), tasks=[3]), 3)
    outcome = {x["name"]: x["outcome"] for x in t.tests}
    backward64 = [n for n in outcome if "backward" in n and "float32" not in n]
    assert len(backward64) == 4 and all(outcome[n] == "failed" for n in backward64), outcome
    assert all(outcome[n] == "passed" for n in outcome if "forward" in n), outcome  # its forward is right
    assert t.status == "failed" and "precision of finite differences" in t.message, t.message


def test_handing_the_input_back_scores_nothing(hostile_file):
    result = graded(hostile_file("hw09_returns_its_input"), tasks=[1, 5])
    for number in (1, 5):
        t = task_result(result, number)
        assert t.passed == 0 and t.score == 0, (t.label, [(x["name"], x["outcome"]) for x in t.tests])


