"""The student's process: where a submission's code runs, and the only place it runs.

The grader starts one such process per task (``python -m minitf.grading.sandbox CONFIG``)
and talks to it over two pipes in :mod:`minitf.grading.wire` messages (data only).  Where
bubblewrap is installed the grader starts it inside ``bwrap`` (:mod:`.workers`): a read-only
view of the machine with the instructor files, the grader's own files and minitf's source
hidden, no network, no other process visible, no capabilities -- the operating system's
boundary.  Either way the process

1. limits itself: address space, CPU time and file size (``resource.setrlimit``), one BLAS
   thread;
2. sends its own output to a log file (a print cannot disturb the pipes);
3. imports minitf's model code while it still may;
4. switches off the minitf functions the task asks the student to write: each forbidden
   function's code is replaced, in place, by code that raises ``PermissionError`` -- so
   every reference to it, however hidden (a dict, a closure, a default argument), runs
   the replacement -- and reports the call to the grader;
5. installs an audit hook (:pep:`578`; it cannot be removed) that refuses, from then on:
   opening files outside the task's directory and the Python installation (and minitf's
   own source, and anything under ``/proc``), writing anywhere but the task's directory,
   starting processes, sending signals, sockets, ``ctypes``, raising resource limits and
   replacing a function's code;
6. imports the submission, says whether that worked, and serves calls until the grader
   closes the pipe.

Scores, expected values and reports never exist in this process: the grader computes them
from what comes back.  Without bubblewrap, steps 4 and 5 are a guard against a student's
tricks inside Python, not a boundary: a determined student with the whole Python language
can get round an audit hook.  Graded work (the autograder) runs inside ``bwrap``.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import linecache
import os
import sys
import sysconfig
import time
from pathlib import Path

# minitf's model code, imported before the audit hook closes minitf's source (the
# submission may use any of it; nothing here imports the homework's tests or references)
PREIMPORT = ("minitf", "minitf.attention", "minitf.blocks", "minitf.checks", "minitf.config", "minitf.data",
             "minitf.decoding", "minitf.gradcheck", "minitf.layers", "minitf.loss", "minitf.masks",
             "minitf.models", "minitf.module", "minitf.optim", "minitf.schedules", "minitf.data.tasks",
             "minitf.training", "minitf.checkpoint")
FORBIDDEN_EVENT = "minitf.grading.forbidden"

_BLOCKED_EVENTS = {
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.startfile", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill", "resource.setrlimit",
    "resource.prlimit", "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "ctypes.cdata",
    "ctypes.addressof", "ctypes.set_errno", "ctypes.get_errno", "sys.remote_exec", "winreg.OpenKey",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "os.chdir", "os.fchdir", "os.link", "os.symlink",
    "sqlite3.connect",
}
_BLOCKED_IMPORTS = {"ctypes", "_ctypes", "_posixsubprocess", "multiprocessing", "_multiprocessing", "pty",
                    "socket", "_socket", "ssl", "_ssl", "mmap", "_xxsubinterpreters", "_testcapi", "sqlite3",
                    "_sqlite3"}
# automatic differentiation would write a homework's backward for the student
_AUTODIFF_IMPORTS = {"torch", "functorch", "jax", "jaxlib", "tensorflow", "autograd", "mxnet", "paddle", "theano",
                     "tinygrad", "chainer"}
# events whose first argument is a path that must lie inside the task's directory
_PATH_EVENTS = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
                "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr", "shutil.rmtree", "os.listxattr"}
_TWO_PATH_EVENTS = {"os.rename", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.move"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Guard:
    """The audit hook: refuses what a submission has no business doing (see the module docstring)."""

    def __init__(self, workdir: str, minitf_dir: str):
        self.workdir = os.path.realpath(workdir)
        self.minitf_dir = os.path.realpath(minitf_dir)
        paths = sysconfig.get_paths()
        self.readable = sorted({os.path.realpath(p) for p in (
            sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, paths["stdlib"],
            paths["platstdlib"], paths["purelib"], paths["platlib"]) if p})
        self.forbidden_calls: list[str] = []

    def _path(self, value) -> str | None:
        if isinstance(value, int):
            return None  # an already open descriptor
        try:
            text = os.fsdecode(value)
        except (TypeError, ValueError):
            return None
        if ".." in text.replace("\\", "/").split("/"):
            # relative to a dir_fd the hook cannot see, ".." may lead anywhere
            raise PermissionError(f"open: a submission may not use '..' in a path, got {text!r}")
        return os.path.realpath(text)

    def _check_write(self, value, event: str) -> None:
        path = self._path(value)
        if path is not None and not (_inside(path, self.workdir) or path == os.devnull):
            raise PermissionError(f"{event}: a submission may write only in its own directory, not {path!r}")

    def _check_read(self, path: str) -> None:
        if _inside(path, self.workdir) or path == os.devnull:
            return
        if _inside(path, "/proc") or _inside(path, self.minitf_dir) or \
                not any(_inside(path, root) for root in self.readable):
            raise PermissionError(f"open: a submission may not read {path!r} (only its own directory and "
                                  f"the Python installation)")

    def __call__(self, event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = args
            writing = (mode is not None and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
            if writing:
                self._check_write(path, "open")
            else:
                resolved = self._path(path)
                if resolved is not None:
                    self._check_read(resolved)
        elif event == FORBIDDEN_EVENT:
            self.forbidden_calls.append(str(args[0]))
        elif event in _BLOCKED_EVENTS or event.startswith("socket."):
            raise PermissionError(f"{event}: not allowed in a homework submission")
        elif event == "import" and args[0].split(".")[0] in _BLOCKED_IMPORTS:
            raise PermissionError(f"import {args[0]}: not allowed in a homework submission")
        elif event == "import" and args[0].split(".")[0] in _AUTODIFF_IMPORTS:
            raise PermissionError(f"import {args[0]}: automatic differentiation is not available to a homework "
                                  f"submission; the backward is yours to write")
        elif event == "object.__setattr__" and args[1] == "__code__":
            raise PermissionError("replacing a function's code is not allowed in a homework submission")
        elif event in _PATH_EVENTS:
            self._check_write(args[0], event)
        elif event in _TWO_PATH_EVENTS:
            self._check_write(args[0], event)
            self._check_write(args[1], event)


# ---- switching off what the task asks the student to write ---------------------------------------
def _resolve(path: str):
    """``"minitf.attention.MultiHeadAttention.backward"`` -> the object (a function)."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(path)


