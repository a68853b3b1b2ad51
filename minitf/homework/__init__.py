"""Homework checked by pytest.

A homework is a template module that students fill in (every task a function whose stub
raises ``NotImplementedError("Task 8.k: ...")``), a reference solution, and a test module
whose tests carry one marker per task (``hw08_task1`` ... ``hw08_task6``).  The pytest
plugin (:mod:`minitf.homework.plugin`) points those tests at a student's file with
``--submission PATH``; without it they check the reference solution.  The grader
(:mod:`minitf.homework.grader`) runs each task's tests in a subprocess with a time limit
and turns the results into a score table and a Gradescope-style ``results.json``.

=======================  ================================================================
file                      what it is
=======================  ================================================================
``hw08_template.py``      the blank template (``minitf homework new hw08 DEST`` copies it)
``hw08_reference.py``     the reference solution
``hw08_tests.py``         the tests, one marker per task (run only by the grader or by
                          ``pytest --pyargs minitf.homework.hw08_tests``)
``submission.py``         loading a submission; the checks that it writes what it is asked
                          to write instead of calling minitf's own implementation
``plugin.py``             the pytest plugin: ``--submission``, markers, the JSON report
``grader.py``             subprocess per task, time limits, score table, results.json
``asserts.py``            comparisons whose failure messages teach
=======================  ================================================================

This module only describes the homeworks (plain data): the pytest plugin imports it at
start-up, so it imports nothing heavy.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Task:
    """One task of a homework: what the student writes and what it is worth."""

    number: int  # k in "Task 8.k"; the marker is f"{homework}_task{k}"
    title: str  # one line, shown in the score table
    points: float  # the task's share of the homework's total
    functions: tuple[str, ...]  # names the student's file must define for this task
    forbidden: tuple[str, ...] = ()  # dotted paths of minitf objects this task may not call
    # ("minitf.data.shift_right", "minitf.attention.MultiHeadAttention.backward"): a
    # submission that calls one, or imports it, gets no credit for the task


@dataclass(frozen=True)
class Homework:
    """A homework: its files in this package and its tasks."""

    name: str  # "hw08": the CLI name and the marker prefix
    lesson: int
    title: str
    filename: str  # what a student's copy is called, e.g. "hw08_teacher_forcing.py"
    tasks: tuple[Task, ...]

    @property
    def template_path(self) -> Path:
        """The blank template (package data)."""
        return PACKAGE_DIR / f"{self.name}_template.py"

    @property
    def reference_path(self) -> Path:
        """The reference solution (package data)."""
        return PACKAGE_DIR / f"{self.name}_reference.py"

    @property
    def reference_module(self) -> str:
        return f"{__name__}.{self.name}_reference"

    @property
    def tests_path(self) -> Path:
        """The test module; named so that pytest never collects it by accident."""
        return PACKAGE_DIR / f"{self.name}_tests.py"

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


HW08 = Homework(
    name="hw08",
    lesson=8,
    title="Training: teacher forcing & the loss",
    filename="hw08_teacher_forcing.py",
    tasks=(
        Task(1, "shift right: decoder inputs from labels", 15.0, ("shift_right",),
             ("minitf.data.shift_right", "minitf.data.make_batch", "minitf.tasks.Task.batch",
              "minitf.training.decoder_only_batch")),
        Task(2, "the causal mask", 10.0, ("causal_mask",),
             ("minitf.masks.causal_mask",)),
        Task(3, "masked cross-entropy, forward and backward", 20.0, ("masked_cross_entropy",),
             ("minitf.loss.cross_entropy", "minitf.training.forward_loss", "minitf.training.train_step")),
        Task(4, "cross-attention backward; dL/dH_enc over all blocks", 25.0,
             ("cross_attention_backward", "encoder_output_gradient"),
             ("minitf.attention.MultiHeadAttention.backward",
              "minitf.attention.scaled_dot_product_attention_backward",
              "minitf.blocks.DecoderBlock.backward", "minitf.blocks.sublayer_backward",
              "minitf.models.encoder_decoder.EncoderDecoder.backward")),
        Task(5, "free-running decoding; exposure bias measured", 20.0,
             ("free_running_decode", "exposure_bias"),
             ("minitf.training.evaluate", "minitf.training.sequence_metrics",
              "minitf.decoding.greedy_search", "minitf.decoding.sample", "minitf.decoding.beam_search")),
        Task(6, "concept check: teacher forcing misconceptions", 10.0, ("ANSWERS",)),
    ),
)

HOMEWORKS: dict[str, Homework] = {HW08.name: HW08}


def get_homework(name: str) -> Homework:
    """The homework registered as ``name`` (e.g. ``"hw08"``)."""
    if isinstance(name, Homework):
        return name
    if name not in HOMEWORKS:
        raise ValueError(f"homework: expected one of {', '.join(map(repr, sorted(HOMEWORKS)))}, got {name!r}")
    return HOMEWORKS[name]


def new_homework(name: str, dest, force: bool = False) -> Path:
    """Copy a fresh template of homework ``name`` to ``dest`` and return the new file's path.

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
    shutil.copyfile(hw.template_path, dest)
    return dest


def grade(*args, **kwargs):
    """Grade a submission; see :func:`minitf.homework.grader.grade`."""
    from .grader import grade as _grade

    return _grade(*args, **kwargs)


__all__ = ["Task", "Homework", "HW08", "HOMEWORKS", "get_homework", "new_homework", "grade", "PACKAGE_DIR"]
