"""The pytest plugin behind homework grading (registered as a ``pytest11`` entry point).

Options
-------
``--submission PATH``
    The student's file the homework tests check.  Required: without it the homework
    tests refuse to run (``minitf grade hwNN FILE`` is the easy way to run them).
``--homework-report FILE``
    Write every test's outcome as JSON (rewritten after each test, so a run that is
    killed still leaves what it had).  The grader reads this file, never the console.
``--homework-call-timeout SECONDS`` / ``--homework-task-timeout SECONDS`` /
``--homework-startup-timeout SECONDS``
    Time limits on the student's process: one call, all of a task's calls, and
    starting up (importing the file).
``--homework-isolation auto|bwrap|process``, ``--homework-hide PATH`` (repeatable)
    How the student's process is isolated (:mod:`minitf.grading.workers`), and what it
    must not see (the instructor folder).
``--homework-seed N``
    The seed of the test problems (the ``homework_seed`` fixture).  ``minitf grade`` draws a
    fresh one per run, so the answers cannot be recorded beforehand and replayed.

It registers the task markers (``pytest -m hw08_task3`` runs one task) and provides the
``submission`` fixture: the student's file as seen by the requesting test's task, whose
functions run in the student's own process (:mod:`minitf.grading.workers`).

The module imports nothing heavy: pytest loads it at start-up in every run.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from . import get_homework, homeworks

REPORT_VERSION = 2


def pytest_addoption(parser):
    group = parser.getgroup("minitf-homework", "minitf homework grading")
    group.addoption("--submission", metavar="PATH", default=None, help="the student's homework file to test")
    group.addoption("--homework-report", metavar="FILE", default=None,
                    help="write each homework test's outcome to FILE as JSON")
    group.addoption("--homework-call-timeout", metavar="SECONDS", type=float, default=None,
                    help="time limit for one call into the student's code")
    group.addoption("--homework-task-timeout", metavar="SECONDS", type=float, default=None,
                    help="time limit for all of a task's calls into the student's code")
    group.addoption("--homework-startup-timeout", metavar="SECONDS", type=float, default=None,
                    help="time limit for starting the student's process and importing the file")
    group.addoption("--homework-isolation", default="auto", choices=("auto", "bwrap", "process"),
                    help="the student's process inside bubblewrap, or an ordinary process (default: auto)")
    group.addoption("--homework-hide", metavar="PATH", action="append", default=[],
                    help="a path the student's process must not see (repeatable)")
    group.addoption("--homework-seed", metavar="N", type=int, default=0,
                    help="the seed of the test problems (default: 0)")


def pytest_configure(config):
    for hw in homeworks().values():
        for task in hw.tasks:
            config.addinivalue_line("markers", f"{hw.marker(task)}: {hw.name} task {hw.label(task)}, {task.title}")
    path = config.getoption("submission")
    if path is not None and not Path(path).is_file():
        raise pytest.UsageError(f"--submission: expected a Python file, got {path!r} (no such file)")
    for name in ("homework_call_timeout", "homework_task_timeout", "homework_startup_timeout"):
        value = config.getoption(name)
        if value is not None and not value > 0:
            flag = "--" + name.replace("_", "-")
            raise pytest.UsageError(f"{flag}: expected a positive number of seconds, got {value}")
    config.stash[_STATE] = _State(config)
    report = config.getoption("homework_report")
    if report:
        config.pluginmanager.register(ReportWriter(report, path), "minitf-homework-report")


def pytest_unconfigure(config):
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def _homework_of(item):
    name = getattr(getattr(item, "module", None), "HOMEWORK", None)
    return get_homework(name) if name is not None else None


def _task_of(item, hw):
    for mark in item.iter_markers():
        task = hw.task_for_marker(mark.name)
        if task is not None:
            return task
    return None


def pytest_collection_modifyitems(session, config, items):
    if config.getoption("submission") is None and any(_homework_of(item) for item in items):
        raise pytest.UsageError(
            "the homework tests check a student's file: give it with --submission PATH "
            "(or run `minitf grade hwNN PATH`, which also prints a score table)")


# ---- the student's processes, one per task ------------------------------------------------------
class _State:
    def __init__(self, config):
        self.config = config
        self.workers: dict = {}
        self.findings: dict = {}
        self.isolation: str | None = None

    def worker(self, hw, task):
        from .workers import CALL_TIMEOUT, STARTUP_TIMEOUT, TASK_TIMEOUT, Worker, resolve_isolation

        key = (hw.name, task.number)
        if key not in self.workers:
            opt = self.config.getoption
            if self.isolation is None:
                self.isolation = resolve_isolation(opt("homework_isolation"))
            self.workers[key] = Worker(
                hw, task, Path(opt("submission")),
                startup_timeout=opt("homework_startup_timeout") or STARTUP_TIMEOUT,
                call_timeout=opt("homework_call_timeout") or CALL_TIMEOUT,
                task_timeout=opt("homework_task_timeout") or TASK_TIMEOUT,
                isolation=self.isolation, hidden=opt("homework_hide"))
        return self.workers[key]

    def done_with(self, hw, task) -> None:
        """A task's tests are over: stop its process (its memory and anything it left running)."""
        worker = self.workers.get((hw.name, task.number))
        if worker is not None:
            worker.stop()

    def scan(self, hw) -> dict:
        """The static scan's findings for ``hw``: ``{task number: [finding]}`` (once)."""
        from .submission import scan_source

        if hw.name not in self.findings:
            try:
                source = Path(self.config.getoption("submission")).read_text(encoding="utf-8")
                self.findings[hw.name] = scan_source(source, hw)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                self.findings[hw.name] = {}  # the student's process reports why it cannot import the file
        return self.findings[hw.name]

    def close(self):
        for worker in self.workers.values():
            worker.stop()
        self.workers.clear()


