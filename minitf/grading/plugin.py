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
    The public seed of the test problems (default :data:`~.problems.PUBLIC_SEED`).
``--homework-secret FILE``
    The instructor folder's ``secret.json``: every test that takes ``homework_seed`` runs on
    problems drawn from it too (:mod:`.problems`).  Read in this process only.
``--homework-batch FILE``
    Grade several submissions in this one process (instead of ``--submission`` and
    ``--homework-report``): FILE is a JSON list of ``{"submission": PATH, "report": FILE}``, and
    the collected tests run once for each, in order, each with processes of its own and its own
    report (:func:`pytest_runtestloop`).  The tests' state in this process is the same for every
    submission (what they compute is drawn from fixed seeds), so a file gets the results it gets
    alone; a folder of submissions costs one start of pytest, not one per file.

It registers the task markers (``pytest -m hw08_task3`` runs one task) and
provides two fixtures: ``submission``, the student's file as seen by
the requesting test's task, whose functions run in the student's own process
(:mod:`minitf.grading.workers`), and ``homework_seed``, the seed of the test's problems
(:class:`~.problems.ProblemSeed`: the public one, or for ``test_x[secret]`` the secret one).

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

REPORT_VERSION = 3


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
    group.addoption("--homework-seed", metavar="N", type=int, default=None,
                    help="the public seed of the test problems (default: 0)")
    group.addoption("--homework-secret", metavar="FILE", default=None,
                    help="the instructor's secret.json: the tests that take homework_seed run on its problems too")
    group.addoption("--homework-batch", metavar="FILE", default=None,
                    help="a JSON list of {submission, report}: grade each in turn, in this one process")


