"""Attacks through imports and forbidden code: a minitf function that does the task's work under
a name the task did not list (each a patch on the blank template).  minitf is not there to
import in the student's process, so none of them runs; where the source names what a task
replaces, the task also gets no credit by the static scan.

Known limit, not tested here: complex-step differentiation of a forward the student may call
(or wrote) gives a backward to ~1e-16 without writing it; nothing short of reading the code
tells the two apart.
"""
from __future__ import annotations

import ast
import glob
import inspect

import pytest
from grading.tools import hostile_file, task_result  # noqa: F401
from grading import tools

from minitf.decoding import processors
from minitf.grading import get_homework, homeworks
from minitf.grading.submission import COPY_MIN_NODES, _fingerprint, _minitf_fingerprint, copied_functions


@pytest.mark.parametrize("name, task", [
    ("hw01_transformer_mixing", 4),  # minitf.scheduled_sampling's own_previous_tokens + mix_decoder_inputs
    ("hw01_pointer_scatter_add", 4),  # minitf.models.pointer_generator.scatter_add for dW_E
    ("hw03_log_softmax", 2),  # exp(log_softmax) for the forbidden softmax
    ("hw06_parts_built", 2),  # the model assembled from its parts, its arrays counted by hand
    ("hw10_copy_nll", 1),  # the pointer-generator's copy_nll on softmax(logits): a masked NLL
    ("hw09_top_k_copied", 1),  # minitf's top_k_filter pasted in: no import, minitf's code (the copy check)
])
def test_shortcut_through_minitf_scores_zero(hostile_file, name, task):
    t = task_result(tools.graded(hostile_file(name), tasks=[task]), task)
    assert t.score == 0 and t.status in ("failed", "no credit"), (t.label, t.status, t.message)
    failing = [x["message"] for x in t.tests if x["outcome"] != "passed"]
    assert any("minitf is not available" in m or "no credit" in m for m in failing), failing


def test_the_copy_check_finds_minitf_code_pasted_in_and_nothing_written_for_the_course():
    """Every forbidden minitf function large enough to compare, pasted in (docstring reworded,
    type hints dropped, names changed, statements that do nothing added), is found; no reference, honest mistake or other hostile file is taken for
    a copy (the natural solution of a short formula can coincide with minitf's: COPY_MIN_NODES)."""
    compared = 0
    for hw in (get_homework(n) for n in sorted(homeworks())):
        for task in hw.tasks:
            for path in task.forbidden:
                compared += _minitf_fingerprint(path) is not None
    assert compared >= 30, compared
    source = inspect.getsource(processors.top_k_filter)
    pasted = ast.parse(source.replace("Keep the k largest", "My own: keep the k largest")
                       .replace(": np.ndarray", "").replace(": int", "").replace(" -> np.ndarray", ""))
    assert copied_functions(pasted, ["minitf.decoding.processors.top_k_filter"]) == [
        (1, "top_k_filter", "minitf.decoding.processors.top_k_filter")]
    # names changed and statements that do nothing added: the same code
    disguised = ast.parse(source.replace("kth", "thresh").replace("logits", "z").replace("top_k_filter", "mine").replace(
        "    V = z.shape[-1]\n", "    V = z.shape[-1]\n    _unused = None\n    pass\n    'a note'\n"))
    assert copied_functions(disguised, ["minitf.decoding.processors.top_k_filter"]) == [
        (1, "mine", "minitf.decoding.processors.top_k_filter")]
    assert _fingerprint(pasted.body[0])[1] >= COPY_MIN_NODES
    flagged = []
    for name in sorted(glob.glob(str(tools.REPO / "tests/instructor/hw*/reference.py"))
                       + glob.glob(str(tools.REPO / "tests/course/l*/submissions/hw*.py"))
                       + glob.glob(str(tools.REPO / "tests/grading/hostile/*/hw*.py"))):
        homework = name.split("/")[-2] if name.endswith("/reference.py") else name.split("/")[-1][:4]
        tree = ast.parse(open(name, encoding="utf-8").read())
        for task in get_homework(homework).tasks:
            flagged += [(name.split("/tests/")[-1], task.number, c) for c in copied_functions(tree, task.forbidden)]
    assert [f for f in flagged if "hw09_top_k_copied" not in f[0]] == [], flagged
    assert any("hw09_top_k_copied" in f[0] for f in flagged)


def test_the_copy_check_and_the_compile_check_survive_deep_nesting():
    """A long chained expression is no reason to fail a file: the copy check skips a function too deep
    to print again, and a file too deep for Python's parser is refused with the reason, not an error."""
    from minitf.grading.submission import check_source

    deep = "def helper(a):\n    return " + "+".join(["a"] * 1000) + "\n"
    assert copied_functions(ast.parse(deep), ["minitf.decoding.processors.top_k_filter"]) == []
    deeper = ("def helper(a):\n    return " + "+".join(["a"] * 20000) + "\n").encode()
    assert "nested too deeply" in check_source(deeper, "hw02.py")
