"""The grader's side of a student's process: start it, call into it with a time limit,
read back data, stop it.  See :mod:`minitf.grading.sandbox` for the other side.

A :class:`Worker` serves one task of one submission.  Calls go through
:class:`StudentFunction` proxies, so a test reads as if it called the student's function
directly (``out = shift_right(labels, 1, 0)``), while the call runs in the student's
process.  The arrays of the arguments come back as the call left them
(``StudentFunction.returned_args``), so a test can check that a function left its inputs
alone; nothing the student's process sends is copied into the grader's own objects.

**Isolation.**  Where bubblewrap (``bwrap``, Debian's ``bubblewrap``) is installed, the
student's process runs inside it and sees only the system's ``/usr``, ``/bin`` and ``/lib``
and the Python installation, read-only, an empty ``/tmp`` with its own work folder, every
hidden path replaced by an empty folder -- nothing else of the machine: no home folder, no
repository and its ``.git``, no course bundle -- minitf's source hidden (the
process imports minitf from a copy in its own folder and deletes the copy before it imports
the submission), no network, its own process namespace, no capabilities, and nothing left
running when it is stopped.  Without bubblewrap it is an ordinary process with the limits
and the audit hook of :mod:`.sandbox`: enough to check one's own work, not a boundary.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path


from .wire import MAX_FRAME, Student, WireError, pack, unpack, write_frame

MEMORY_BYTES = 4 << 30  # the student's process: 4 GiB of address space
STARTUP_TIMEOUT = 30.0  # seconds to start and import the submission
CALL_TIMEOUT = 60.0  # seconds for one call
TASK_TIMEOUT = 120.0  # seconds of calls for one task in all


class SubmissionError(Exception):
    """The submission cannot be checked: it failed to import, lacks a name, or its process died."""


class ForbiddenCall(Exception):
    """The submission used minitf's own implementation of what the task asks it to write."""


class TimeLimitExceeded(BaseException):
    """A call into the submission ran past its time limit."""


class StudentRaised(Exception):
    """The student's code raised an exception; ``str()`` is its description (type, message, line)."""

    def __init__(self, kind: str, message: str, described: str):
        super().__init__(described)
        self.kind, self.message = kind, message


def _env() -> dict:
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", PYTHONNOUSERSITE="1", PYTHONIOENCODING="utf-8",
               MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


ISOLATIONS = ("auto", "bwrap", "process")


def resolve_isolation(isolation: str, needs_boundary: bool = False) -> str:
    """``"auto"`` -> ``"bwrap"`` where bubblewrap is installed and works here, else ``"process"``;
    with ``needs_boundary`` (hidden tests, an answer key) ``"auto"`` insists on bubblewrap."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation: expected one of {', '.join(map(repr, ISOLATIONS))}, got {isolation!r}")
    if isolation == "process":
        return isolation
    works = shutil.which("bwrap") is not None and subprocess.run(
        [*_BWRAP, "--", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0
    if not works and (isolation == "bwrap" or needs_boundary):
        why = " (the instructor files need it)" if needs_boundary and isolation == "auto" else ""
        raise RuntimeError(f"isolation: bubblewrap (bwrap) is not installed or cannot run here{why}: apt-get "
                           f"install bubblewrap, or ask for isolation 'process' by name, knowing that an ordinary "
                           f"process is no boundary against a hostile submission")
    return "bwrap" if works else "process"


_BWRAP = ("bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL",
          # the system's programs and libraries, read-only, and nothing else of the machine: no home
          # folders, no repository (its .git holds every committed file), no course bundle
          "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/bin", "/bin", "--ro-bind-try", "/lib", "/lib",
          "--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
          "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
"""bubblewrap's mounts: the student's process sees /usr, /bin, /lib (read-only), an empty /tmp,
and (added per worker) the Python installation and its own work folder."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _python_paths() -> list[str]:
    """The folders of this Python installation and its virtual environment, outermost first."""
    paths = sysconfig.get_paths()
    found = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                                           paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"])
             if p and os.path.isdir(p)}
    return sorted(p for p in found if not any(q != p and _inside(p, q) for q in found))


