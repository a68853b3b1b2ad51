"""Grade a homework submission.

    result = grade("hw08", "alice.py")                       # the public tests
    result = grade("hw08", "alice.py", instructor="tests/instructor")   # and the hidden ones
    print(result.table())
    result.write_results("results.json")                     # Gradescope's format
    results = grade_folder("hw08", "submissions/", instructor=...)      # a lecturer's batch, one test run
    results = grade_many("hw08", ["alice.py", "bob.py"], instructor=...)  # the same, for a list

How a run goes, and why:

1. **A submission is a regular file's bytes** (:func:`.submission.read_submission`): a link (symbolic or
   hard), a folder, a device, a path that resolves outside the submission's folder and a notebook are refused
   (every task 0, the reason said once).  The bytes are read once, with ``O_NOFOLLOW``, and
   only they are graded: the grader works on its own copy.  A file that does not compile
   is reported once, with its line, before any test runs.
2. **One pytest process** (the grader's own) runs the homework's public tests, and its
   hidden tests when the instructor folder is given, with the plugin's
   ``--homework-report``.  Expected values, comparisons and scores exist only there and in
   this process.  The problems are the public seed's and, with the instructor folder, its
   secret seed's (:mod:`.problems`): the same file and the same instructor folder get the
   same score, test for test, every time.
3. **The student's code runs elsewhere**: the tests call it through proxies, in one
   process per task (:mod:`.sandbox`, inside bubblewrap where installed), with time and
   memory limits.  A submission that crashes, loops or prints garbage spoils only the calls
   it breaks.
4. **Scores come from the JSON report**, which the student's processes cannot reach.  A
   task earns its points in proportion to the tests it passes; a task whose code uses
   minitf's own implementation of what it asks for earns nothing.

The grader itself never raises because of a submission: everything that can go wrong
becomes a message in the result.
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..checks import check_int, check_number
from . import INSTRUCTOR_ENV, Homework, Task, get_homework
from .problems import SECRET_FILE
from .results import GradeResult, TaskResult, gradebook, printable  # noqa: F401  (gradebook: the package's API)
from .submission import MAX_SUBMISSION_BYTES, SubmissionRefused, check_source, read_submission  # noqa: F401
from .workers import CALL_TIMEOUT, STARTUP_TIMEOUT, TASK_TIMEOUT, resolve_isolation

OUTPUT_TAIL = 2000  # characters of a crashed run's console output kept for the message
OUTPUT_SHOWN = 4000  # characters of what a task's code printed, shown after its result


# ---- the pytest run ----------------------------------------------------------------------------------
def _env() -> dict:
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg",
               PYTHONIOENCODING="utf-8", PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _run(cmd: list, cwd: Path, timeout: float, log: Path) -> int | None:
    """Run ``cmd`` with its output to ``log``; kill its whole process group at ``timeout``.
    Returns the exit code, or None if it was killed."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=_env(), start_new_session=True)
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


def _output(data: dict, marker: str, tests: list) -> str:
    """What the task's code printed: at import, then test by test (public problems only)."""
    parts = []
    imported = (data.get("import_output") or {}).get(marker)
    if imported:
        parts.append(f"[while your file was imported]\n{imported.rstrip()}")
    for t in tests:
        if t.get("output"):
            parts.append(f"[{t['name']}]\n{t['output'].rstrip()}")
    text = printable("\n".join(parts))
    return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + "\n[... more output cut]"


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
                 "forbidden": False, "notes": [], "seconds": 0.0, "secret": c.get("secret", False),
                 "check": c.get("check", c["name"]), "problems": c.get("problems")}
        tests.append(t)
    result.tests = tests
    checks: dict = {}  # a check is one test function: passed when it passed on every problem it was given
    for t in tests:
        checks.setdefault(t.get("check", t["name"]), []).append(t["outcome"] == "passed")
    result.total = len(checks)
    result.passed = sum(all(ok) for ok in checks.values())
    result.seconds = round(sum(t.get("seconds", 0.0) for t in tests), 2)
    result.output = _output(data, marker, tests)
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


def _nothing_graded(hw: Homework, chosen, shown: str, message: str, status: str, isolation=None) -> GradeResult:
    tasks = [TaskResult(t, hw.label(t), 0.0, t.points, status, message=message) for t in chosen]
    return GradeResult(hw, shown, tasks, isolation, None, message)


def secret_file(folder: Path | None) -> Path | None:
    """The instructor folder's ``secret.json`` (beside the homework folders), or None."""
    if folder is None:
        return None
    path = folder.parent / SECRET_FILE
    return path if path.is_file() else None


