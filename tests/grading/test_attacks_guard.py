"""Attacks on the in-process guard: switching it off from inside the student's process (its
audit hook's class patched, its import hook taken off ``sys.meta_path``), then importing what it
refuses -- torch, scipy, sympy, minitf -- or minitf's functions reached by computed names.

The guard is a second line; the boundary is the file system: with the guard off, what it
refused is still not there (``test_attacks_filesystem.py`` walks what is).  Where the guard is
on, its refusals say why.
"""
from __future__ import annotations

import pytest
from grading.tools import hostile_file, requires_bwrap, task_result  # noqa: F401
from grading import tools


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


@requires_bwrap
@pytest.mark.parametrize("name, homework, tasks", [
    ("hw08_patch_guard", "hw08", [1, 2, 3, 4, 5, 6]),  # the audit hook patched away, the grader's argv read in /proc
    ("hw02_guard_off_torch", "hw02", [3]),  # guard off, every site-packages on sys.path, torch autograd
    ("hw03_guard_off_site_packages", "hw03", [2]),  # guard off, scipy / torch / sympy / mpmath looked for
    ("hw08_guard_off_minitf", "hw08", [1, 2, 3]),  # guard off, every minitf on disk looked for
])
def test_with_the_guard_off_there_is_nothing_to_import(hostile_file, name, homework, tasks):
    result = graded(hostile_file(name), tasks=tasks, homework=homework)
    assert result.isolation == "bwrap"
    for t in result.tasks:
        assert t.score == 0 and t.status in ("failed", "error"), (t.label, t.status, t.message)


def test_minitf_hidden_in_a_dict_a_closure_or_a_default_is_not_there(hostile_file):
    """minitf's functions taken at import time by computed names (no source scan sees them): the
    import fails in the student's process, so the file cannot be imported, and says why."""
    result = graded(hostile_file("hw08_hidden_reference"), tasks=[1, 2, 3])
    for t in result.tasks:
        assert t.score == 0 and t.status == "failed", (t.label, t.status, t.message)
        assert "minitf is not available" in t.message, t.message


def test_minitf_private_greedy_loop_is_not_there(hostile_file):
    t = task_result(graded(hostile_file("hw08_private_greedy"), tasks=[5]), 5)
    assert t.score == 0 and t.status == "failed", (t.status, t.message)
    assert "minitf is not available" in t.message, t.message


def test_the_guard_explains_a_refused_import(hostile_file):
    """torch autograd would write a backward for the student: with the guard on, the import is
    refused naming why (and inside bubblewrap torch is not there either)."""
    t = task_result(graded(hostile_file("hw02_torch_autograd"), tasks=[3], homework="hw02"), 3)
    assert t.score == 0 and "automatic differentiation is not available" in t.message, (t.status, t.message)
