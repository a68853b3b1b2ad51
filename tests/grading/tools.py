"""What the tests of the grader and of each homework share: building a submission from a
patch, grading it, and the fixtures that do both.

* Honest mistakes live with their lesson, ``tests/course/lNN/submissions/hwNN_*.py``: patches
  on that homework's reference solution (``tests/instructor/hwNN/reference.py``); each
  homework's own tests are ``tests/course/lNN/test_homework.py``.
* Hostile submissions live with the grader, ``tests/grading/hostile/<what they attack>/hwNN_*.py``:
  patches on the blank template (see ``tests/grading/hostile/README.md``).

Graded results are remembered for the session (:func:`graded`, keyed by the file's bytes, the
homework, the tasks and the options): the determinism test grades each submission once more
and compares the two ``results.json``.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

import pytest

from minitf.grading import get_homework
from minitf.grading.grader import grade, grade_many
from minitf.grading.workers import resolve_isolation

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
INSTRUCTOR = TESTS / "instructor"
COURSE_TESTS = TESTS / "course"
HOSTILE = Path(__file__).resolve().parent / "hostile"
ATTACK_CLASSES = ("filesystem", "guard", "processes", "report", "imports", "problems", "gradescope")


def lesson_tests(homework: str) -> Path:
    """``tests/course/lNN/`` of a homework."""
    return COURSE_TESTS / f"l{get_homework(homework).lesson:02d}"


def submissions_dir(homework: str) -> Path:
    return lesson_tests(homework) / "submissions"


def reference_path(homework: str) -> Path:
    return INSTRUCTOR / homework / "reference.py"


def answer_key(homework: str) -> dict:
    return json.loads((INSTRUCTOR / homework / "key.json").read_text(encoding="utf-8"))


def honest_mistakes(homework: str) -> list[Path]:
    return sorted(submissions_dir(homework).glob(f"{homework}_*.py"))


def hostile_snippet(name: str) -> Path:
    """``tests/grading/hostile/<class>/<name>.py``, whatever its class."""
    found = sorted(HOSTILE.glob(f"*/{name}.py"))
    if len(found) != 1:
        raise FileNotFoundError(f"hostile submission {name!r}: expected one file under {HOSTILE}, found {found}")
    return found[0]


def base_name(test_name: str) -> str:
    """``test_x[secret-3]`` -> ``test_x``: the test function's name."""
    return re.sub(r"\[.*\]$", "", test_name)


def check_name(test: dict) -> str:
    """The check a report's test run belongs to (``test_x[3]`` for ``test_x[public-3]``)."""
    return test.get("check", test["name"])


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
    """The honest mistake ``tests/course/lNN/submissions/<name>.py`` patched into its homework's reference."""
    homework = name.split("_")[0]
    return build_submission(submissions_dir(homework) / f"{name}.py", Path(tmp_path) / f"{name}.py")


def hostile_path(name: str, tmp_path) -> Path:
    """The hostile snippet ``tests/grading/hostile/<class>/<name>.py`` patched into its homework's
    blank template: whatever it scores, it stole."""
    homework = name.split("_")[0]
    return build_submission(hostile_snippet(name), Path(tmp_path) / f"{name}.py",
                            base=get_homework(homework).render_template())


SELECTED: dict = {}  # homework -> {(honest mistake, task)}: the classic-mistake tests this session runs


