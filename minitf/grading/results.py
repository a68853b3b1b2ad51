"""A grade, as the student and the lecturer read it: each task's result (:class:`TaskResult`), the
whole submission's (:class:`GradeResult`: the score table, Gradescope's ``results.json``), and a
lecturer's gradebook of many (:func:`gradebook`).  :mod:`.grader` produces them."""
from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from . import Homework, Task

MESSAGE_SHOWN = 4000  # characters of one failure message (wrapped, never cut at a line's width)
WIDTH = 100


@dataclass
class TaskResult:
    """One task's grade."""

    task: Task
    label: str  # "8.3"
    score: float
    max_score: float
    status: str  # "passed", "failed", "no credit", "timeout", "error", "refused",
    # or "autograder only" (not graded here)
    passed: int = 0
    total: int = 0
    message: str = ""  # the first failure, for the student
    tests: list = field(default_factory=list)  # the plugin's per-test records
    seconds: float = 0.0
    output: str = ""  # what the student's code printed during the task's public problems

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    @property
    def graded(self) -> bool:
        return self.status != "autograder only"

    @property
    def failures(self) -> list:
        """``(test name, its message)`` for every test that did not pass."""
        return [(t["name"], (t.get("message") or "").strip()) for t in self.tests
                if t.get("outcome") not in ("passed", "skipped")]

    @property
    def notes(self) -> list:
        return [n for t in self.tests for n in t.get("notes", [])]


@dataclass
class GradeResult:
    """A whole submission's grade."""

    homework: Homework
    submission: str  # the file graded
    tasks: list
    isolation: str | None = None  # "bwrap" or "process": how the student's code was run
    seed: int | None = None  # the public seed of the test problems
    message: str = ""  # why nothing was graded (a refused file, a syntax error), said once

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tasks if t.graded), 2)

    @property
    def max_score(self) -> float:
        return float(sum(t.max_score for t in self.tasks if t.graded))

    @property
    def all_passed(self) -> bool:
        return not self.message and all(t.ok for t in self.tasks if t.graded)

    def to_gradescope(self) -> dict:
        """Gradescope's ``results.json``: ``{"score", "output", "visibility", "tests": [{"name",
        "score", "max_score", "output", "status", "visibility"}]}``.  A concept check's test is
        ``after_due_date`` (its answers would otherwise be found by trying), the others ``visible``."""
        tests = []
        for t in self.tasks:
            if not t.graded:
                continue
            lines = [f"{t.passed}/{t.total} tests passed" if t.total else t.status]
            if t.message and not self.message:
                lines.append(t.message)
            if len(t.failures) > 1:
                lines.append("")
                lines.extend(f"- {name}: {message}" for name, message in t.failures[1:])
            if t.notes:
                lines.append("")
                lines.extend(t.notes)
            if t.output:
                lines += ["", "What your code printed (public problems only):", t.output]
            tests.append({"name": f"Task {t.label}: {t.task.title}", "score": t.score, "max_score": t.max_score,
                          "output": "\n".join(lines), "status": "passed" if t.ok else "failed",
                          "visibility": t.task.visibility})
        out = {"score": self.score, "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
        if self.message:
            out["output"] = self.message
        return out

    def write_results(self, path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_gradescope(), indent=2) + "\n", encoding="utf-8")
        return path

    def table(self, width: int = WIDTH) -> str:
        """A score table: one row per task, then every failed check of each task that lost
        points, each message in full (wrapped), and what the task's code printed."""
        hw = self.homework
        rows = [f"{hw.name} -- Lesson {hw.lesson}: {hw.title}", f"submission: {self.submission}"]
        if self.isolation == "process":
            rows += wrap("(your code ran in a process of its own, without bubblewrap: fine for checking your own "
                         "work, but no boundary -- the course's autograder runs it inside bubblewrap)", width)
        if self.message:
            rows.append("")
            rows += wrap(self.message, width)
        rows.append("")
        head = f"{'task':<6}{'':<56}{'points':>10}  {'result':<16}"
        rows += [head, "-" * len(head)]
        for t in self.tasks:
            title = t.task.title if len(t.task.title) <= 54 else t.task.title[:53] + "~"
            points = f"{t.score:g}/{t.max_score:g}" if t.graded else f"-/{t.max_score:g}"
            tests = f" ({t.passed}/{t.total})" if t.total else ""
            result = "pass" if t.ok else t.status.upper()
            rows.append(f"{t.label:<6}{title:<56}{points:>10}  {result}{tests}")
        rows.append("-" * len(head))
        rows.append(f"{'total':<62}{f'{self.score:g}/{self.max_score:g}':>10}")
        ungraded = [t for t in self.tasks if not t.graded]
        if ungraded:
            rows.append("")
            rows += wrap(f"Task {', '.join(t.label for t in ungraded)}: scored only by the course's autograder (its "
                         f"tests need the instructor's files), so not in this total.", width)
        for t in self.tasks:
            if t.graded and not t.ok and t.message and not self.message:
                rows.append("")
                message = re.sub(rf"^Task {re.escape(t.label)}:? ", "", t.message.strip())  # said once, below
                rows += wrap(f"Task {t.label}: {message}", width)
                for name, text in t.failures[1:]:
                    rows += wrap(f"- {name}: {text}", width, indent="  ", subsequent="      ")
            for note in t.notes:
                rows += wrap(f"Task {t.label}: {note}", width)
            if t.output:
                rows += ["", f"Task {t.label}: what your code printed (public problems only):"]
                rows += ["  | " + line for line in t.output.splitlines()]
        return "\n".join(rows)


def printable(text: str) -> str:
    """``text`` with control characters (a terminal's escape sequences among them) shown as "?"."""
    return "".join(c if c.isprintable() or c in "\n\t" else "?" for c in str(text or ""))


def wrap(text: str, width: int = WIDTH, indent: str = "", subsequent: str = "    ") -> list[str]:
    """``text`` (at most :data:`MESSAGE_SHOWN` characters) wrapped to ``width``, every line after
    the first indented: nothing a message says can pass for a row of the table."""
    text = (text or "").strip()
    if len(text) > MESSAGE_SHOWN:
        text = text[:MESSAGE_SHOWN - 5] + " [...]"
    lines = []
    for k, paragraph in enumerate(text.splitlines() or [""]):
        first = indent if k == 0 else subsequent
        lines += textwrap.wrap(paragraph, width, initial_indent=first, subsequent_indent=subsequent,
                               break_long_words=True, break_on_hyphens=False) or [first.rstrip()]
    return lines



def gradebook(results: dict, path) -> Path:
    """Write ``{student: GradeResult}`` as a CSV gradebook: one row per student, one column per
    task (its points), the total, and why a file was not graded (the whole message, on one line)."""
    import csv

    path = Path(path)
    rows = list(results.items())
    tasks = rows[0][1].tasks if rows else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student"] + [f"{t.label} ({t.max_score:g})" for t in tasks]
                        + [f"total ({rows[0][1].max_score:g})" if rows else "total", "note"])
        for student, result in rows:
            scores = [f"{t.score:g}" if t.graded else "" for t in result.tasks]
            writer.writerow([student] + scores + [f"{result.score:g}", " ".join(result.message.split())])
    return path
