"""The grader's side of a student's process: start it, call into it with a time limit,
answer its callbacks, read back data and its output, stop it.  See :mod:`.sandbox` for
the other side.

A :class:`Worker` serves one task of one submission.  Calls go through
:class:`StudentFunction` proxies, so a test reads as if it called the student's function
directly (``out = shift_right(labels, 1, 0)``), while the call runs in the student's
process.  The arrays of the arguments come back as the call left them
(``StudentFunction.returned_args``), so a test can check that a function left its inputs
alone; nothing the student's process sends is copied into the grader's own objects.  A
minitf module passed to the student's function stays here (:mod:`.remote`).

**Isolation.**  Where bubblewrap (``bwrap``, Debian's ``bubblewrap``) is installed, the
student's process runs inside it, and the boundary is the file system: it sees an
allow-list (:func:`bwrap_command`) --

* the interpreter and its shared libraries, the system's shared-library folders (on Debian
  and Ubuntu ``/usr/lib/x86_64-linux-gnu`` and ``/usr/lib64``, not the rest of ``/usr/lib``),
  the standard library, every ``site-packages`` and ``dist-packages`` folder in them covered
  by an empty one;
* NumPy (and ``numpy.libs``), as ``/sandbox/lib``, and nothing else of any site-packages: no
  torch, scipy, sympy, mpmath or jax, no minitf;
* the two files of the server (``/sandbox/server``), its own work folder (``/sandbox/work``,
  the only writable place but an empty ``/tmp``), ``/dev``'s basic devices and its own ``/proc``;

-- nothing else of the machine: no home folder, no repository and its ``.git``, no instructor
folder or course bundle, no program to run.  No network, its own process namespace, no
capabilities, nothing left running when it is stopped.  Without bubblewrap it is an
ordinary process (``python -I -S``, the standard library and NumPy on its path) with the
limits and the guard of :mod:`.sandbox`: enough to check one's own work, not a boundary.
"""
from __future__ import annotations

import functools
import glob
import importlib.util
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
from dataclasses import dataclass
from pathlib import Path

from .wire import MAX_FRAME, WireError, pack, unpack, write_frame

MEMORY_BYTES = 4 << 30  # the student's process: 4 GiB of address space
STARTUP_TIMEOUT = 30.0  # seconds to start and import the submission
CALL_TIMEOUT = 60.0  # seconds for one call
TASK_TIMEOUT = 120.0  # seconds of finished calls for one task in all
MAX_TIMEOUTS = 3  # calls of one task that may time out before its remaining tests are not run
OUTPUT_PER_CALL = 2000  # characters of a call's printed output kept
SANDBOX = "/sandbox"  # inside bubblewrap: lib (NumPy), server (sandbox.py, wire.py), work (the task's folder)


class SubmissionError(Exception):
    """The submission cannot be checked: it failed to import, lacks a name, or its process died."""


class ForbiddenCall(Exception):
    """The submission used minitf's own implementation of what the task asks it to write."""


class TimeLimitExceeded(BaseException):
    """A call into the submission ran past its time limit."""


def exit_reason(code: int) -> str:
    """What the exit code of the student's process says, in words."""
    if code in (-9, 137):
        return f"exit code {code}: killed, most often for using more memory than its limit"
    if code < 0:
        return f"exit code {code}: stopped by a signal"
    if code == 120:
        return f"exit code {code}: Python could not flush its output as it ended (too much printed?)"
    return f"exit code {code}: the code called sys.exit or os._exit"


class StudentRaised(Exception):
    """The student's code raised an exception; ``str()`` is its description (type, message, line)."""

    def __init__(self, kind: str, message: str, described: str):
        super().__init__(described)
        self.kind, self.message = kind, message


def _env() -> dict:
    env = {k: os.environ[k] for k in ("LANG", "LC_ALL") if k in os.environ}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


# ---- what the student's process is made of --------------------------------------------------------------
def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Layout:
    """Where this machine keeps what the student's process may use."""

    python: str  # the interpreter itself (a virtual environment's python is a link to it)
    stdlib: tuple  # the standard library's entries of sys.path (``python -I -S``)
    numpy: tuple  # NumPy's folders: numpy/ and, for a wheel, numpy.libs/
    libraries: tuple  # shared libraries of the interpreter outside the system's folders (libpython)
    system: tuple  # ("dir", path, path): a shared-library folder, bound read-only; ("link", path, target)
    packages: tuple  # every site-packages / dist-packages folder inside what is bound: covered


SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/lib", "/lib64", "/lib32", "/libx32")


@functools.lru_cache(maxsize=None)
def layout() -> Layout:
    """This machine's :class:`Layout` (found once per process)."""
    python = os.path.realpath(sys.executable)
    probe = subprocess.run([python, "-I", "-S", "-c", "import sys, json; print(json.dumps(sys.path))"],
                           capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)
    stdlib = tuple(p for p in json.loads(probe.stdout) if p and os.path.exists(p))
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("grading needs NumPy installed for the student's code to use")
    numpy_dir = os.path.realpath(list(spec.submodule_search_locations)[0])
    numpy = (numpy_dir,) + tuple(p for p in (numpy_dir + ".libs",) if os.path.isdir(p))
    system = []
    multiarch = sysconfig.get_config_var("MULTIARCH")  # "x86_64-linux-gnu" on Debian and Ubuntu
    for p in SYSTEM_LIBRARIES:  # the top-level links (/lib -> usr/lib) as they are
        if os.path.islink(p):
            system.append(("link", p, os.readlink(p)))
    dirs = [f"/usr/lib/{multiarch}", f"/lib/{multiarch}", "/usr/lib64", "/lib64"] if multiarch else \
        ["/usr/lib64", "/usr/lib", "/lib64", "/lib"]  # the shared libraries' folders, not all of /usr/lib
    for p in dirs:
        real = os.path.realpath(p)  # /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu behind the /lib link
        if os.path.isdir(real) and all(d != real for _, d, _ in system):
            system.append(("dir", real, real))
    prefix = os.path.dirname(os.path.dirname(python))
    libraries = tuple(sorted({os.path.realpath(p) for p in glob.glob(os.path.join(prefix, "lib", "libpython*.so*"))
                              if not any(_inside(os.path.realpath(p), d) for _, d, _ in system if _ == "dir")}))
    bound = [p for kind, p, _ in system if kind == "dir"] + list(stdlib)
    candidates = set()
    for root in bound:
        for pattern in ("site-packages", "dist-packages", "python*/site-packages", "python*/dist-packages",
                        "python*/lib/site-packages", "local/lib/python*/*-packages"):
            candidates.update(glob.glob(os.path.join(root, pattern)))
    try:
        import site

        candidates.update(site.getsitepackages() + [site.getusersitepackages()])
    except Exception:  # a Python without site's helpers
        pass
    packages = tuple(sorted({os.path.realpath(c) for c in candidates if os.path.isdir(c)
                             and any(_inside(os.path.realpath(c), root) for root in bound)}))
    return Layout(python, stdlib, numpy, libraries, tuple(system), packages)


_BWRAP = ("bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL")