def switch_off(path: str, label: str) -> None:
    """Replace the code of the function at ``path`` by code that reports the call and raises."""
    fn = _resolve(path)
    message = (f"{label} asks you to write this yourself: minitf's own {path} is switched off while your "
               f"code runs (a submission that calls it gets no credit for the task)")
    source = (f"def {fn.__name__}(*args, **kwargs):\n"
              f"    import sys\n"
              f"    sys.audit({FORBIDDEN_EVENT!r}, {path!r})\n"
              f"    raise PermissionError({message!r})\n")
    free = fn.__code__.co_freevars  # ("__class__",) in a method calling super(): the stub must have as many
    if free:
        source = ("def _closure():\n" + "".join(f"    {v} = None\n" for v in free)
                  + "".join("    " + line + "\n" for line in source.splitlines())
                  + f"        ({', '.join(free)},)\n    return {fn.__name__}\n")
    namespace: dict = {}
    exec(compile(source, f"<switched off: {path}>", "exec"), namespace)
    stub = namespace["_closure"]() if free else namespace[fn.__name__]
    fn.__code__ = stub.__code__  # every holder of this function object now runs the stub
    fn.__defaults__ = fn.__kwdefaults__ = None


def _close_escape_hatches() -> None:
    """Process and signal primitives that no audit event covers: gone from this process."""
    import _posixsubprocess  # already loaded by the standard library's subprocess
    import signal

    def refused(*args, **kwargs):
        raise PermissionError("not allowed in a homework submission")

    for module, names in ((os, ("pidfd_open",)), (sys.modules.get("posix"), ("pidfd_open",)),
                          (signal, ("pidfd_send_signal",)), (_posixsubprocess, ("fork_exec",))):
        for name in names:
            if module is not None and hasattr(module, name):
                setattr(module, name, refused)


