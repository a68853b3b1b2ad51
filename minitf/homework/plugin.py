"""The pytest plugin behind homework grading (registered as a ``pytest11`` entry point).

Options
-------
``--submission PATH``
    Point the homework tests at a student's file.  Without it they check the reference
    solution, so a plain run proves the reference passes.
``--homework-report FILE``
    Write every test's outcome as JSON (rewritten after each test, so a run that is killed
    still leaves what it had).  The grader reads this file, never the console output.
``--homework-test-timeout SECONDS``
    Fail a test that runs longer (setup and call separately), with a message; the rest of
    the run goes on.  Needs SIGALRM (POSIX, main thread).

It also registers the task markers (``hw08_task1`` ... ``hw08_task6``: ``pytest -m
hw08_task3`` runs one task) and provides the ``submission`` fixture.

Run a homework's tests by hand with
``pytest --pyargs minitf.homework.hw08_tests [--submission FILE] [-m hw08_task3]``.

The module imports nothing heavy: pytest loads it at start-up in every run.
"""
from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from . import HOMEWORKS, get_homework

REPORT_VERSION = 1


def pytest_addoption(parser):
    group = parser.getgroup("minitf-homework", "minitf homework grading")
    group.addoption("--submission", metavar="PATH", default=None,
                    help="the student's homework file to test (default: the reference solution)")
    group.addoption("--homework-report", metavar="FILE", default=None,
                    help="write each homework test's outcome to FILE as JSON")
    group.addoption("--homework-test-timeout", metavar="SECONDS", type=float, default=None,
                    help="fail a homework test whose setup or call runs longer than this")


def pytest_configure(config):
    for hw in HOMEWORKS.values():
        for task in hw.tasks:
            config.addinivalue_line("markers", f"{hw.marker(task)}: {hw.name} task {hw.label(task)}, {task.title}")
    path = config.getoption("submission")
    if path is not None and not Path(path).is_file():
        raise pytest.UsageError(f"--submission: expected a Python file, got {path!r} (no such file)")
    report = config.getoption("homework_report")
    if report:
        config.pluginmanager.register(ReportWriter(report, path), "minitf-homework-report")
    limit = config.getoption("homework_test_timeout")
    if limit is not None:
        if limit <= 0:
            raise pytest.UsageError(f"--homework-test-timeout: expected a positive number of seconds, got {limit}")
        config.pluginmanager.register(TimeLimit(limit), "minitf-homework-time-limit")


# ---- the fixture -------------------------------------------------------------------------------
def _task_of(item, hw):
    for mark in item.iter_markers():
        task = hw.task_for_marker(mark.name)
        if task is not None:
            return task
    return None


@pytest.fixture
def submission(request):
    """The submission (or the reference solution) as seen by the requesting test's task.

    The test module names its homework in ``HOMEWORK = "hw08"``; the test carries its
    task's marker.
    """
    from .submission import TaskSubmission, load

    name = getattr(request.module, "HOMEWORK", None)
    if name is None:
        raise pytest.UsageError(f"{request.module.__name__}: a homework test module must set HOMEWORK = 'hwNN'")
    hw = get_homework(name)
    task = _task_of(request.node, hw)
    if task is None:
        raise pytest.UsageError(f"{request.node.nodeid}: expected one of the markers "
                                f"{', '.join(hw.marker(t) for t in hw.tasks)}")
    return TaskSubmission(load(hw, request.config.getoption("submission")), task)


# ---- time limit per test ---------------------------------------------------------------------------
class TimeLimit:
    """Raise :class:`~minitf.homework.submission.TimeLimitExceeded` in a test that runs too long."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def _alarm(self, signum, frame):
        from .submission import TimeLimitExceeded

        raise TimeLimitExceeded(f"the test did not finish within its time limit of {self.seconds:g} s: "
                                "is there an endless loop (e.g. a decoding loop that never stops)?")

    def _run(self):
        if not self.usable:
            yield
            return
        previous = signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._run()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._run()


# ---- the JSON report --------------------------------------------------------------------------------
def failure_message(excinfo, submission_path: str | None) -> str:
    """The first thing a student should read about a failure."""
    from .submission import describe_exception

    exc = excinfo.value
    if isinstance(exc, pytest.fail.Exception):
        return str(exc.msg)
    if isinstance(exc, pytest.skip.Exception):
        return str(exc.msg)
    if excinfo.errisinstance(NotImplementedError):
        return str(exc).strip() or "not written yet: a function is still the template's stub"
    from .submission import ForbiddenCall, SubmissionError, TimeLimitExceeded

    if isinstance(exc, (ForbiddenCall, SubmissionError, TimeLimitExceeded)):
        return str(exc)
    if isinstance(exc, AssertionError):
        return str(exc).strip() or "assertion failed"
    path = Path(submission_path).resolve() if submission_path else None
    return "your code raised " + describe_exception(exc, path)


class ReportWriter:
    """Collects each test's outcome and rewrites the JSON report after every test."""

    def __init__(self, path: str, submission: str | None):
        self.path = Path(path)
        self.submission = submission
        self.data = {"version": REPORT_VERSION, "submission": submission, "collected": [], "tests": {},
                     "errors": [], "running": None, "finished": False, "exitstatus": None}
        self._started: dict[str, float] = {}

    def _write(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".report-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)

    def _submission_path(self, item) -> str | None:
        if self.submission:
            return self.submission
        name = getattr(getattr(item, "module", None), "HOMEWORK", None)
        return str(get_homework(name).reference_path) if name in HOMEWORKS else None

    @staticmethod
    def _task(item) -> str | None:
        name = getattr(getattr(item, "module", None), "HOMEWORK", None)
        if name not in HOMEWORKS:
            return None
        task = _task_of(item, HOMEWORKS[name])
        return HOMEWORKS[name].marker(task) if task else None

    def pytest_collectreport(self, report):
        if report.failed:
            self.data["errors"].append(f"collecting {report.nodeid or 'the tests'} failed: "
                                       f"{str(report.longrepr)[-2000:]}")
            self._write()

    def pytest_collection_finish(self, session):
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
            "outcome": "passed", "message": "", "forbidden": False, "seconds": 0.0})
        if report.failed and entry["outcome"] == "passed":
            entry["outcome"] = "failed" if call.when == "call" else "error"
            if call.excinfo is not None:
                from .submission import ForbiddenCall

                entry["message"] = failure_message(call.excinfo, self._submission_path(item))
                entry["forbidden"] = bool(call.excinfo.errisinstance(ForbiddenCall))
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
        self.data["finished"] = True
        self.data["exitstatus"] = int(exitstatus)
        self._write()
