"""Grade a homework submission: each task's tests in a subprocess, with a time limit.

    result = grade("hw08", "alice.py")          # or grade("hw08") for the reference solution
    print(result.table())
    result.write_results("results.json")        # Gradescope's format

How a run goes, and why:

1. **A probe import** in a subprocess (a few seconds at most).  A file that fails to
   import, exits, or hangs at import costs every task (nothing in it can be checked),
   and the per-task runs are skipped.
2. **One pytest subprocess per task** (``-m hw08_taskK``), with the plugin's
   ``--homework-report`` and ``--homework-test-timeout``.  A submission that crashes,
   loops or prints garbage can only spoil the task whose tests it breaks.  The process is
   killed at the task's time limit; the report is rewritten after every test, so the
   tests that finished still count and the one that was running is marked as timed out.
3. **Scores from the JSON report**, never from the console output.  A task earns its
   points in proportion to the tests it passes; a task whose code calls minitf's own
   implementation of what it asks for earns nothing.

The grader itself never raises because of a submission: everything that can go wrong
in the subprocesses becomes a message in the result.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import Homework, Task, get_homework

PROBE_TIMEOUT = 30.0  # seconds for the probe import
TASK_TIMEOUT = 120.0  # seconds for one task's whole test run (tests take a few seconds)
TEST_TIMEOUT = 60.0  # seconds for one test, enforced inside the run
OUTPUT_TAIL = 2000  # characters of a crashed run's console output kept for the message


@dataclass
class TaskResult:
    """One task's grade."""

    task: Task
    label: str  # "8.3"
    score: float
    max_score: float
    status: str  # "passed", "failed", "no credit" (used minitf's own), "timeout", "error" (no report)
    passed: int = 0
    total: int = 0
    message: str = ""  # the first failure, for the student
    tests: list = field(default_factory=list)  # the plugin's per-test records
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "passed"


@dataclass
class GradeResult:
    """A whole submission's grade."""

    homework: Homework
    submission: str  # the file graded, or "reference solution"
    tasks: list

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tasks), 2)

    @property
    def max_score(self) -> float:
        return float(sum(t.max_score for t in self.tasks))

    @property
    def all_passed(self) -> bool:
        return all(t.ok for t in self.tasks)

    def to_gradescope(self) -> dict:
        """``{"score": ..., "tests": [{"name", "score", "max_score", "output", "status"}]}``."""
        tests = []
        for t in self.tasks:
            lines = [f"{t.passed}/{t.total} tests passed" if t.total else t.status]
            if t.message:
                lines.append(t.message)
            failing = [x for x in t.tests if x.get("outcome") not in ("passed", "skipped")]
            if len(failing) > 1:
                lines.append("")
                lines.extend(f"- {x['name']}: {first_line(x.get('message', ''))}" for x in failing)
            tests.append({"name": f"Task {t.label}: {t.task.title}", "score": t.score, "max_score": t.max_score,
                          "output": "\n".join(lines), "status": "passed" if t.ok else "failed"})
        return {"score": self.score, "tests": tests}

    def write_results(self, path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_gradescope(), indent=2) + "\n", encoding="utf-8")
        return path

    def table(self, width: int = 100) -> str:
        """A score table: one row per task, then the first failure of each task that lost points."""
        hw = self.homework
        rows = [f"{hw.name} -- Lesson {hw.lesson}: {hw.title}", f"submission: {self.submission}", ""]
        head = f"{'task':<6}{'':<56}{'points':>10}  {'result':<16}"
        rows += [head, "-" * len(head)]
        for t in self.tasks:
            title = t.task.title if len(t.task.title) <= 54 else t.task.title[:53] + "~"
            points = f"{t.score:g}/{t.max_score:g}"
            tests = f" ({t.passed}/{t.total})" if t.total else ""
            rows.append(f"{t.label:<6}{title:<56}{points:>10}  {t.status.upper() if not t.ok else 'pass'}{tests}")
        rows.append("-" * len(head))
        rows.append(f"{'total':<62}{f'{self.score:g}/{self.max_score:g}':>10}")
        failures = [t for t in self.tasks if not t.ok and t.message]
        if failures:
            rows.append("")
            for t in failures:
                message = re.sub(rf"^Task {re.escape(t.label)}:? ", "", t.message.strip())  # said once, below
                rows.append(f"Task {t.label}: {shorten(message, width * 4)}")
        return "\n".join(rows)


