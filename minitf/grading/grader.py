"""Grade a homework submission.

    result = grade("hw08", "alice.py")                       # the public tests
    result = grade("hw08", "alice.py", instructor="tests/instructor")   # and the hidden ones
    print(result.table())
    result.write_results("results.json")                     # Gradescope's format

How a run goes, and why:

1. **One pytest process** (the grader's own) runs the homework's public tests, and its
   hidden tests when the instructor folder is given, with the plugin's
   ``--homework-report``.  Expected values, comparisons and scores exist only there and in
   this process.
2. **The student's code runs elsewhere**: the tests call it through proxies, in one
   process per task (:mod:`minitf.grading.sandbox`), with time and memory limits.  A
   submission that crashes, loops or prints garbage spoils only the calls it breaks.
3. **Scores come from the JSON report**, which the student's processes cannot reach.  A
   task earns its points in proportion to the tests it passes; a task whose code uses
   minitf's own implementation of what it asks for earns nothing.

The grader itself never raises because of a submission: everything that can go wrong
becomes a message in the result.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..checks import check_int, check_number
from . import INSTRUCTOR_ENV, Homework, Task, get_homework
from .workers import CALL_TIMEOUT, STARTUP_TIMEOUT, TASK_TIMEOUT, resolve_isolation

OUTPUT_TAIL = 2000  # characters of a crashed run's console output kept for the message


@dataclass
class TaskResult:
    """One task's grade."""

    task: Task
    label: str  # "8.3"
    score: float
    max_score: float
    status: str  # "passed", "failed", "no credit", "timeout", "error", or "autograder only" (not graded here)
    passed: int = 0
    total: int = 0
    message: str = ""  # the first failure, for the student
    tests: list = field(default_factory=list)  # the plugin's per-test records
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    @property
    def graded(self) -> bool:
        return self.status != "autograder only"

    @property
    def failures(self) -> list:
        """``(test name, first line of its message)`` for every test that did not pass."""
        return [(t["name"], first_line(t.get("message", ""))) for t in self.tests
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
    seed: int | None = None  # the seed of the test problems

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tasks if t.graded), 2)

    @property
    def max_score(self) -> float:
        return float(sum(t.max_score for t in self.tasks if t.graded))

    @property
    def all_passed(self) -> bool:
        return all(t.ok for t in self.tasks if t.graded)

    def to_gradescope(self) -> dict:
        """``{"score": ..., "tests": [{"name", "score", "max_score", "output", "status"}]}``."""
        tests = []
        for t in self.tasks:
            if not t.graded:
                continue
            lines = [f"{t.passed}/{t.total} tests passed" if t.total else t.status]
            if t.message:
                lines.append(t.message)
            if len(t.failures) > 1:
                lines.append("")
                lines.extend(f"- {name}: {message}" for name, message in t.failures)
            if t.notes:
                lines.append("")
                lines.extend(t.notes)
            tests.append({"name": f"Task {t.label}: {t.task.title}", "score": t.score, "max_score": t.max_score,
                          "output": "\n".join(lines), "status": "passed" if t.ok else "failed"})
        return {"score": self.score, "tests": tests}

    def write_results(self, path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_gradescope(), indent=2) + "\n", encoding="utf-8")
        return path

    def table(self, width: int = 100) -> str:
        """A score table: one row per task, then every failed check of each task that lost
        points (the first in full, the others in a line each)."""
        hw = self.homework
        rows = [f"{hw.name} -- Lesson {hw.lesson}: {hw.title}", f"submission: {self.submission}"]
        if self.isolation == "process":
            rows.append("(your code ran in a process of its own, without bubblewrap: fine for checking your own "
                        "work; the course's autograder isolates it further)")
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
            rows.append(f"Task {', '.join(t.label for t in ungraded)}: scored only by the course's autograder (its "
                        f"tests need the instructor's files), so not in this total.")
        for t in self.tasks:
            if t.graded and not t.ok and t.message:
                rows.append("")
                message = re.sub(rf"^Task {re.escape(t.label)}:? ", "", t.message.strip())  # said once, below
                # indented continuation lines: nothing a message says can pass for a row of the table
                rows.append(f"Task {t.label}: " + shorten(message, width * 4).replace("\n", "\n    "))
                others = t.failures[1:]
                for name, line in others:
                    rows.append(f"  - {name}: {shorten(line, width - 6 - len(name))}")
            for note in t.notes:
                rows.append(f"Task {t.label}: " + shorten(note, width * 2).replace("\n", "\n    "))
        return "\n".join(rows)