def pytest_configure(config):
    from .problems import load_secret

    for hw in homeworks(errors=[]).values():  # a lesson that does not import: graded elsewhere, or it says so
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
    secret = config.getoption("homework_secret")
    try:
        config.stash[_SECRET] = load_secret(secret) if secret else None
    except (OSError, ValueError) as e:
        raise pytest.UsageError(f"--homework-secret: {e}") from None
    config.stash[_STATE] = _State(config)
    batch = config.getoption("homework_batch")
    if batch:
        entries = json.loads(Path(batch).read_text(encoding="utf-8"))
        if not entries or any(not Path(e["submission"]).is_file() for e in entries):
            raise pytest.UsageError(f"--homework-batch: expected a list of existing submissions, got {batch!r}")
        config.stash[_BATCH] = entries
        path = entries[0]["submission"]
        config.stash[_STATE].submission = path
        config.pluginmanager.register(ReportWriter(entries[0]["report"], path), "minitf-homework-report")
        return
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
    if config.getoption("submission") is None and config.getoption("homework_batch") is None and \
            any(_homework_of(item) for item in items):
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
        self.submission = config.getoption("submission")  # the file graded now (in a batch: in turn)

    def start(self, submission: str) -> None:
        """Grade ``submission`` next (a batch): no process, no finding of the one before is kept."""
        self.close()
        self.findings.clear()
        self.submission = submission

    def worker(self, hw, task):
        from .workers import CALL_TIMEOUT, STARTUP_TIMEOUT, TASK_TIMEOUT, Worker, resolve_isolation

        key = (hw.name, task.number)
        if key not in self.workers:
            opt = self.config.getoption
            if self.isolation is None:
                self.isolation = resolve_isolation(opt("homework_isolation"))
            self.workers[key] = Worker(
                hw, task, Path(self.submission),
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
                source = Path(self.submission).read_text(encoding="utf-8")
                self.findings[hw.name] = scan_source(source, hw)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                self.findings[hw.name] = {}  # the student's process reports why it cannot import the file
        return self.findings[hw.name]

    def close(self):
        for worker in self.workers.values():
            worker.stop()
        self.workers.clear()


_STATE = pytest.StashKey[_State]()
_SECRET = pytest.StashKey[object]()
_BATCH = pytest.StashKey[list]()


def current_submission(config) -> str | None:
    """The path of the file being graded now (``--submission``, or in a batch the one in turn)."""
    state = config.stash.get(_STATE, None)
    return state.submission if state is not None else config.getoption("submission")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """With ``--homework-batch``: the collected tests once per submission, each with its own report."""
    entries = session.config.stash.get(_BATCH, None)
    if not entries or session.config.option.collectonly:
        return None
    state = session.config.stash[_STATE]
    writer = session.config.pluginmanager.get_plugin("minitf-homework-report")
    items = session.items
    for k, entry in enumerate(entries):
        state.start(entry["submission"])
        if k:
            writer.restart(entry["report"], entry["submission"])
            for item in items:  # a test function run again: fresh fixtures (as pytest-rerunfailures does), no
                item._initrequest()  # property of the submission before
                item.user_properties.clear()
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        state.close()
        writer.finish(session)
    return True


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
        """Run ``runner`` of the homework's ``runs`` module, here in the grader's process, with
        each ``Student("name")`` argument standing for the student's function (a proxy: the
        calls run in the student's process, arguments and results cross by value)."""
        import importlib

        from .wire import Student

        if self.findings:
            from .workers import ForbiddenCall

            raise ForbiddenCall(f"{self.label} gets no credit: {'; '.join(self.findings)}. This task asks you to "
                                f"write that yourself, so its tests do not run.")

        def resolve(value):
            if isinstance(value, Student):
                return self.function(value.name)
            if type(value) in (list, tuple):
                return type(value)(resolve(v) for v in value)
            if type(value) is dict:
                return {k: resolve(v) for k, v in value.items()}
            return value

        runs = importlib.import_module(self.homework.runs_module)
        return getattr(runs, runner)(*resolve(args), **resolve(kwargs))


def pytest_generate_tests(metafunc):
    """A test that draws its problems from ``homework_seed`` runs on the public problems and,
    where the secret seed is known (``--homework-secret``), on the secret ones:
    ``test_x[public]``, ``test_x[secret]``."""
    if "homework_seed" not in metafunc.fixturenames or "submission" not in metafunc.fixturenames:
        return
    kinds = ["public"] + (["secret"] if metafunc.config.stash.get(_SECRET, None) is not None else [])
    metafunc.parametrize("homework_seed", kinds, indirect=True, ids=kinds)


@pytest.fixture
def homework_seed(request):
    """The seed of this test's problems: a :class:`~minitf.grading.problems.ProblemSeed`, the
    public one (``--homework-seed``) or, for ``test_x[secret]``, the homework's secret one."""
    from .problems import PUBLIC_SEED, ProblemSeed, homework_secret

    public = request.config.getoption("homework_seed")
    public = PUBLIC_SEED if public is None else public
    if getattr(request, "param", "public") == "secret":
        hw = _homework_of(request.node)
        return ProblemSeed(homework_secret(request.config.stash[_SECRET], hw.name if hw else "", public), secret=True)
    return ProblemSeed(public)


def is_secret(item) -> bool:
    """The test runs on a secret problem (``test_x[secret]``)."""
    return problems_of(item) == "secret"


def problems_of(item) -> str | None:
    """``"public"`` or ``"secret"`` for a test parametrized over its problems, else None."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("homework_seed") if callspec is not None else None


def check_of(item) -> str:
    """The check a test run belongs to: its name without the problems' id (``test_x[public-3]``
    and ``test_x[secret-3]`` are the one check ``test_x[3]``).  A check passes when every one of
    its runs passes."""
    kind = problems_of(item)
    if kind is None:
        return item.name
    ids = item.callspec.id.split("-")
    ids.remove(kind)
    return item.originalname + (f"[{'-'.join(ids)}]" if ids else "")


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
                     "errors": [], "running": None, "finished": False, "exitstatus": None, "import_output": {}}
        self._started: dict[str, float] = {}

    def restart(self, path: str, submission: str) -> None:
        """The next submission of a batch: a report of its own, the same tests collected."""
        self.path = Path(path)
        self.data = dict(self.data, submission=submission, tests={}, running=None, finished=False, exitstatus=None,
                         import_output={})
        self._started = {}
        self._write()

    def finish(self, session) -> None:
        """One submission of a batch is over: its report is complete."""
        state = session.config.stash.get(_STATE, None)
        self.data["isolation"] = state.isolation if state is not None else None
        self.data["finished"] = True
        self.data["exitstatus"] = 0
        self._write()

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
        self.data["collected"] = [{"nodeid": item.nodeid, "name": item.name, "task": self._task(item),
                                   "secret": is_secret(item), "check": check_of(item), "problems": problems_of(item)}
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
        secret = is_secret(item)
        entry = self.data["tests"].setdefault(item.nodeid, {
            "nodeid": item.nodeid, "name": item.name, "task": self._task(item), "secret": secret,
            "check": check_of(item), "problems": problems_of(item),
            "outcome": "passed", "message": "", "forbidden": False, "notes": [], "seconds": 0.0, "output": ""})
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
        if call.when == "teardown":  # the test is over: what the student's code printed during it
            self._collect_output(item, entry, secret)

    def _collect_output(self, item, entry: dict, secret: bool) -> None:
        from .problems import secret_message

        if secret:
            # nothing of a secret problem reaches the student: no numbers, no printed inputs
            entry["message"] = secret_message(entry["message"]) if entry["outcome"] != "passed" else ""
            entry["notes"] = []
        state = item.config.stash.get(_STATE, None)
        hw = _homework_of(item)
        task = _task_of(item, hw) if hw else None
        worker = state.workers.get((hw.name, task.number)) if state is not None and task is not None else None
        if worker is None:
            return
        entry["offered"] = sorted(worker.offered)  # the minitf methods the task's code could call, so far
        printed = worker.take_output()
        if printed:
            entry["output"] = "(not shown: printed during a secret problem)" if secret else "".join(printed)
        marker = hw.marker(task)
        if worker.import_output and marker not in self.data["import_output"]:
            self.data["import_output"][marker] = worker.import_output

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