def first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def shorten(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- subprocesses ---------------------------------------------------------------------------------
def _env(single_thread: bool) -> dict:
    env = dict(os.environ)
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # only our plugin: the run does not depend on what is installed
               PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ beside the student's file
               PYTHONHASHSEED="0", MPLBACKEND="Agg", PYTHONIOENCODING="utf-8")
    env.pop("PYTEST_ADDOPTS", None)
    if single_thread:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
    return env


def _run(cmd: list, cwd: Path, timeout: float, log: Path, env: dict) -> tuple[int | None, float]:
    """Run ``cmd`` with its output to ``log``; kill its whole process group at ``timeout``.

    Returns (exit code or None if it was killed, seconds).
    """
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except BaseException as e:  # the time limit (or an interrupt): stop the run and anything it started
            code = None
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own process group (start_new_session), not yet reaped
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            if not isinstance(e, subprocess.TimeoutExpired):
                raise
    return code, time.perf_counter() - t0


def _tail(log: Path) -> str:
    try:
        data = log.read_bytes()[-OUTPUT_TAIL:]
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "".join(c if c.isprintable() or c in "\n\t" else "?" for c in text).strip()


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


PROBE = """\
import json, sys
from minitf.homework.submission import load
loaded = load(sys.argv[1], sys.argv[2])
with open(sys.argv[3], "w", encoding="utf-8") as f:
    json.dump({"error": loaded.error}, f)
"""


def probe(homework: Homework, submission: Path, workdir: Path, timeout: float, env: dict) -> str | None:
    """Import the submission in a subprocess.  Returns why it cannot be graded, or None."""
    out, log = workdir / "probe.json", workdir / "probe.log"
    code, _ = _run([sys.executable, "-c", PROBE, homework.name, str(submission), str(out)], workdir, timeout, log, env)
    if code is None:
        return (f"importing your file did not finish within {timeout:g} s: is there an endless loop (or a long "
                f"computation) at module level?")
    data = _read_json(out)
    if data is None:
        return f"importing your file ended the Python process (exit code {code}) before it could be checked"
    return data.get("error")