_STATE = pytest.StashKey[_State]()


class TaskSubmission:
    """A submission as seen by the tests of one task (the ``submission`` fixture)."""

    def __init__(self, worker, homework, task, findings):
        self.worker, self.homework, self.task, self.findings = worker, homework, task, findings

    @property
    def label(self) -> str:
        return f"Task {self.homework.label(self.task)}"

    def _check(self, name: str) -> dict:
        from .workers import ForbiddenCall, SubmissionError

        if self.findings:
            raise ForbiddenCall(f"{self.label} gets no credit: {'; '.join(self.findings)}. This task asks you to "
                                f"write that yourself, so its tests do not run.")
        info = self.worker.names().get(name)
        if info is None:
            raise SubmissionError(f"your file defines no {name!r} ({self.label}); keep the template's names")
        return info

    def value(self, name: str):
        """A piece of data the task asks for (e.g. ``ANSWERS``), as data."""
        self._check(name)
        return self.worker.request("value", name)["ok"]

    def function(self, name: str):
        """The student's function ``name``, called in the student's process."""
        from .workers import StudentFunction, SubmissionError

        info = self._check(name)
        if not info["callable"]:
            raise SubmissionError(f"{name} in your file is a {info['type']}, not a function ({self.label})")
        return StudentFunction(self.worker, name, info.get("parameters", []))

    def parameters(self, name: str) -> list:
        """The names of the parameters of the student's function ``name``."""
        return list(self._check(name).get("parameters", []))

    def run(self, runner: str, *args, **kwargs):
        """Run ``runner`` of the homework's ``runs`` module in the student's process, with
        ``Student("name")`` arguments standing for the student's functions; its result, as data."""
        from .workers import ForbiddenCall

        if self.findings:
            raise ForbiddenCall(f"{self.label} gets no credit: {'; '.join(self.findings)}. This task asks you to "
                                f"write that yourself, so its tests do not run.")
        return self.worker.request("run", runner, args, kwargs).get("ok")


@pytest.fixture(scope="session")
def homework_seed(request) -> int:
    """The seed of this run's test problems (``--homework-seed``)."""
    return request.config.getoption("homework_seed")


def pytest_runtest_teardown(item, nextitem):
    hw = _homework_of(item)
    if hw is None:
        return
    task = _task_of(item, hw)
    following = _task_of(nextitem, hw) if nextitem is not None and _homework_of(nextitem) == hw else None
    if task is not None and following is not task:
        state = item.config.stash.get(_STATE, None)
        if state is not None:
            state.done_with(hw, task)


