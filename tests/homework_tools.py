"""What the homework tests share: building a submission from a patch, grading it, and the
fixtures that do both.  Each homework's own tests (``test_homework_hwNN.py``) import it;
``test_homework.py`` holds the checks every homework must pass.

Honest mistakes live in ``homework_submissions/hwNN_*.py`` as patches on that homework's
reference solution; hostile ones in ``homework_submissions/hostile/hwNN_*.py`` as patches on
its blank template (see ``homework_submissions/README.md``).
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from minitf.grading import get_homework
from minitf.grading.grader import grade
from minitf.grading.workers import resolve_isolation

REPO = Path(__file__).resolve().parents[1]
INSTRUCTOR = REPO / "tests" / "instructor"
SUBMISSIONS = Path(__file__).resolve().parent / "homework_submissions"
HOSTILE = SUBMISSIONS / "hostile"


def reference_path(homework: str) -> Path:
    return INSTRUCTOR / homework / "reference.py"


def answer_key(homework: str) -> dict:
    return json.loads((INSTRUCTOR / homework / "key.json").read_text(encoding="utf-8"))


# ---- building a submission from a patch on the reference (or on the blank template) ----------------------
def build_submission(snippet, dest, base: str | None = None, homework: str | None = None) -> Path:
    """``base`` (the reference solution's text of ``homework`` by default, its name taken
    from the snippet's file name, ``hwNN_...``) with the snippet's functions (and
    assignments) put in place of those of the same name; the snippet's other statements are
    appended."""
    if base is None:
        homework = homework or Path(snippet).name.split("_")[0]
        base = reference_path(homework).read_text(encoding="utf-8")
    reference = base
    patch = Path(snippet).read_text(encoding="utf-8")
    ref_lines = reference.splitlines(keepends=True)
    patch_lines = patch.splitlines(keepends=True)

    def span(node, lines):
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        return start, node.end_lineno, "".join(lines[start:node.end_lineno])

    def key(node):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return node.name
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return "=" + node.targets[0].id
        return None

    ref_nodes = {key(n): n for n in ast.parse(reference).body if key(n)}
    replacements, appended = {}, []
    body = ast.parse(patch).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the snippet's docstring
    for node in body:
        k = key(node)
        if k in ref_nodes:
            replacements[k] = span(node, patch_lines)[2]
        else:
            appended.append(span(node, patch_lines)[2])
    out, pos = [], 0
    for k, node in sorted(((k, n) for k, n in ref_nodes.items() if k in replacements), key=lambda kn: kn[1].lineno):
        start, end, _ = span(node, ref_lines)
        out.append("".join(ref_lines[pos:start]))
        out.append(replacements[k])
        pos = end
    out.append("".join(ref_lines[pos:]))
    text = "".join(out) + "\n\n# ---- patch ----\n" + "\n".join(appended)
    dest = Path(dest)
    dest.write_text(text, encoding="utf-8")
    return dest



def submission_path(name: str, tmp_path) -> Path:
    """The honest mistake ``homework_submissions/<name>.py`` patched into its homework's reference."""
    return build_submission(SUBMISSIONS / f"{name}.py", Path(tmp_path) / f"{name}.py")


def hostile_path(name: str, tmp_path) -> Path:
    """The hostile snippet ``homework_submissions/hostile/<name>.py`` patched into its homework's
    blank template: whatever it scores, it stole."""
    homework = name.split("_")[0]
    return build_submission(HOSTILE / f"{name}.py", Path(tmp_path) / f"{name}.py",
                            base=get_homework(homework).render_template())


@pytest.fixture
def submission_file(tmp_path):
    return lambda name: submission_path(name, tmp_path)


@pytest.fixture
def hostile_file(tmp_path):
    return lambda name: hostile_path(name, tmp_path)


BWRAP = resolve_isolation("auto") == "bwrap"
requires_bwrap = pytest.mark.skipif(not BWRAP, reason="needs bubblewrap (apt-get install bubblewrap): the student's "
                                                      "process is isolated by the operating system only inside bwrap")


def task_result(result, number):
    (t,) = [t for t in result.tasks if t.task.number == number]
    return t


def graded(path, tasks=None, homework: str | None = None, **kwargs):
    """Grade ``path`` (homework named by its file name, ``hwNN_...``, unless given) with the
    instructor files, inside bubblewrap where the machine has it."""
    homework = homework or Path(path).name.split("_")[0]
    kwargs.setdefault("isolation", "bwrap" if BWRAP else "process")
    return grade(homework, path, tasks=tasks, instructor=INSTRUCTOR, **kwargs)


def expect_caught(result, number: int, phrase: str) -> None:
    """The classic mistake lost points on task ``number``, and the message names it (``phrase``)."""
    t = task_result(result, number)
    assert t.status == "failed" and t.score < t.max_score, (t.status, t.score)
    assert phrase in t.message, t.message
    failing = [x for x in t.tests if x["outcome"] != "passed"]
    assert failing and all(x["message"] for x in failing)
