"""The grading engine: homework checked by pytest, graded so that a submission cannot fool
the grader, the same way every time.

The homeworks themselves are course content: each lesson that has one keeps it in its
folder, ``minitf/course/lNN_<slug>/homework/`` (the template students fill in, the concept
check's questions, the public tests and, where a test plugs student code into minitf, a
``runs.py``), and :func:`homeworks` finds them by scanning the course's folders
(:mod:`minitf.course.kit.lessons`): a new lesson's homework needs no registration anywhere.
What students must not see lives outside the installed package, where the course staff
keep it (in this repository ``tests/instructor/``):

=============================  ==========================================================
``hwNN/reference.py``          the reference solution (NumPy only, as a student's file)
``hwNN/key.json``              the concept check's answers and explanations, and the
                               setting that decides when wrong answers are explained
``hwNN/tests.py``              the hidden tests (those that need the key)
``secret.json``                the course's secret seed: the secret problems
                               (``minitf homework secret --instructor DIR`` writes it once)
=============================  ==========================================================

``minitf grade`` finds that folder from ``--instructor DIR`` or the ``MINITF_INSTRUCTOR``
environment setting; without it, it runs the public tests on the public problems and says
which tasks only the course's autograder can score.

How grading keeps a student's code from touching its own score
--------------------------------------------------------------
* **A submission is a regular file's bytes** (:func:`.submission.read_submission`): links,
  folders, devices, paths resolving outside the submission folder and notebooks are refused,
  scoring 0 with the reason; the bytes are read once, with ``O_NOFOLLOW``, and only they are
  graded.
* :mod:`.grader` runs pytest over the tests in a process of its own; the expected values,
  comparisons, scores and ``results.json`` are made there, never in the student's process.
* **The boundary is the file system.**  The student's code runs only in :mod:`.sandbox`
  processes, one per task, limited in time and memory, inside bubblewrap
  (:func:`.workers.bwrap_command`), which binds an allow-list: the interpreter, the standard
  library, NumPy and the shared libraries they load -- no other package (no torch, scipy,
  sympy, mpmath, jax), no minitf, no instructor folder, no repository.  An in-process guard
  (an import hook and an audit hook) is a second line that explains a refusal; a submission
  can switch it off, and then finds nothing more.  Without bubblewrap the process is no
  boundary, and the grader says so (it insists on bubblewrap for the instructor files).
* Only data crosses (:mod:`.wire`: ``.npz`` and JSON, never pickle).  A minitf model or
  layer a test hands to the student's code stays in the grader's process (:mod:`.remote`):
  the student's code gets its data by value and calls its allowed methods through the
  grader.  A ``runs.py`` function runs in the grader's process too, calling the student's
  functions through their proxies.
* **Forbidden by concept.**  Each task names the concept it grades (``Task.concept``) and
  minitf's implementations of it (``Task.forbidden``).  None is in the student's reach: minitf is
  not in the student's process at all, and a minitf object a test hands over offers no method that
  computes the concept (``tests/grading/test_concepts.py`` enumerates every minitf function that
  computes each task's concept and traces every method offered).  :mod:`.submission` also scans
  the file's source for the named implementations: a task that names one gets no credit, saying so.
* A folder of submissions is graded in one test run (:func:`.grader.grade_many`, the plugin's
  ``--homework-batch``), each file as it is graded alone.

Secret, deterministic problems (:mod:`.problems`)
-------------------------------------------------
Every test that takes the ``homework_seed`` fixture runs twice when the instructor folder is
given: ``test_x[public]`` on the public seed (``PUBLIC_SEED``, what a student's own runs
draw) and ``test_x[secret]`` on the homework's secret seed (derived from ``secret.json``).
Draw every problem from ``homework_seed`` (``np.random.default_rng(homework_seed + k)``) and
its sizes with :func:`.problems.shapes` (the public sizes on the public seed, sizes drawn
from ranges on the secret one).  A check -- one test function -- earns its share of the
task's points only when it passes on every problem it was given, so an answer that fits
the public problems alone (a lookup table) earns nothing for it.  What a student reads of a
failure on a secret problem says what is wrong in general terms (no number, no quoted value,
not the student's own exception text), and what the code printed during it is not shown.
Nothing is drawn afresh: the same file graded with the same instructor folder gets the
same results, test for test.

For a test writer: take ``submission`` and ``homework_seed``; call the student's function
through :func:`.asserts.call` (inputs checked for being left alone); compare with
:mod:`.asserts`' helpers; name the classic mistake in the message where you recognise it.
Keep messages free of anything the secret run must not show beyond numbers (they are
redacted) -- e.g. do not spell an input out in words.

This module only describes the homeworks: the pytest plugin imports it at start-up.
"""
from __future__ import annotations