@pytest.fixture
def submission(request):
    """The student's file as seen by the requesting test's task."""
    hw = _homework_of(request.node)
    if hw is None:
        raise pytest.UsageError(f"{request.module.__name__}: a homework test module must set HOMEWORK = 'hwNN'")
    task = _task_of(request.node, hw)
    if task is None:
        raise pytest.UsageError(f"{request.node.nodeid}: expected one of the markers "
                                f"{', '.join(hw.marker(t) for t in hw.tasks)}")
    state = request.config.stash[_STATE]
    return TaskSubmission(state.worker(hw, task), hw, task, state.scan(hw).get(task.number, []))


# ---- the JSON report --------------------------------------------------------------------------------
def failure_message(excinfo) -> str:
    """The first thing a student should read about a failure."""
    from .workers import ForbiddenCall, StudentRaised, SubmissionError, TimeLimitExceeded

    exc = excinfo.value
    if isinstance(exc, (pytest.fail.Exception, pytest.skip.Exception)):
        return str(exc.msg)
    if isinstance(exc, NotImplementedError):
        return str(exc).strip() or "not written yet: a function is still the template's stub"
    if isinstance(exc, (ForbiddenCall, SubmissionError, TimeLimitExceeded, StudentRaised)):
        return str(exc)
    if isinstance(exc, AssertionError):
        return str(exc).strip() or "assertion failed"
    return f"checking what your code returned failed: {type(exc).__name__}: {exc}"


class ReportWriter:
    """Collects each test's outcome and rewrites the JSON report after every test."""

    def __init__(self, path: str, submission: str | None):
        self.path = Path(path)
        self.data = {"version": REPORT_VERSION, "submission": submission, "collected": [], "tests": {},
                     "errors": [], "running": None, "finished": False, "exitstatus": None}
        self._started: dict[str, float] = {}

    def _write(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".report-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)

    @staticmethod
    def _task(item) -> str | None:
        hw = _homework_of(item)
        task = _task_of(item, hw) if hw else None
        return hw.marker(task) if task else None

    def pytest_collectreport(self, report):
        if report.failed:
            self.data["errors"].append(f"collecting {report.nodeid or 'the tests'} failed: "
                                       f"{str(report.longrepr)[-2000:]}")
            self._write()

    def pytest_collection_finish(self, session):
        ids = [item.nodeid for item in session.items]
        shared = sorted({i for i in ids if ids.count(i) > 1})
        if shared:  # results are recorded by test id: two tests of one name would share one result
            raise pytest.UsageError(f"homework tests must have distinct names across a homework's modules; "
                                    f"shared: {', '.join(shared)}")
        self.data["collected"] = [{"nodeid": item.nodeid, "name": item.name, "task": self._task(item)}
                                  for item in session.items]
        self._write()

    def pytest_runtest_logstart(self, nodeid, location):
        self.data["running"] = nodeid
        self._started[nodeid] = time.perf_counter()
        self._write()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        entry = self.data["tests"].setdefault(item.nodeid, {
            "nodeid": item.nodeid, "name": item.name, "task": self._task(item),
            "outcome": "passed", "message": "", "forbidden": False, "notes": [], "seconds": 0.0})
        if call.when == "call":
            entry["notes"] = [str(v) for k, v in item.user_properties if k == "note"]
        if report.failed and entry["outcome"] == "passed":
            from .workers import ForbiddenCall, TimeLimitExceeded

            entry["outcome"] = "failed" if call.when == "call" else "error"
            if call.excinfo is not None:
                entry["message"] = failure_message(call.excinfo)
                entry["forbidden"] = bool(call.excinfo.errisinstance(ForbiddenCall))
                entry["timeout"] = bool(call.excinfo.errisinstance(TimeLimitExceeded))
            else:
                entry["message"] = str(report.longrepr)[-2000:]
            entry["phase"] = call.when
        elif report.skipped and entry["outcome"] == "passed":
            entry["outcome"] = "skipped"
            entry["message"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""

    def pytest_runtest_logfinish(self, nodeid, location):
        self.data["running"] = None
        if nodeid in self.data["tests"]:
            self.data["tests"][nodeid]["seconds"] = round(time.perf_counter() - self._started.get(nodeid, 0.0), 3)
        self._write()

    def pytest_sessionfinish(self, session, exitstatus):
        state = session.config.stash.get(_STATE, None)
        self.data["isolation"] = state.isolation if state is not None else None
        self.data["finished"] = True
        self.data["exitstatus"] = int(exitstatus)
        self._write()