def _task_run(homework: Homework, task: Task, submission: Path | None, workdir: Path, task_timeout: float,
              test_timeout: float, env: dict) -> TaskResult:
    marker = homework.marker(task)
    label = homework.label(task)
    report, log = workdir / f"{marker}.json", workdir / f"{marker}.log"
    ini = workdir / "pytest.ini"
    cmd = [sys.executable, "-m", "pytest", str(homework.tests_path), "-c", str(ini), "--rootdir", str(workdir),
           "-p", "minitf.homework.plugin", "-p", "no:cacheprovider", "-q", "-m", marker,
           "--homework-report", str(report), "--homework-test-timeout", f"{test_timeout:g}"]
    if submission is not None:
        cmd += ["--submission", str(submission)]
    code, seconds = _run(cmd, workdir, task_timeout, log, env)
    data = _read_json(report)
    result = TaskResult(task, label, 0.0, task.points, "error", seconds=round(seconds, 2))
    if data is None or not data.get("collected"):
        errors = (data or {}).get("errors") or []
        why = (errors[0] if errors else
               f"the test run ended before it reported anything (exit code {code}); its last output:\n{_tail(log)}")
        if code is None:
            why = f"the test run did not finish within {task_timeout:g} s"
        result.message = why
        return result
    collected = [c for c in data["collected"] if c.get("task") == marker]
    tests = []
    for c in collected:
        t = data["tests"].get(c["nodeid"])
        if t is None:  # never finished: the one running when the process died, or never started
            running = data.get("running") == c["nodeid"]
            if running and code is None:
                msg = (f"timed out: the task's tests did not finish within {task_timeout:g} s; this test was running "
                       "(an endless loop?)")
            elif running:
                msg = f"the Python process died during this test (exit code {code})"
            else:
                msg = "not run: the task's test run ended before reaching this test"
            t = {"nodeid": c["nodeid"], "name": c["name"], "task": marker, "outcome": "failed", "message": msg,
                 "forbidden": False, "seconds": 0.0}
        tests.append(t)
    result.tests = tests
    result.total = len(tests)
    result.passed = sum(t["outcome"] == "passed" for t in tests)
    failing = [t for t in tests if t["outcome"] != "passed"]
    forbidden = [t for t in tests if t.get("forbidden")]
    if forbidden:
        result.status, result.score = "no credit", 0.0
        result.message = forbidden[0]["message"]
    elif not tests:
        result.message = "no tests were found for this task"
    else:
        result.score = round(task.points * result.passed / result.total, 2)
        timed_out = code is None or any("time limit" in t.get("message", "") or t.get("message", "").startswith(
            "timed out") for t in failing)
        result.status = "passed" if not failing else ("timeout" if timed_out else "failed")
        result.message = failing[0]["message"] if failing else ""
    return result


def grade(homework="hw08", submission=None, *, tasks=None, task_timeout: float = TASK_TIMEOUT,
          test_timeout: float = TEST_TIMEOUT, probe_timeout: float = PROBE_TIMEOUT, jobs: int = 1) -> GradeResult:
    """Grade ``submission`` (a path), or the reference solution when it is None.

    Parameters
    ----------
    homework : str
        ``"hw08"``.
    submission : path or None
    tasks : iterable of int, optional
        Task numbers to grade (default: all).  Tasks left out are not in the result.
    task_timeout : float
        Seconds allowed for one task's whole test run.
    test_timeout : float
        Seconds allowed for one test inside a run.
    probe_timeout : float
        Seconds allowed for importing the submission.
    jobs : int
        Tasks graded at once (each in its own process).

    Returns
    -------
    GradeResult
    """
    hw = get_homework(homework)
    if importlib.util.find_spec("pytest") is None:
        raise RuntimeError("grading runs the homework's tests with pytest, which is not installed: "
                           "pip install pytest (or pip install 'minitf[test]')")
    chosen = hw.tasks if tasks is None else tuple(hw.task(int(k)) for k in tasks)
    for name, value in (("task_timeout", task_timeout), ("test_timeout", test_timeout),
                        ("probe_timeout", probe_timeout)):
        if not value > 0:
            raise ValueError(f"{name}: expected a positive number of seconds, got {value!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: expected a positive integer, got {jobs!r}")
    path = None
    if submission is not None:
        path = Path(submission).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"submission: expected a Python file, got {str(submission)!r} (no such file)")
    shown = str(submission) if submission is not None else "reference solution"
    env = _env(single_thread=jobs > 1)
    with tempfile.TemporaryDirectory(prefix=f"minitf-grade-{hw.name}-") as tmp:
        workdir = Path(tmp)
        (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        if path is not None:
            why = probe(hw, path, workdir, probe_timeout, env)
            if why is not None:
                message = f"your file could not be imported, so nothing in it can be checked: {why}"
                return GradeResult(hw, shown, [TaskResult(t, hw.label(t), 0.0, t.points, "error", message=message)
                                               for t in chosen])
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_task_run, hw, t, path, workdir, task_timeout, test_timeout, env) for t in chosen]
            results = [f.result() for f in futures]
    return GradeResult(hw, shown, results)