def grade(homework="hw08", submission=None, *, tasks=None, instructor=None, reference: bool = False,
          task_timeout: float = TASK_TIMEOUT, test_timeout: float = CALL_TIMEOUT,
          probe_timeout: float = STARTUP_TIMEOUT, isolation: str = "auto", seed: int | None = None,
          folder=None) -> GradeResult:
    """Grade ``submission`` (a path), or with ``reference=True`` the instructor's reference solution.

    Parameters
    ----------
    homework : str
        ``"hw08"`` (or ``"hw8"``).
    submission : path
        A regular ``.py`` file (not a link) inside ``folder``.
    tasks : iterable of int or str, optional
        Task numbers (``1``) or labels (``"8.1"``) to grade (default: all).  Tasks left out
        are not in the result.
    instructor : path, optional
        The folder holding each homework's instructor files (``<instructor>/hw08/``) and the
        course's ``secret.json``; default ``$MINITF_INSTRUCTOR``.  Without it, tasks that need
        it are not graded and only the public problems are drawn.
    task_timeout, test_timeout, probe_timeout : float
        Seconds allowed for all of a task's calls into the student's code that finish, for
        one call, and for importing the file.  A call that times out fails its test; after
        three of them a task's remaining tests are not run.
    isolation : "auto", "bwrap" or "process"
        The student's process inside bubblewrap (``"auto"``: where it is installed), or
        an ordinary process (:mod:`minitf.grading.workers`).  With the instructor files,
        ``"auto"`` insists on bubblewrap: only ``isolation="process"``, asked for by name,
        runs hidden tests without it (an ordinary process is not a boundary).
    seed : int, optional
        The public seed of the test problems (default :data:`~.problems.PUBLIC_SEED`).
    folder : path, optional
        The submission's folder: ``submission`` must resolve inside it (default: its own folder).

    Raises
    ------
    RuntimeError
        When the grader's own test run fails (it never runs the student's code, so this is
        a broken installation, not a bad submission), or bubblewrap is needed and missing.

    Returns
    -------
    GradeResult
    """
    run = _prepare(homework, tasks, instructor, task_timeout, test_timeout, probe_timeout, isolation, seed)
    if reference:
        if submission is not None:
            raise ValueError("give a submission or reference=True, not both")
        if run.base is None or not (run.base / "reference.py").is_file():
            raise FileNotFoundError(f"the reference solution is instructor material: give the instructor folder "
                                    f"(--instructor DIR or ${INSTRUCTOR_ENV}) holding {run.hw.name}/reference.py")
        submission = run.base / "reference.py"
    if submission is None:
        raise ValueError("submission: expected a Python file")
    shown = "reference solution" if reference else str(submission)
    return run.grade([(shown, submission, folder)])[0]


def grade_many(homework, submissions, *, folder=None, tasks=None, instructor=None,
               task_timeout: float = TASK_TIMEOUT, test_timeout: float = CALL_TIMEOUT,
               probe_timeout: float = STARTUP_TIMEOUT, isolation: str = "auto", seed: int | None = None) -> list:
    """Grade each of ``submissions`` (paths) as :func:`grade` would, in one test run: a
    :class:`GradeResult` each, in order (a refused file scores 0 with its reason).  Each file is
    graded on its own -- its own processes, its own report -- and gets the results it gets
    alone; a folder of them costs one start of pytest instead of one per file."""
    run = _prepare(homework, tasks, instructor, task_timeout, test_timeout, probe_timeout, isolation, seed)
    return run.grade([(str(p), p, folder) for p in submissions])


def _prepare(homework, tasks, instructor, task_timeout, test_timeout, probe_timeout, isolation, seed) -> "_Run":
    """The options of a grading, checked once (see :func:`grade`)."""
    hw = get_homework(homework)
    if importlib.util.find_spec("pytest") is None:  # pytest is a dependency of minitf; this is for broken installs
        raise RuntimeError("grading runs the homework's tests with pytest, which is not installed: pip install pytest")
    chosen = hw.tasks if tasks is None else tuple(hw.task(k) for k in tasks)
    for name, value in (("task_timeout", task_timeout), ("test_timeout", test_timeout),
                        ("probe_timeout", probe_timeout)):
        check_number(name, value, 0, None, low_open=True, hint="seconds")
    base = hw.instructor_dir(instructor)
    if instructor is not None and base is None:
        raise FileNotFoundError(f"instructor: expected a folder holding {hw.name}/, got {str(instructor)!r}")
    hidden = base / "tests.py" if base is not None and (base / "tests.py").is_file() else None
    secret = secret_file(base)
    if base is not None and secret is None:
        raise FileNotFoundError(f"instructor: {base.parent} holds no {SECRET_FILE}, the seed of the secret problems "
                                f"(`minitf homework secret --instructor {base.parent}` writes one, once per course)")
    isolation = resolve_isolation(isolation, needs_boundary=hidden is not None)
    seed = None if seed is None else check_int("seed", seed, low=0)
    return _Run(hw, chosen, base, hidden, secret, instructor, isolation, seed, task_timeout, test_timeout,
                probe_timeout)