def printable(text: str) -> str:
    """``text`` with control characters (a terminal's escape sequences among them) shown as "?"."""
    return "".join(c if c.isprintable() or c in "\n\t" else "?" for c in str(text or ""))


def first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def shorten(text: str, limit: int) -> str:
    text = (text or "").strip()
    limit = max(limit, 20)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- the pytest run ----------------------------------------------------------------------------------
def _run(cmd: list, cwd: Path, timeout: float, log: Path) -> int | None:
    """Run ``cmd`` with its output to ``log``; kill its whole process group at ``timeout``.
    Returns the exit code, or None if it was killed."""
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg",
               PYTHONIOENCODING="utf-8")
    env.pop("PYTEST_ADDOPTS", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except BaseException as e:  # the time limit (or an interrupt): stop the run and all it started
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            if not isinstance(e, subprocess.TimeoutExpired):
                raise
            return None


def _tail(log: Path) -> str:
    try:
        data = log.read_bytes()[-OUTPUT_TAIL:]
    except OSError:
        return ""
    return printable(data.decode("utf-8", errors="replace")).strip()


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _task_result(hw: Homework, task: Task, data: dict | None, code: int | None, why: str) -> TaskResult:
    marker = hw.marker(task)
    result = TaskResult(task, hw.label(task), 0.0, task.points, "error")
    collected = [c for c in (data or {}).get("collected", []) if c.get("task") == marker]
    if not collected:
        errors = (data or {}).get("errors") or []
        result.message = errors[0] if errors else why
        return result
    tests = []
    for c in collected:
        t = data["tests"].get(c["nodeid"])
        if t is not None:  # what the student's code said may hold a terminal's escape sequences
            t = dict(t, message=printable(t.get("message", "")), notes=[printable(n) for n in t.get("notes", [])])
        if t is None:  # never finished
            running = data.get("running") == c["nodeid"]
            msg = (why if running else "not run: the test run ended before reaching this test")
            t = {"nodeid": c["nodeid"], "name": c["name"], "task": marker, "outcome": "failed", "message": msg,
                 "forbidden": False, "notes": [], "seconds": 0.0}
        tests.append(t)
    result.tests = tests
    result.total = len(tests)
    result.passed = sum(t["outcome"] == "passed" for t in tests)
    result.seconds = round(sum(t.get("seconds", 0.0) for t in tests), 2)
    failing = [t for t in tests if t["outcome"] != "passed"]
    forbidden = [t for t in tests if t.get("forbidden")]
    if forbidden:
        result.status, result.score = "no credit", 0.0
        result.message = forbidden[0]["message"]
        return result
    result.score = round(task.points * result.passed / result.total, 2)
    timed_out = any(t.get("timeout") for t in failing)
    result.status = "passed" if not failing else ("timeout" if timed_out else "failed")
    result.message = failing[0]["message"] if failing else ""
    return result


def grade(homework="hw08", submission=None, *, tasks=None, instructor=None, reference: bool = False,
          task_timeout: float = TASK_TIMEOUT, test_timeout: float = CALL_TIMEOUT,
          probe_timeout: float = STARTUP_TIMEOUT, isolation: str = "auto", seed: int | None = None) -> GradeResult:
    """Grade ``submission`` (a path), or with ``reference=True`` the instructor's reference solution.

    Parameters
    ----------
    homework : str
        ``"hw08"``.
    submission : path
    tasks : iterable of int, optional
        Task numbers to grade (default: all).  Tasks left out are not in the result.
    instructor : path, optional
        The folder holding each homework's instructor files (``<instructor>/hw08/``);
        default ``$MINITF_INSTRUCTOR``.  Without it, tasks that need them are not graded.
    task_timeout, test_timeout, probe_timeout : float
        Seconds allowed for all of a task's calls into the student's code, for one call,
        and for importing the file.
    isolation : "auto", "bwrap" or "process"
        The student's process inside bubblewrap (``"auto"``: where it is installed), or
        an ordinary process (:mod:`minitf.grading.workers`).  With the instructor files,
        ``"auto"`` insists on bubblewrap: only ``isolation="process"``, asked for by name,
        runs hidden tests without it (an ordinary process is not a boundary).

    Raises
    ------
    RuntimeError
        When the grader's own test run fails (it never runs the student's code, so this is
        a broken installation, not a bad submission), or bubblewrap is needed and missing.
    seed : int, optional
        The seed of the test problems; by default a fresh one per run, so that answers
        cannot be recorded beforehand and replayed.

    Returns
    -------
    GradeResult
    """
    hw = get_homework(homework)
    if importlib.util.find_spec("pytest") is None:  # pytest is a dependency of minitf; this is for broken installs
        raise RuntimeError("grading runs the homework's tests with pytest, which is not installed: pip install pytest")
    chosen = hw.tasks if tasks is None else tuple(hw.task(int(k)) for k in tasks)
    for name, value in (("task_timeout", task_timeout), ("test_timeout", test_timeout),
                        ("probe_timeout", probe_timeout)):
        check_number(name, value, 0, None, low_open=True, hint="seconds")
    folder = hw.instructor_dir(instructor)
    if instructor is not None and folder is None:
        raise FileNotFoundError(f"instructor: expected a folder holding {hw.name}/, got {str(instructor)!r}")
    if reference:
        if submission is not None:
            raise ValueError("give a submission or reference=True, not both")
        if folder is None or not (folder / "reference.py").is_file():
            raise FileNotFoundError(f"the reference solution is instructor material: give the instructor folder "
                                    f"(--instructor DIR or ${INSTRUCTOR_ENV}) holding {hw.name}/reference.py")
        submission = folder / "reference.py"
    if submission is None:
        raise ValueError("submission: expected a Python file")
    path = Path(submission).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"submission: expected a Python file, got {str(submission)!r} (no such file)")
    shown = "reference solution" if reference else str(submission)
    hidden = folder / "tests.py" if folder is not None and (folder / "tests.py").is_file() else None
    isolation = resolve_isolation(isolation, needs_boundary=hidden is not None)
    seed = secrets.randbelow(2 ** 31) if seed is None else check_int("seed", seed, low=0)
    graded = [t for t in chosen if hidden is not None or not t.autograder_only]
    results = {}
    if graded:
        with tempfile.TemporaryDirectory(prefix=f"minitf-grade-{hw.name}-") as tmp:
            workdir = Path(tmp)
            (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
            report, log = workdir / "report.json", workdir / "pytest.log"
            files = [str(f) for f in hw.test_files] + ([str(hidden)] if hidden is not None else [])
            cmd = [sys.executable, "-m", "pytest", *files, "-c", str(workdir / "pytest.ini"), "--rootdir",
                   str(workdir), "-p", "minitf.grading.plugin", "-p", "no:cacheprovider", "-q",
                   "-m", " or ".join(hw.marker(t) for t in graded), "--submission", str(path),
                   "--homework-report", str(report), "--homework-call-timeout", f"{test_timeout:g}",
                   "--homework-task-timeout", f"{task_timeout:g}", "--homework-startup-timeout", f"{probe_timeout:g}",
                   "--homework-isolation", isolation, "--homework-seed", str(seed)]
            for secret in (folder.parent if folder is not None else None, instructor):  # out of the student's sight
                if secret is not None:
                    cmd += ["--homework-hide", str(Path(secret).resolve())]
            limit = len(graded) * (task_timeout + probe_timeout) + 120
            code = _run(cmd, workdir, limit, log)
            data = _read_json(report)
            if code is None or data is None or not data.get("collected"):
                # the student's code never runs in that process: a run without a report is the grader's own failure
                how = f"killed after {limit:g} s" if code is None else f"exit code {code}"
                raise RuntimeError(f"the grader's own test run failed ({how}), so nothing was graded; its last "
                                   f"output:\n{_tail(log)}")
            why = f"the grader's test run ended before this test finished (exit code {code})"
            for t in graded:
                results[t.number] = _task_result(hw, t, data, code, why)
    out = [results.get(t.number) or TaskResult(t, hw.label(t), 0.0, t.points, "autograder only") for t in chosen]
    return GradeResult(hw, shown, out, isolation, seed)
