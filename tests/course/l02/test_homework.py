"""Homework 2 (Attention from scratch): its classic mistakes are caught, each on its own task
and by name; a correct solution written differently still gets full marks; calling minitf's
own implementation gets no credit; the concept check points to Lesson 2's real sections.

The checks every homework must pass (reference 100, blank 0, the files, the key, the scan)
are in tests/grading/test_homeworks.py, parametrized over the registered homeworks (``-k hw02``).
"""
from __future__ import annotations

import json
import re

import pytest

from minitf.grading import get_homework

from grading.tools import REPO, answer_key, expect_caught, expect_minitf_refused, graded, submission_file, task_result  # noqa: F401

HW02 = get_homework("hw02")

CLASSIC_MISTAKES = [
    # task 2.1: the softmax and its backward
    ("hw02_softmax_no_max", 1, "Subtract each row's maximum"),
    ("hw02_softmax_global_max", 1, "maximum of the whole array"),
    ("hw02_softmax_wrong_axis", 1, "not over the last axis"),
    ("hw02_softmax_backward_diagonal", 1, "keeps only the diagonal of the Jacobian"),
    ("hw02_softmax_backward_sigmoid", 1, "p(1-p)"),
    ("hw02_softmax_backward_whole_sum", 1, "summed over the whole array"),
    # new in issue 28 (round 2): a partly masked row; a loop in the backward
    ("hw02_softmax_mean_shift", 1, "a constant other than its maximum"),
    ("hw02_softmax_backward_jacobian_loop", 1, "a for loop in softmax_backward"),
    # task 2.2: scaled dot-product attention
    ("hw02_scale_one_over_dh", 2, "divided by Dh"),
    ("hw02_no_scale", 2, "1/sqrt(Dh) scale is missing"),
    ("hw02_softmax_over_queries", 2, "over the queries"),
    # new in issue 28 (round 2): large scores through the forward; a loop over the heads
    ("hw02_attention_softmax_no_max", 2, "exp(scores) overflowed"),
    ("hw02_attention_heads_loop", 2, "a for loop in attention_forward"),
    # task 2.3: the attention backward
    ("hw02_dv_no_transpose", 3, "dV = A dout: the transpose is missing"),
    ("hw02_backward_no_scale", 3, "miss the 1/sqrt(Dh)"),
    ("hw02_dk_not_transposed", 3, "dK = dscores Q: the transpose is missing"),
    ("hw02_backward_skips_softmax", 3, "softmax backward was skipped"),
    ("hw02_backward_recomputes_weights", 3, "use the A you are given"),
    ("hw02_finite_differences", 3, "finite differences"),
    # new in issue 28 (round 2): a loop over the heads
    ("hw02_backward_heads_loop", 3, "a for loop in attention_backward"),
    # task 2.4: many heads
    ("hw02_split_no_transpose", 4, "without the transpose"),
    ("hw02_merge_no_transpose", 4, "without transposing back"),
    ("hw02_heads_loop", 4, "a Python loop"),
    # new in issue 28 (round 2): a loop written as map; a view with C-order strides (a Fortran-ordered x)
    ("hw02_heads_map", 4, "a call of map in split_heads"),
    ("hw02_split_strided_c_order", 4, "wrong for this Fortran-ordered one"),
]