import importlib
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

INSTRUCTOR_ENV = "MINITF_INSTRUCTOR"


@dataclass(frozen=True)
class Task:
    """One task of a homework: what the student writes and what it is worth."""

    number: int  # k in "Task 8.k"; the marker is f"{homework}_task{k}"
    title: str  # one line, shown in the score table
    points: float  # the task's share of the homework's total
    functions: tuple[str, ...]  # names the student's file must define for this task
    forbidden: tuple[str, ...] = ()  # dotted paths of minitf functions this task may not call
    # ("minitf.data.shift_right", "minitf.attention.MultiHeadAttention.backward"): switched
    # off in the student's process; a submission that imports one gets no credit for the task
    autograder_only: bool = False  # its tests need instructor files (an answer key)
    concept: str = ""  # what the task grades ("the masked cross-entropy and its gradient"): every minitf
    # function that computes it is out of the student's reach -- minitf is not in the student's process, and
    # a minitf object a test hands over offers no method that computes it (tests/grading/test_concepts.py)

    @property
    def visibility(self) -> str:
        """Gradescope's visibility of the task's result: a concept check's (the autograder-only
        tasks) ``after_due_date`` -- its answers would otherwise be found by trying -- the
        others ``visible``."""
        return "after_due_date" if self.autograder_only else "visible"


@dataclass(frozen=True)
class Homework:
    """A homework: its package and its tasks."""

    name: str  # "hw08": the CLI name and the marker prefix
    lesson: int
    title: str
    package: str  # "minitf.course.l08_teacher_forcing.homework"
    filename: str  # what a student's copy is called, e.g. "hw08_teacher_forcing.py"
    tasks: tuple[Task, ...]

    @property
    def directory(self) -> Path:
        return Path(importlib.import_module(self.package).__file__).resolve().parent

    @property
    def template_path(self) -> Path:
        return self.directory / "template.py"

    @property
    def test_files(self) -> list[Path]:
        """The public tests, one module per task (``tests/task*.py``: named so that pytest never
        collects them by accident)."""
        return sorted((self.directory / "tests").glob("task*.py"))

    @property
    def runs_module(self) -> str | None:
        """The module of runs that plug student code into minitf (``runs.py``), if the homework has one."""
        return f"{self.package}.runs" if (self.directory / "runs.py").is_file() else None

    @property
    def questions(self) -> dict:
        """The concept check's questions (no answers), or {} if the homework has none."""
        try:
            return importlib.import_module(f"{self.package}.questions").QUESTIONS
        except ModuleNotFoundError:
            return {}

    @property
    def max_score(self) -> float:
        return float(sum(t.points for t in self.tasks))

    def marker(self, task: Task | int) -> str:
        """``"hw08_task3"`` for task 3."""
        number = task.number if isinstance(task, Task) else int(task)
        return f"{self.name}_task{number}"

    def label(self, task: Task | int) -> str:
        """``"8.3"`` for task 3."""
        number = task.number if isinstance(task, Task) else int(task)
        return f"{self.lesson}.{number}"

    def task(self, number) -> Task:
        """The task ``number``: ``3``, ``"3"`` or its label ``"8.3"``."""
        text = str(number).strip()
        lesson, dot, k = text.rpartition(".")
        try:
            n = int(k if dot else text)
            ok = not dot or int(lesson) == self.lesson
        except ValueError:
            n, ok = None, False
        for t in self.tasks:
            if ok and t.number == n:
                return t
        raise ValueError(f"task: expected one of {[t.number for t in self.tasks]} (or "
                         f"{', '.join(self.label(t) for t in self.tasks)}) for {self.name}, got {number!r}")

    def task_for_marker(self, marker: str) -> Task | None:
        for t in self.tasks:
            if self.marker(t) == marker:
                return t
        return None

    def render_template(self) -> str:
        """The student's file: the template with the concept check's questions written in."""
        text = self.template_path.read_text(encoding="utf-8")
        questions = self.questions
        if not questions:
            return text
        lines = []
        for qid, q in questions.items():
            lines.append("#")
            lines += textwrap.wrap(q["question"], 96, initial_indent=f"# {qid}  ", subsequent_indent="#        ",
                                   break_on_hyphens=False)
            for letter, option in q["options"].items():
                lines += textwrap.wrap(option, 96, break_on_hyphens=False, initial_indent=f"#        ({letter}) ",
                                       subsequent_indent="#            ")
        lines += ["", "ANSWERS = {"] + [f'    "{qid}": None,' for qid in questions] + ["}"]
        return text.replace("# {questions}\n", "\n".join(lines) + "\n")

    def instructor_dir(self, base=None) -> Path | None:
        """This homework's instructor folder under ``base`` (default: ``$MINITF_INSTRUCTOR``),
        or None when there is none."""
        base = base if base is not None else os.environ.get(INSTRUCTOR_ENV)
        if not base:
            return None
        folder = Path(base).expanduser().resolve() / self.name
        return folder if folder.is_dir() else None