def bwrap_command(work: str, server: str, hidden=()) -> list[str]:
    """The bubblewrap command line a student's process runs under (the program follows it):
    the allow-list of the module docstring, ``server`` (a folder holding ``sandbox.py`` and
    ``wire.py``) read-only at ``/sandbox/server``, ``work`` writable at ``/sandbox/work``
    and the current folder, each ``hidden`` path that lies inside what is bound covered by an
    empty folder."""
    lay = layout()
    cmd = list(_BWRAP)
    for kind, path, target in lay.system:
        cmd += ["--symlink", target, path] if kind == "link" else ["--ro-bind", path, path]
    bound = [p for kind, p, _ in lay.system if kind == "dir"]
    for path in (*lay.stdlib, *lay.libraries, lay.python):
        if not any(_inside(path, b) for b in bound):
            cmd += ["--ro-bind", path, path]
            bound.append(path)
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in lay.packages:  # every site-packages folder that came with the above: empty
        cmd += ["--tmpfs", path]
    for path in hidden:
        path = os.path.realpath(path)
        if any(_inside(path, b) for b in bound):
            cmd += ["--tmpfs", path]
    for path in lay.numpy:
        cmd += ["--ro-bind", path, f"{SANDBOX}/lib/{os.path.basename(path)}"]
    cmd += ["--ro-bind", server, f"{SANDBOX}/server", "--bind", work, f"{SANDBOX}/work",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", f"{SANDBOX}/work", "--"]
    return cmd


ISOLATIONS = ("auto", "bwrap", "process")


@functools.lru_cache(maxsize=None)
def bwrap_works() -> bool:
    """bubblewrap is installed and can start a process here (a container may forbid it)."""
    if shutil.which("bwrap") is None:
        return False
    try:
        with tempfile.TemporaryDirectory(prefix="minitf-bwrap-probe-") as tmp:
            (Path(tmp) / "work").mkdir()
            (Path(tmp) / "server").mkdir()
            cmd = [*bwrap_command(str(Path(tmp) / "work"), str(Path(tmp) / "server")), layout().python, "-I", "-S",
                   "-c", "pass"]
            return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


NO_BWRAP = ("bubblewrap (bwrap) is not installed or cannot start a process here")


def resolve_isolation(isolation: str, needs_boundary: bool = False) -> str:
    """``"auto"`` -> ``"bwrap"`` where bubblewrap is installed and works here, else ``"process"``;
    with ``needs_boundary`` (hidden tests, an answer key) ``"auto"`` insists on bubblewrap."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation: expected one of {', '.join(map(repr, ISOLATIONS))}, got {isolation!r}")
    if isolation == "process":
        return isolation
    works = bwrap_works()
    if not works and (isolation == "bwrap" or needs_boundary):
        why = " (the instructor files need it)" if needs_boundary and isolation == "auto" else ""
        raise RuntimeError(f"isolation: {NO_BWRAP}{why}: apt-get install bubblewrap, or ask for isolation "
                           f"'process' by name, knowing that an ordinary process is no boundary against a hostile "
                           f"submission")
    return "bwrap" if works else "process"


def server_files(dest: Path) -> Path:
    """``dest`` holding the copies of ``sandbox.py`` and ``wire.py`` the student's process runs."""
    here = Path(__file__).resolve().parent
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("sandbox.py", "wire.py"):
        shutil.copyfile(here / name, dest / name)
    return dest


class Worker:
    """One student process for one task of one submission (started on first use, restarted
    after a crash or a time-out).

    ``isolation`` is ``"bwrap"`` or ``"process"`` (see the module docstring); ``hidden``
    lists paths the student's process must not see (the instructor folder), covered by an
    empty folder should they lie inside what it is shown.  ``forbidden`` (the task's) are
    the methods of remote objects not offered to the student's code."""

    def __init__(self, homework, task, submission: Path, *, startup_timeout: float = STARTUP_TIMEOUT,
                 call_timeout: float = CALL_TIMEOUT, task_timeout: float = TASK_TIMEOUT,
                 isolation: str = "process", hidden=()):
        self.homework, self.task, self.submission = homework, task, Path(submission)
        self.startup_timeout, self.call_timeout, self.task_timeout = startup_timeout, call_timeout, task_timeout
        self.isolation, self.hidden = isolation, [str(Path(h).resolve()) for h in hidden]
        self.proc: subprocess.Popen | None = None
        self.root: Path | None = None
        self.import_error: str | None = None
        self.busy_seconds = 0.0  # time of the calls that finished
        self.timeouts = 0  # calls that did not
        self.output: list[str] = []  # what the student's code printed, call by call, since last taken
        self.offered: set = set()  # the methods of minitf objects offered to the student's code (remote.Exports)
        self.import_output = ""
        self._names: dict | None = None
        self._requests = 0
        self._log_offset = 0

    # -- the process ------------------------------------------------------------------------------
    @property
    def workdir(self) -> Path:
        return self.root / "work"

    def _start(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"minitf-{self.homework.name}-task{self.task.number}-"))
        self.workdir.mkdir()
        server = server_files(self.root / "server")
        shutil.copyfile(self.submission, self.workdir / self.homework.filename)
        self._log_offset = 0
        r_child, self._w = os.pipe()
        self._r, w_child = os.pipe()
        lay = layout()
        if self.isolation == "bwrap":
            work, server_dir = f"{SANDBOX}/work", f"{SANDBOX}/server"
            lib = [f"{SANDBOX}/lib"]
            readable = [*lay.stdlib, f"{SANDBOX}/lib", server_dir]
        else:  # NumPy, alone, through links in a folder of its own: not the site-packages around it
            libdir = self.root / "lib"
            libdir.mkdir()
            for path in lay.numpy:
                os.symlink(path, libdir / os.path.basename(path))
            work, server_dir, lib = str(self.workdir), str(server), [str(libdir)]
            readable = [*lay.stdlib, *lay.numpy, str(libdir), str(server)]
        config = {"homework": self.homework.name, "task": self.task.number,
                  "submission": f"{work}/{self.homework.filename}", "workdir": work, "fd_in": r_child,
                  "fd_out": w_child, "memory_bytes": MEMORY_BYTES, "sys_path": [*lay.stdlib, *lib],
                  "readable": readable,
                  "cpu_seconds": int(self.task_timeout + MAX_TIMEOUTS * self.call_timeout + self.startup_timeout + 30)}
        command = [lay.python, "-I", "-S", f"{server_dir}/sandbox.py", json.dumps(config)]
        if self.isolation == "bwrap":
            command = [*bwrap_command(str(self.workdir), str(server), hidden=self.hidden), *command]
        self.proc = subprocess.Popen(command, cwd=self.workdir, env=_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     pass_fds=(r_child, w_child), start_new_session=True)
        os.close(r_child)
        os.close(w_child)
        try:
            ready = self._receive(self.startup_timeout, starting=True)
        except TimeLimitExceeded:
            self._keep_import_output()
            self.stop()
            self.import_error = (f"importing your file did not finish within {self.startup_timeout:g} s: is there "
                                 f"an endless loop (or a long computation) at module level?")
            return
        except SubmissionError as e:
            self.import_error = str(e)
            return
        self._keep_import_output()
        if not isinstance(ready, dict) or not ready.get("ready"):
            self.import_error = (ready.get("error") if isinstance(ready, dict) else None) or "importing your file failed"
            self.stop()

    def stop(self) -> None:
        """Kill the process and everything in its session; remove its folders."""
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
        if self.root is not None:
            self.output.append(self._new_output())  # what it printed before it stopped
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def _ensure(self) -> None:
        if self.import_error is not None:
            raise SubmissionError(f"your file could not be imported, so nothing in it can be checked: "
                                  f"{self.import_error}")
        if self.proc is None:
            self._start()
            if self.import_error is not None:
                self._ensure()

    # -- what it printed --------------------------------------------------------------------------------
    def _new_output(self) -> str:
        """What the process wrote to its log since the last look (at most OUTPUT_PER_CALL characters)."""
        if self.root is None:
            return ""
        try:
            with open(self.workdir / "output.log", "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < self._log_offset:  # the student's code truncated it
                    self._log_offset = 0
                f.seek(self._log_offset)
                data = f.read(min(size - self._log_offset, 4 * OUTPUT_PER_CALL))
                self._log_offset = size
        except OSError:
            return ""
        text = data.decode("utf-8", errors="replace")
        more = size - self._log_offset + len(data)
        if len(text) > OUTPUT_PER_CALL or more > len(data):
            text = text[:OUTPUT_PER_CALL] + "\n[... more output cut]"
        return text

    def _keep_import_output(self) -> None:
        printed = self._new_output()
        if printed and not self.import_output:  # printed while the file was imported (once: at the first start)
            self.import_output = printed

    def take_output(self) -> list[str]:
        """What the student's code printed in the calls since the last time this was asked."""
        out, self.output = [o for o in self.output if o], []
        return out

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

    def _receive(self, timeout: float, starting: bool = False, exports=None) -> dict:
        """The reply to the request in flight; callbacks the student's code makes meanwhile are
        answered from ``exports`` (:class:`minitf.grading.remote.Exports`)."""
        from .remote import NAMED_TUPLES

        deadline = time.monotonic() + timeout
        while True:
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
                raise SubmissionError(f"{what} ended the Python process ({exit_reason(code)})")
            try:
                message = unpack(payload, trusted=False, namedtuples=NAMED_TUPLES)
            except WireError as e:
                self.stop()
                raise SubmissionError(f"your process sent something that is not a message: {e}") from None
            if not (isinstance(message, dict) and "callback" in message):
                return message
            if exports is None:
                self.stop()
                raise SubmissionError("your process asked for a callback outside a call: it is stopped")
            reply = exports.run(message["callback"])
            try:
                payload = pack(reply, extend=lambda v: None)
            except WireError as e:
                payload = pack({"raised": f"the result cannot be sent to your code: {e}", "n": reply.get("n")})
            write_frame(self._w, payload)

    def request(self, op: str, name: str | None = None, args=(), kwargs=None) -> dict:
        """Send one request and return the reply (a dict), or raise what went wrong."""
        from .remote import Exports

        self._ensure()
        if self.timeouts >= MAX_TIMEOUTS:
            raise TimeLimitExceeded(f"timed out: {self.timeouts} calls of this task did not finish in time, so its "
                                    f"remaining checks were not run")
        if self.busy_seconds >= self.task_timeout:
            raise TimeLimitExceeded(f"timed out: the task's calls into your code took more than "
                                    f"{self.task_timeout:g} s in all")
        self._requests += 1
        exports = Exports(self.task.forbidden)
        write_frame(self._w, pack({"op": op, "name": name, "args": tuple(args), "kwargs": dict(kwargs or {}),
                                   "id": self._requests}, extend=exports.extend))
        self.offered |= exports.offered
        limit = min(self.call_timeout, self.task_timeout - self.busy_seconds)
        t0 = time.monotonic()
        try:
            reply = self._receive(limit, exports=exports)
        except TimeLimitExceeded:
            self.stop()
            self.timeouts += 1
            which = (f"the call did not finish within its time limit of {self.call_timeout:g} s"
                     if limit == self.call_timeout else
                     f"the task's calls into your code took more than {self.task_timeout:g} s in all")
            raise TimeLimitExceeded(f"timed out: {which}: is there an endless loop (e.g. a decoding loop that never "
                                    f"stops)?") from None
        self.busy_seconds += time.monotonic() - t0
        self.output.append(self._new_output())
        if not isinstance(reply, dict) or reply.get("id") != self._requests:
            self.stop()
            raise SubmissionError("your process answered out of turn (a message that is not the reply to the "
                                  "call): it is stopped")
        if "raised" in reply:
            r = reply["raised"]
            if not isinstance(r, dict):
                raise SubmissionError("your process sent a malformed reply")
            if r.get("type") == "NotImplementedError":
                raise NotImplementedError(str(r.get("message", "")))
            if r.get("type") == "WireError":  # what the function returned cannot be sent: nothing was raised
                raise SubmissionError(str(r.get("described", "")) + ": the grader checks data only")
            raise StudentRaised(str(r.get("type")), str(r.get("message", "")),
                                "your code raised " + str(r.get("described", "")))
        return reply

    def names(self) -> dict:
        """What the submission defines: ``{name: {"callable", "type", "parameters"}}``."""
        if self._names is None:
            names = self.request("names")["ok"]
            self._names = names if isinstance(names, dict) else {}
        return self._names


# ---- proxies -----------------------------------------------------------------------------------------
class StudentFunction:
    """The student's function ``name``, called in the student's process.

    After a call, ``returned_args`` holds the positional arguments as the call left them
    (remote objects as None): a test compares them with what it sent to see whether the
    student's function changed its inputs in place."""

    def __init__(self, worker: Worker, name: str, parameters: list):
        self.worker, self.__name__, self.parameters = worker, name, parameters
        self.returned_args: list = []

    def __call__(self, *args, **kwargs):
        reply = self.worker.request("call", self.__name__, args, kwargs)
        returned = reply.get("args")
        self.returned_args = list(returned) if isinstance(returned, (list, tuple)) else []
        return reply.get("ok")

    def __repr__(self) -> str:
        return f"<student function {self.__name__}>"


__all__ = ["Worker", "StudentFunction", "SubmissionError", "ForbiddenCall", "TimeLimitExceeded", "StudentRaised",
           "ISOLATIONS", "resolve_isolation", "bwrap_command", "layout"]