@pytest.mark.parametrize("name, task, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_is_caught_and_named(submission_file, name, task, phrase):
    expect_caught(graded(submission_file(name), tasks=[task]), task, phrase)


def test_a_mistake_costs_nothing_on_the_other_tasks(submission_file):
    """dV without its transpose costs task 2.3 (CLASSIC_MISTAKES), and nothing on the softmax,
    the forward or the heads."""
    result = graded(submission_file("hw02_dv_no_transpose"), tasks=[1, 2, 4])
    for t in result.tasks:
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_a_loop_over_heads_loses_only_the_loop_check(submission_file):
    """Right values with a Python loop: the values' tests pass, the loop test alone fails."""
    t4 = task_result(graded(submission_file("hw02_heads_loop"), tasks=[4]), 4)
    assert t4.total - t4.passed == 1 and 0 < t4.score < t4.max_score, (t4.passed, t4.total, t4.message)
    assert "split_heads" in t4.message and "merge_heads" in t4.message, t4.message


def test_a_correct_solution_written_differently_gets_full_marks(submission_file):
    """The tolerances leave room for any exact formula (the full Jacobian, einsum, a reciprocal,
    the scale on Q, np.split), while finite differences stay out (hw02_finite_differences)."""
    # (its np.add.reduce passes the loop checks; at scores in the thousands its scale on Q rounds
    # differently from the reference, inside the large-score test's tolerance)
    result = graded(submission_file("hw02_written_differently"), tasks=[1, 2, 3, 4])
    for t in result.tasks:
        assert t.ok and t.score == t.max_score, (t.label, t.status, t.message)


def test_the_loop_finder_counts_loops_written_as_calls_but_not_a_ufunc_reduce():
    """map, filter, functools.reduce, np.vectorize, np.frompyfunc, np.apply_along_axis run Python
    once per element: loops.  np.add.reduce (a ufunc's reduce) and the file's own functions are not,
    nor is going over a shape or a literal tuple (``map(int, x.shape)``, ``for a in (Q, K, V)``)."""
    from minitf.course.l02_attention.homework.tests.common import python_loops

    source = (
        "import functools\nfrom functools import reduce\nimport numpy as np\n"
        "def ok(x):\n    return np.add.reduce(x, axis=-1) + np.maximum.reduce(x) + helper(x)\n"
        "def helper(x):\n    return x.sum(axis=-1)\n"
        "def f1(x):\n    return list(map(abs, x))\n"
        "def f2(x):\n    return functools.reduce(np.add, x)\n"
        "def f3(x):\n    return reduce(np.add, x)\n"
        "def f4(x):\n    return np.vectorize(abs)(x)\n"
        "def f5(x):\n    return np.frompyfunc(abs, 1, 1)(x)\n"
        "def f6(x):\n    return np.apply_along_axis(np.sum, -1, x)\n"
        "def f7(x):\n    return f1(x)\n"
        "def fixed(Q, K, V):\n    B, T, D = map(int, Q.shape)\n    Q, K, V = (np.asarray(a) for a in (Q, K, V))\n"
        "    assert all(a.ndim == 4 for a in [Q, K, V]) and [d for d in Q.shape[:-1]]\n"
        "    for name in ('Q', 'K'):\n        pass\n    return Q\n"
    )
    assert python_loops(source, ["ok"]) == []
    assert python_loops(source, ["fixed"]) == []  # over a shape or a literal tuple: no loop over the data
    for name in ("f1", "f2", "f3", "f4", "f5", "f6", "f7"):
        assert len(python_loops(source, [name])) == 1, name
    assert "called from f7" in python_loops(source, ["f7"])[0]


def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process (``import minitf`` fails, saying
    so): the tasks whose functions the source names get no credit (the static scan), the others
    nothing either -- the file cannot be imported -- and every message says why."""
    result = graded(submission_file("hw02_calls_minitf"), tasks=[1, 2, 4])
    for number, name in ((1, "softmax"), (4, "split_heads")):
        t = task_result(result, number)
        assert t.status == "no credit" and t.score == 0, (t.label, t.status, t.message)
        assert "no credit" in t.message and name in t.message, t.message
    t2 = task_result(result, 2)
    expect_minitf_refused(t2)
    assert "minitf is not available" in t2.message, t2.message


def test_calling_minitf_through_a_computed_name_finds_no_minitf(submission_file):
    """minitf's own attention backward, reached by a name no source scan sees: not there."""
    t3 = task_result(graded(submission_file("hw02_calls_minitf_hidden"), tasks=[3]), 3)
    assert t3.status == "failed" and t3.score == 0, (t3.status, t3.message)
    assert "minitf is not available" in t3.message, t3.message


# ---- the concept check ---------------------------------------------------------------------------------
def _lesson_sections() -> list[str]:
    notebook = json.loads((REPO / "lessons" / "02-attention-from-scratch.ipynb").read_text(encoding="utf-8"))
    titles = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            titles += [m.group(1) for m in re.finditer(r"^## \d+\. (.+)$", "".join(cell["source"]), re.MULTILINE)]
    return titles


def test_every_question_points_to_a_real_section_of_lesson_2():
    titles = {t.lower().rstrip(".") for t in _lesson_sections()}
    assert len(titles) == 5, titles
    for qid, q in HW02.questions.items():
        m = re.fullmatch(r"Lesson 2, section (\d) \((.+)\)", q["section"])
        assert m, (qid, q["section"])
        number, title = int(m.group(1)), m.group(2)
        assert title.lower() == _lesson_sections()[number - 1].lower(), (qid, title)


def test_a_wrong_answer_gets_a_pointer_to_its_section_not_the_reasoning(tmp_path):
    key = answer_key("hw02")
    answers = {q: e["answer"] for q, e in key["answers"].items()} | {"2.5.4": "a"}  # "p(1-p), as the sigmoid"
    text = HW02.render_template()
    path = tmp_path / "answers.py"
    path.write_text(text[:text.index("ANSWERS = {")] + f"ANSWERS = {answers!r}\n", encoding="utf-8")
    result = graded(path, tasks=[5], homework="hw02")
    t5 = task_result(result, 5)
    assert t5.passed == 5 and t5.score == pytest.approx(15 * 5 / 6, abs=0.01)
    assert "not right yet; re-read Lesson 2, section 3 (the softmax and its backward)" in t5.message, t5.message
    assert key["answers"]["2.5.4"]["why_not"]["a"] not in result.table()
