"""The grading engine: homework checked by pytest, graded so that a submission cannot fool
the grader.

The homeworks themselves are course content: each lesson that has one keeps it in its
folder, ``minitf/course/lNN_<slug>/homework/`` (the template students fill in, the concept
check's questions, the public tests and the runs that plug student code into minitf), and
:func:`homeworks` finds them by scanning the course's folders (:mod:`minitf.course.kit.lessons`):
a new lesson's homework needs no registration anywhere.
What students must not see lives outside the installed package, where the course staff
keep it (in this repository ``tests/instructor/``), one folder per assignment:

=======================  ==============================================================
``reference.py``          the reference solution
``key.json``              the concept check's answers and explanations, and the setting
                          that decides when wrong answers are explained
``tests.py``              the hidden tests (those that need the key)
=======================  ==============================================================

``minitf grade`` finds that folder from ``--instructor DIR`` or the ``MINITF_INSTRUCTOR``
environment setting; without it, it runs the public tests and says which tasks only the
course's autograder can score.

How grading keeps a student's code from touching its own score
--------------------------------------------------------------
* :mod:`.grader` runs pytest over the tests in a process of its own; the expected
  values, comparisons, scores and ``results.json`` are made there.
* The student's code runs only in :mod:`.sandbox` processes, one per task, limited in
  time and memory, with the task's own minitf functions switched off and an audit hook
  that refuses reading the instructor files, writing outside its directory and starting
  processes.  Only data crosses back (:mod:`.wire`: ``.npz`` and JSON, never pickle).
* :mod:`.submission` scans the file's source for imports of what a task forbids.

This module only describes the homeworks: the pytest plugin imports it at start-up.
"""
from __future__ import annotations

import importlib
import os
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

    def task(self, number: int) -> Task:
        for t in self.tasks:
            if t.number == number:
                return t
        raise ValueError(f"task: expected one of {[t.number for t in self.tasks]} for {self.name}, got {number!r}")

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


def homeworks() -> dict[str, Homework]:
    """Every homework of the course, by name, sorted: the ``HOMEWORK`` of each lesson folder's
    ``homework`` package (:func:`minitf.course.kit.lessons.lesson_packages`)."""
    from ..course.kit.lessons import lesson_packages

    found = {}
    for package in lesson_packages():
        try:
            module = importlib.import_module(f"{package}.homework")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.homework":
                raise
            continue  # a lesson without homework
        hw = getattr(module, "HOMEWORK", None)
        if not isinstance(hw, Homework):
            raise TypeError(f"{package}.homework: expected a HOMEWORK = Homework(...), got {type(hw).__name__}")
        if hw.name in found:
            raise ValueError(f"homework: {hw.name!r} is defined twice, by {found[hw.name].package} and {hw.package}")
        found[hw.name] = hw
    return dict(sorted(found.items()))


def get_homework(name) -> Homework:
    """The homework registered as ``name`` (e.g. ``"hw08"``)."""
    if isinstance(name, Homework):
        return name
    known = homeworks()
    if not known:
        raise ValueError(f"homework: the course has no homework (no minitf/course/l*/homework/), got {name!r}")
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