def note_selected(items) -> None:
    """Remember the classic-mistake tests collected (a ``pytest_collection_modifyitems`` helper):
    the first of a homework grades them all ahead, in batches."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "name" in params and "phrase" in params and str(params["name"]).startswith("hw"):
            number = params.get("number", params.get("task"))
            SELECTED.setdefault(params["name"].split("_")[0], set()).add((params["name"], number))


@pytest.fixture
def submission_file(tmp_path):
    def build(name: str) -> Path:
        homework = name.split("_")[0]
        ahead = SELECTED.pop(homework, None)
        if ahead:  # the classic mistakes of this homework that this session grades, in batches, once
            folder = tmp_path / "ahead"
            folder.mkdir(exist_ok=True)
            grade_ahead([(homework, submission_path(n, folder), [k]) for n, k in sorted(ahead)])
        return submission_path(name, tmp_path)

    return build


@pytest.fixture
def hostile_file(tmp_path):
    return lambda name: hostile_path(name, tmp_path)


BWRAP = resolve_isolation("auto") == "bwrap"
requires_bwrap = pytest.mark.skipif(not BWRAP, reason="needs bubblewrap (apt-get install bubblewrap): the student's "
                                                      "process is isolated by the operating system only inside bwrap")


def task_result(result, number):
    (t,) = [t for t in result.tasks if t.task.number == number]
    return t


REFERENCE: dict = {}  # homework -> the GradeResult of its reference solution (graded once a session)


def reference_result(homework: str):
    """The reference solution of ``homework`` graded with the instructor files, once a session."""
    if homework not in REFERENCE:
        REFERENCE[homework] = grade(homework, reference=True, instructor=INSTRUCTOR)
        GRADED.setdefault(("reference", homework), REFERENCE[homework].to_gradescope())
    return REFERENCE[homework]


GRADED: dict = {}  # (homework, sha256 of the file, tasks, options) -> results.json of the first grading


def _key(homework, path, tasks, kwargs) -> tuple:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return (homework, digest, tuple(tasks) if tasks is not None else None, tuple(sorted(kwargs.items())))


RESULTS: dict = {}  # the same keys -> the GradeResult of that first grading (graded in a batch ahead, or now)


def graded(path, tasks=None, homework: str | None = None, **kwargs):
    """``path`` graded (homework named by its file name, ``hwNN_...``, unless given) with the
    instructor files, inside bubblewrap where the machine has it -- once a session: a file with
    the same bytes, tasks and options graded before (here, or ahead in a batch by
    :func:`grade_ahead`) gets that grading's result.  Its results.json is kept for the
    determinism test (:func:`first_results`)."""
    homework = homework or Path(path).name.split("_")[0]
    kwargs.setdefault("isolation", "bwrap" if BWRAP else "process")
    key = _key(homework, path, tasks, kwargs)
    if key not in RESULTS:
        _keep(key, grade(homework, path, tasks=tasks, instructor=INSTRUCTOR, **kwargs))
    return RESULTS[key]


def _keep(key, result) -> None:
    RESULTS.setdefault(key, result)
    GRADED.setdefault(key, result.to_gradescope())


def grade_ahead(entries, **kwargs) -> None:
    """Grade ``entries`` -- ``(homework, path, tasks)`` -- in as few test runs as there are
    (homework, tasks) among them (:func:`minitf.grading.grader.grade_many`: one pytest process
    for many files, each graded as alone), so that :func:`graded` finds them done."""
    kwargs.setdefault("isolation", "bwrap" if BWRAP else "process")
    groups: dict = {}
    for homework, path, tasks in entries:
        key = _key(homework, path, tasks, kwargs)
        if key not in RESULTS:
            groups.setdefault((homework, tuple(tasks) if tasks is not None else None), []).append((key, path))
    for (homework, tasks), items in groups.items():
        for (key, _), result in zip(items, grade_many(homework, [p for _, p in items], tasks=tasks,
                                                      instructor=INSTRUCTOR, **kwargs)):
            _keep(key, result)


def regraded(entries, **kwargs) -> list:
    """``entries`` -- ``(homework, path, tasks)`` -- graded again, now (in batches as above): their
    results.json, in order."""
    kwargs.setdefault("isolation", "bwrap" if BWRAP else "process")
    groups: dict = {}
    for n, (homework, path, tasks) in enumerate(entries):
        groups.setdefault((homework, tuple(tasks) if tasks is not None else None), []).append((n, path))
    out: list = [None] * len(entries)
    for (homework, tasks), items in groups.items():
        for (n, _), result in zip(items, grade_many(homework, [p for _, p in items], tasks=tasks,
                                                    instructor=INSTRUCTOR, **kwargs)):
            out[n] = result.to_gradescope()
    return out


def first_results(path, tasks=None, homework: str | None = None, **kwargs) -> dict:
    """The results.json of the session's first grading of this file (grading it now if there
    was none): what :func:`graded` remembered."""
    homework = homework or Path(path).name.split("_")[0]
    kwargs.setdefault("isolation", "bwrap" if BWRAP else "process")
    key = _key(homework, path, tasks, kwargs)
    if key not in GRADED:
        graded(path, tasks, homework, **kwargs)
    return GRADED[key]


def expect_caught(result, number: int, phrase: str) -> None:
    """The classic mistake lost points on task ``number``, and the message names it (``phrase``)."""
    t = task_result(result, number)
    assert t.status == "failed" and t.score < t.max_score, (t.status, t.score)
    assert phrase in t.message, t.message
    failing = [x for x in t.tests if x["outcome"] != "passed"]
    assert failing and all(x["message"] for x in failing)


def expect_minitf_refused(t) -> None:
    """A task whose file imports minitf: 0 points, and the message says minitf is not there
    ("no credit" where the source names a function the task replaces)."""
    assert t.score == 0 and t.status in ("no credit", "failed"), (t.label, t.status, t.message)
    assert ("minitf is not available" in t.message or "no credit" in t.message), t.message