def _homework_packages() -> list[tuple[str, int | None]]:
    """``(package, lesson number)`` of every lesson folder that holds a ``homework/`` package
    (:func:`minitf.course.kit.lessons.lesson_folders`: found by scanning, nothing imported)."""
    from ..course.kit.lessons import lesson_folders

    out = []
    for package, folder in lesson_folders():
        if (folder / "homework" / "__init__.py").is_file():
            number = re.match(r"l(\d\d)_", folder.name)
            out.append((f"{package}.homework", int(number.group(1)) if number else None))
    return out


def _load(package: str) -> Homework:
    hw = getattr(importlib.import_module(package), "HOMEWORK", None)
    if not isinstance(hw, Homework):
        raise TypeError(f"{package}: expected a HOMEWORK = Homework(...), got {type(hw).__name__}")
    return hw


def homeworks(errors: list | None = None) -> dict[str, Homework]:
    """Every homework of the course, by name, sorted: the ``HOMEWORK`` of each lesson folder's
    ``homework`` package (:func:`minitf.course.kit.lessons.lesson_packages`).

    A lesson whose package fails to import raises -- unless ``errors`` is a list, which then
    collects ``(package, exception)`` and the other homeworks are returned (the grader's
    pytest process: one lesson being edited must not stop the grading of another's homework)."""
    found = {}
    for package, _ in _homework_packages():
        try:
            hw = _load(package)
        except Exception as e:
            if errors is None:
                raise
            errors.append((package, e))
            continue
        if hw.name in found:
            raise ValueError(f"homework: {hw.name!r} is defined twice, by {found[hw.name].package} and {hw.package}")
        found[hw.name] = hw
    return dict(sorted(found.items()))


def get_homework(name) -> Homework:
    """The homework registered as ``name``: ``"hw08"``, and also ``"hw8"``, ``"HW8"`` or ``"8"``.

    Only that lesson's package is imported when its folder's number says which it is
    (``l08_...`` for ``hw08``); the others are looked at only if it is not there."""
    if isinstance(name, Homework):
        return name
    text = str(name).strip().lower()
    number = text[2:] if text.startswith("hw") else text
    if number.isdigit():
        for package, lesson in _homework_packages():
            if lesson == int(number):
                hw = _load(package)
                if hw.name == f"hw{int(number):02d}" or hw.lesson == int(number):
                    return hw
    known = homeworks()
    if not known:
        raise ValueError(f"homework: the course has no homework (no minitf/course/l*/homework/), got {name!r}")
    if name not in known and number.isdigit():
        name = next((k for k, hw in known.items() if hw.lesson == int(number) or k == f"hw{int(number):02d}"), name)
    if name not in known:
        raise ValueError(f"homework: expected one of {', '.join(map(repr, known))}, got {name!r}")
    return known[name]


def new_homework(name: str, dest, force: bool = False) -> Path:
    """Write a fresh copy of homework ``name``'s template to ``dest`` and return its path.

    ``dest`` is a file path, or an existing directory (the file is then called
    ``Homework.filename`` inside it).  An existing file is only replaced with ``force``.
    """
    hw = get_homework(name)
    dest = Path(dest)
    if dest.is_dir():
        dest = dest / hw.filename
    if dest.suffix != ".py":
        raise ValueError(f"dest: expected a .py file or an existing directory, got {str(dest)!r}")
    if dest.exists() and not force:
        raise FileExistsError(f"dest: {str(dest)!r} already exists; pass force=True (--force) to replace it")
    if not dest.parent.is_dir():
        raise FileNotFoundError(f"dest: the directory {str(dest.parent)!r} does not exist")
    dest.write_text(hw.render_template(), encoding="utf-8")
    return dest


__all__ = ["Task", "Homework", "homeworks", "get_homework", "new_homework", "INSTRUCTOR_ENV"]