def bwrap_command(work: str, hidden=()) -> list[str]:
    """The bubblewrap command line a student's process runs under (the program follows it):
    :data:`_BWRAP`'s mounts, the Python installation (the interpreter, the standard library, the
    virtual environment's packages) read-only wherever it is (under /usr it is there already),
    each ``hidden`` path covered by an empty folder, and ``work`` writable, the current folder."""
    python = [p for path in _python_paths() if not _inside(path, "/usr") for p in ("--ro-bind", path, path)]
    hide = [p for path in hidden for p in ("--tmpfs", path)]
    return [*_BWRAP, *python, *hide, "--bind", work, work, "--chdir", work, "--"]


class Worker:
    """One student process for one task of one submission (started on first use, restarted
    after a crash or a time-out).

    ``isolation`` is ``"bwrap"`` or ``"process"`` (see the module docstring); ``hidden``
    lists the paths the student's process must not see (the instructor folder)."""

    def __init__(self, homework, task, submission: Path, *, startup_timeout: float = STARTUP_TIMEOUT,
                 call_timeout: float = CALL_TIMEOUT, task_timeout: float = TASK_TIMEOUT,
                 isolation: str = "process", hidden=()):
        self.homework, self.task, self.submission = homework, task, Path(submission)
        self.startup_timeout, self.call_timeout, self.task_timeout = startup_timeout, call_timeout, task_timeout
        self.isolation, self.hidden = isolation, [str(Path(h).resolve()) for h in hidden]
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None
        self.import_error: str | None = None
        self.busy_seconds = 0.0
        self._names: dict | None = None
        self._requests = 0

    # -- the process ------------------------------------------------------------------------------
    def _start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"minitf-{self.homework.name}-task{self.task.number}-"))
        student_file = self.dir / self.homework.filename
        shutil.copyfile(self.submission, student_file)
        r_child, self._w = os.pipe()
        self._r, w_child = os.pipe()
        config = {"homework": self.homework.name, "task": self.task.number, "submission": str(student_file),
                  "workdir": str(self.dir), "fd_in": r_child, "fd_out": w_child, "memory_bytes": MEMORY_BYTES,
                  "cpu_seconds": int(self.task_timeout + self.startup_timeout + 30)}
        env = _env()
        command = [sys.executable, "-m", "minitf.grading.sandbox"]
        if self.isolation == "bwrap":
            package = Path(__file__).resolve().parents[1]  # minitf/, hidden inside the sandbox
            copy = self.dir / "_minitf"
            shutil.copytree(package, copy / "minitf", ignore=shutil.ignore_patterns("__pycache__"))
            config["minitf_copy"] = str(copy)
            env["PYTHONPATH"] = str(copy)
            command = [*bwrap_command(str(self.dir), hidden=[str(package), *self.hidden]), *command]
        self.proc = subprocess.Popen([*command, json.dumps(config)],
                                     cwd=self.dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(r_child, w_child), start_new_session=True)
        os.close(r_child)
        os.close(w_child)
        try:
            ready = self._receive(self.startup_timeout, starting=True)
        except TimeLimitExceeded:
            self.stop()
            self.import_error = (f"importing your file did not finish within {self.startup_timeout:g} s: is there "
                                 f"an endless loop (or a long computation) at module level?")
            return
        except SubmissionError as e:
            self.import_error = str(e)
            return
        if not ready.get("ready"):
            self.import_error = ready.get("error") or "importing your file failed"
            self.stop()

    def stop(self) -> None:
        """Kill the process and everything in its session; remove its directory."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def _ensure(self) -> None:
        if self.import_error is not None:
            raise SubmissionError(f"your file could not be imported, so nothing in it can be checked: "
                                  f"{self.import_error}")
        if self.proc is None:
            self._start()
            if self.import_error is not None:
                self._ensure()

    # -- one exchange ---------------------------------------------------------------------------------
    def _read(self, n: int, deadline: float) -> bytes | None:
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeLimitExceeded()
            chunk = os.read(self._r, min(n - got, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _receive(self, timeout: float, starting: bool = False) -> dict:
        deadline = time.monotonic() + timeout
        head = self._read(8, deadline)
        payload = None
        if head is not None:
            (n,) = struct.unpack("<Q", head)
            if n > MAX_FRAME:
                self.stop()
                raise SubmissionError(f"your process sent a message of {n} bytes (at most {MAX_FRAME})")
            payload = self._read(n, deadline)
        if payload is None:  # the process is gone
            code = self.proc.wait()
            self.stop()
            what = "importing your file" if starting else "your code"
            raise SubmissionError(f"{what} ended the Python process (exit code {code})"
                                  + (": out of memory?" if code in (-9, 137) else ""))
        try:
            return unpack(payload, trusted=False)
        except WireError as e:
            self.stop()
            raise SubmissionError(f"your process sent something that is not a message: {e}") from None

    def request(self, op: str, name: str | None = None, args=(), kwargs=None) -> dict:
        """Send one request and return the reply (a dict), or raise what went wrong."""
        self._ensure()
        if self.busy_seconds >= self.task_timeout:
            raise TimeLimitExceeded(f"timed out: the task's calls into your code took more than "
                                    f"{self.task_timeout:g} s in all")
        self._requests += 1
        write_frame(self._w, pack({"op": op, "name": name, "args": tuple(args), "kwargs": dict(kwargs or {}),
                                   "id": self._requests}))
        limit = min(self.call_timeout, self.task_timeout - self.busy_seconds)
        t0 = time.monotonic()
        try:
            reply = self._receive(limit)
        except TimeLimitExceeded:
            self.stop()
            self.busy_seconds += limit
            which = (f"the call did not finish within its time limit of {self.call_timeout:g} s"
                     if limit == self.call_timeout else
                     f"the task's calls into your code took more than {self.task_timeout:g} s in all")
            raise TimeLimitExceeded(f"timed out: {which}: is there an endless loop (e.g. a decoding loop that never "
                                    f"stops)?") from None
        finally:
            self.busy_seconds += time.monotonic() - t0
        if not isinstance(reply, dict) or reply.get("id") != self._requests:
            self.stop()
            raise SubmissionError("your process answered out of turn (a message that is not the reply to the "
                                  "call): it is stopped")
        if reply.get("forbidden"):
            used = ", ".join(reply["forbidden"])
            raise ForbiddenCall(f"Task {self.homework.label(self.task)} gets no credit: your code called minitf's "
                                f"own {used}. This task asks you to write that yourself.")
        if "raised" in reply:
            r = reply["raised"]
            if r["type"] == "NotImplementedError":
                raise NotImplementedError(r["message"])
            raise StudentRaised(r["type"], r["message"], "your code raised " + r["described"])
        return reply

    def names(self) -> dict:
        """What the submission defines: ``{name: {"callable", "type", "parameters"}}``."""
        if self._names is None:
            self._names = self.request("names")["ok"]
        return self._names


# ---- proxies -----------------------------------------------------------------------------------------
class StudentFunction:
    """The student's function ``name``, called in the student's process.

    After a call, ``returned_args`` holds the positional arguments as the call left them
    (modules as None): a test compares them with what it sent to see whether the student's
    function changed its inputs in place."""

    def __init__(self, worker: Worker, name: str, parameters: list):
        self.worker, self.__name__, self.parameters = worker, name, parameters
        self.returned_args: list = []

    def __call__(self, *args, **kwargs):
        reply = self.worker.request("call", self.__name__, args, kwargs)
        self.returned_args = list(reply.get("args") or [])
        return reply.get("ok")

    def __repr__(self) -> str:
        return f"<student function {self.__name__}>"


__all__ = ["Worker", "StudentFunction", "Student", "SubmissionError", "ForbiddenCall", "TimeLimitExceeded",
           "StudentRaised", "ISOLATIONS", "resolve_isolation"]