# ---- limits and output ------------------------------------------------------------------------------
def _limit(memory_bytes: int, cpu_seconds: int, file_bytes: int = 64 << 20) -> None:
    import resource

    for what, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu_seconds),
                        (resource.RLIMIT_FSIZE, file_bytes)):
        soft, hard = resource.getrlimit(what)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(what, (value, value))


def _redirect_output(log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


# ---- serving calls -------------------------------------------------------------------------------------
def _import_submission(path: Path):
    from .submission import describe_exception

    spec = importlib.util.spec_from_file_location("submission", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # SyntaxError, NameError, SystemExit... whatever the file raised
        return None, describe_exception(e, path)
    return module, None


def _describe(name: str, obj) -> dict:
    import inspect

    info = {"callable": callable(obj), "type": type(obj).__name__}
    if callable(obj):
        try:
            info["parameters"] = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            info["parameters"] = []
    return info


def serve(rfd: int, wfd: int, module, runs, guard: Guard, path: Path) -> None:
    from .submission import describe_exception
    from .wire import Student, WireError, pack, read_frame, unpack, without_modules, write_frame

    def student(value):
        if isinstance(value, Student):
            fn = getattr(module, value.name, None)
            if not callable(fn):
                raise LookupError(f"your file defines no function {value.name!r}")
            return fn
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            return type(value)(student(v) for v in value)
        if type(value) is dict:
            return {k: student(v) for k, v in value.items()}
        return value

    while True:
        frame = read_frame(rfd)
        if frame is None:
            return
        request = unpack(frame)
        op, name = request["op"], request.get("name")
        guard.forbidden_calls.clear()
        t0 = time.perf_counter()
        try:
            if op == "names":
                result = {k: _describe(k, v) for k, v in vars(module).items() if not k.startswith("__")}
            elif op == "value":
                result = getattr(module, name)
            elif op == "call":
                result = getattr(module, name)(*request["args"], **request["kwargs"])
            elif op == "run":
                result = getattr(runs, name)(*student(request["args"]), **student(request["kwargs"]))
            else:
                raise ValueError(f"unknown request {op!r}")
            reply = {"ok": result, "args": without_modules(request.get("args", ())),
                     "kwargs": without_modules(request.get("kwargs", {}))}
        except BaseException as e:  # the student's exception, reported; the process goes on
            reply = {"raised": {"type": type(e).__name__, "message": str(e),
                                "described": describe_exception(e, path)}}
        reply["forbidden"] = list(dict.fromkeys(guard.forbidden_calls))
        reply["seconds"] = time.perf_counter() - t0
        reply["id"] = request.get("id")
        try:
            payload = pack(reply)
        except WireError as e:
            payload = pack({"raised": {"type": "WireError", "message": str(e),
                                       "described": f"your {name} returned {e}"},
                            "forbidden": reply["forbidden"], "seconds": reply["seconds"], "id": reply["id"]})
        write_frame(wfd, payload)


def main(config: dict) -> None:
    _limit(int(config["memory_bytes"]), int(config["cpu_seconds"]))
    workdir = config["workdir"]
    os.chdir(workdir)
    _redirect_output(os.path.join(workdir, "output.log"))
    for name in PREIMPORT:
        importlib.import_module(name)
    import inspect  # noqa: F401  (used by _describe, once the hook is in)

    from . import get_homework, submission, wire  # noqa: F401  (the rest of this process's own code)
    from .wire import pack, write_frame

    hw = get_homework(config["homework"])
    task = hw.task(int(config["task"]))
    runs = importlib.import_module(hw.runs_module) if hw.runs_module else None
    for path in task.forbidden:
        switch_off(path, f"Task {hw.label(task)}")
    _close_escape_hatches()
    if config.get("minitf_copy"):  # inside bwrap: minitf was imported from a copy; its source goes now
        import shutil

        shutil.rmtree(config["minitf_copy"])
    linecache.clearcache()
    guard = Guard(workdir, os.path.dirname(importlib.import_module("minitf").__file__))
    sys.addaudithook(guard)
    path = Path(config["submission"])
    module, error = _import_submission(path)
    rfd, wfd = int(config["fd_in"]), int(config["fd_out"])
    write_frame(wfd, pack({"ready": error is None, "error": error}))
    if module is not None:
        serve(rfd, wfd, module, runs, guard, path)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