@dataclass
class _Run:
    """The grading of one or more submissions of a homework with the same options: the files read
    and checked one by one, then every file that can run graded by one pytest process (the
    plugin's ``--homework-batch``: one start of pytest for a folder of submissions)."""

    hw: Homework
    chosen: tuple
    base: Path | None
    hidden: Path | None
    secret: Path | None
    instructor: object
    isolation: str
    seed: int | None
    task_timeout: float
    test_timeout: float
    probe_timeout: float

    def grade(self, entries) -> list:
        """``entries``: ``(shown, path, folder)`` -> a GradeResult each, in order."""
        hw, chosen = self.hw, self.chosen
        out: list = [None] * len(entries)
        runnable = []
        for k, (shown, path, folder) in enumerate(entries):
            try:
                data = read_submission(path, folder)
            except SubmissionRefused as e:
                out[k] = _nothing_graded(hw, chosen, shown, f"not graded: {e}", "refused", self.isolation)
                continue
            problem = check_source(data, shown)
            if problem is not None:
                out[k] = _nothing_graded(hw, chosen, shown, problem, "error", self.isolation)
                continue
            runnable.append((k, shown, data))
        graded = [t for t in chosen if self.hidden is not None or not t.autograder_only]
        reports = self._run_tests(graded, [data for _, _, data in runnable]) if graded and runnable else None
        for n, (k, shown, _) in enumerate(runnable):
            results = {}
            if reports is not None:
                report_data, code, why = reports[n]
                for t in graded:
                    results[t.number] = _task_result(hw, t, report_data, code, why)
            tasks = [results.get(t.number) or TaskResult(t, hw.label(t), 0.0, t.points, "autograder only")
                     for t in chosen]
            out[k] = GradeResult(hw, shown, tasks, self.isolation, self.seed)
        return out

    def _run_tests(self, graded, files: list) -> list:
        """One pytest process over ``files`` (each a submission's bytes): ``[(report, exit code, why)]``."""
        hw = self.hw
        with tempfile.TemporaryDirectory(prefix=f"minitf-grade-{hw.name}-") as tmp:
            workdir = Path(tmp)
            entries = []
            for n, data in enumerate(files):
                copy = workdir / f"submission-{n}" / hw.filename  # the bytes read once: all that is graded
                copy.parent.mkdir()
                copy.write_bytes(data)
                entries.append({"submission": str(copy), "report": str(workdir / f"report-{n}.json")})
            (workdir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
            batch, log = workdir / "batch.json", workdir / "pytest.log"
            batch.write_text(json.dumps(entries), encoding="utf-8")
            tests = [str(f) for f in hw.test_files] + ([str(self.hidden)] if self.hidden is not None else [])
            cmd = [sys.executable, "-m", "pytest", *tests, "-c", str(workdir / "pytest.ini"), "--rootdir",
                   str(workdir), "-p", "minitf.grading.plugin", "-p", "no:cacheprovider", "-q",
                   "-m", " or ".join(hw.marker(t) for t in graded), "--homework-batch", str(batch),
                   "--homework-call-timeout", f"{self.test_timeout:g}",
                   "--homework-task-timeout", f"{self.task_timeout:g}",
                   "--homework-startup-timeout", f"{self.probe_timeout:g}", "--homework-isolation", self.isolation]
            if self.seed is not None:
                cmd += ["--homework-seed", str(self.seed)]
            if self.secret is not None:
                cmd += ["--homework-secret", str(self.secret)]
            base = self.base.parent if self.base is not None else None
            for path in {p for p in (base, self.instructor) if p is not None}:
                cmd += ["--homework-hide", str(Path(path).resolve())]  # out of the student's sight
            limit = len(files) * len(graded) * (self.task_timeout + 3 * self.test_timeout + self.probe_timeout) + 120
            code = _run(cmd, workdir, limit, log)
            out = []
            for entry in entries:
                report_data = _read_json(Path(entry["report"]))
                if code is None or report_data is None or not report_data.get("collected"):
                    # the student's code never runs in that process: a run without a report is the grader's failure
                    how = f"killed after {limit:g} s" if code is None else f"exit code {code}"
                    raise RuntimeError(f"the grader's own test run failed ({how}), so nothing was graded; its last "
                                       f"output:\n{_tail(log)}")
                out.append((report_data, code, f"the grader's test run ended before this test finished (exit code "
                                                f"{code})"))
            return out


def submissions_in(folder) -> list[Path]:
    """The files of a folder of submissions, one per student, sorted by name (hidden files and
    sub-folders left out; links and other non-files kept, to be refused by name)."""
    folder = Path(folder)
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and not (p.is_dir() and
                                                                                      not p.is_symlink()))


def grade_folder(homework, folder, **kwargs) -> dict[str, GradeResult]:
    """Grade every submission in ``folder`` (:func:`submissions_in`): ``{student: result}``, the
    student being the file's name without its suffix.  Each file is graded as by :func:`grade`
    (``kwargs``), a refused one scoring 0 with the reason."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"expected a folder of submissions, got {str(folder)!r}")
    students, paths = [], submissions_in(folder)
    for path in paths:
        student = path.name[: -len(path.suffix)] if path.suffix else path.name
        students.append(path.name if student in students else student)
    return dict(zip(students, grade_many(homework, paths, folder=folder, **kwargs)))
