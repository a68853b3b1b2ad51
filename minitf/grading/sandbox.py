"""The student's process: where a submission's code runs, and the only place it runs.

The grader (:mod:`.workers`) starts one such process per task and talks to it over two pipes
in :mod:`.wire` messages (data only).  This file and ``wire.py`` are all of minitf the process
holds: it runs them as copies in a folder of their own (``python -I -S sandbox.py CONFIG``),
with the standard library and NumPy on ``sys.path`` and nothing else -- no site-packages,
no minitf, no working directory.

**The boundary is the file system** (where bubblewrap is installed, always for graded work):
the process runs inside ``bwrap`` and sees only an allow-list (:func:`.workers.bwrap_command`)
-- the interpreter, the standard library, NumPy, the system's shared libraries, this folder
and its own work folder.  torch, scipy, minitf, the instructor files and the repository are
not there to import or to read, whatever the submission does to the code below.

**The guard is a second line**, in this process, that explains a refusal clearly:

1. limits: address space, CPU time and file size (``resource.setrlimit``), one BLAS thread;
2. its own output goes to a log file (a print cannot disturb the pipes); the grader reads it;
3. an import hook refuses what is not the standard library or NumPy, naming why
   (``import torch``: automatic differentiation is not available; ``import minitf``: the
   homework is written with NumPy alone);
4. an audit hook (:pep:`578`) refuses opening files outside the task's folder, the Python
   installation and NumPy (and anything under ``/proc``), writing anywhere but the task's
   folder, starting processes, sending signals, sockets, ``ctypes``, raising resource limits,
   walking the garbage collector's objects and replacing a function's code;
5. the submission is imported; the process says whether that worked and serves calls
   until the grader closes the pipe.

Without bubblewrap only the guard stands, and it lives in the student's own interpreter: a
submission can switch it off.  That is fine for checking one's own work and no boundary for
grading (the grader insists on bubblewrap when it holds the instructor files).

A minitf object a test hands to the student's code (a model, an attention layer) stays in
the grader's process: here it is a :class:`RemoteObject` with the object's data (its
configuration, its weights as copies) and a stub for each allowed method, which asks the
grader to run it (a *callback*) and returns the result by value.
"""
from __future__ import annotations

import json
import os
import sys
import time

if __package__:  # imported as minitf.grading.sandbox (the grader's own tests)
    from . import wire
else:  # run as a script in the student's process: wire.py is beside this file, NumPy on the config's path
    sys.path[:] = [os.path.dirname(os.path.abspath(__file__)), *json.loads(sys.argv[1])["sys_path"]]
    import wire

    del sys.path[0]

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
AUTODIFF = {"torch", "functorch", "jax", "jaxlib", "tensorflow", "autograd", "mxnet", "paddle", "theano",
            "tinygrad", "chainer"}
# events whose first argument is a path that must lie inside the task's directory
_PATH_EVENTS = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
                "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr", "shutil.rmtree", "os.listxattr"}
_TWO_PATH_EVENTS = {"os.rename", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.move"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
SUBMISSION_MODULE = "submission"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def refusal(name: str) -> str | None:
    """Why ``import name`` is refused in a submission, or None if it is allowed (the standard
    library, NumPy, the submission itself)."""
    top = name.partition(".")[0]
    if top == "minitf":
        return (f"import {name}: minitf is not available to your code while it is graded -- the homework is "
                f"written with NumPy and the standard library alone (write the few helpers you need, a "
                f"softmax say, yourself)")
    if top in AUTODIFF:
        return (f"import {name}: automatic differentiation is not available to a homework submission; the "
                f"backward is yours to write")
    if top in ("numpy", SUBMISSION_MODULE, "wire", "__main__") or top in sys.stdlib_module_names:
        return None
    return f"import {name}: only the standard library and NumPy are available to a homework submission"


class ImportGuard:
    """The import hook (first on ``sys.meta_path``): refuses, with its reason, every module that
    is not the standard library or NumPy.  A second line: inside bubblewrap those modules are
    not on the file system at all."""

    def find_spec(self, name, path=None, target=None):
        why = refusal(name)
        if why is not None:
            raise ModuleNotFoundError(why, name=name)
        return None  # the ordinary finders take it from here

    def invalidate_caches(self):
        pass


class Guard:
    """The audit hook: refuses what a submission has no business doing (see the module docstring)."""

    def __init__(self, workdir: str, readable):
        self.workdir = os.path.realpath(workdir)
        self.readable = sorted({os.path.realpath(p) for p in readable if p})

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
        if _inside(path, "/proc") or not any(_inside(path, root) for root in self.readable):
            raise PermissionError(f"open: a submission may not read {path!r} (only its own directory, the "
                                  f"standard library and NumPy)")

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
        elif event in _BLOCKED_EVENTS or event.startswith("socket."):
            raise PermissionError(f"{event}: not allowed in a homework submission")
        elif event == "import" and args[0].split(".")[0] in _BLOCKED_IMPORTS:
            raise PermissionError(f"import {args[0]}: not allowed in a homework submission")
        elif event == "import" and refusal(args[0]) is not None:
            raise ModuleNotFoundError(refusal(args[0]), name=args[0])
        elif event == "object.__setattr__" and args[1] == "__code__":
            raise PermissionError("replacing a function's code is not allowed in a homework submission")
        elif event in _PATH_EVENTS:
            self._check_write(args[0], event)
        elif event in _TWO_PATH_EVENTS:
            self._check_write(args[0], event)
            self._check_write(args[1], event)


def _close_escape_hatches() -> None:
    """Process and signal primitives that no audit event covers: gone from this process."""
    import _posixsubprocess  # loaded by the standard library's subprocess machinery
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


def _flush() -> None:
    """The student's prints, out of Python's buffers into the log (the grader reads it after
    every call)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass


# ---- saying where in the file something went wrong --------------------------------------------------------
def _where_in_file(exc: BaseException, path: str) -> str:
    """' (line 12, in f: `x = 1/0`)' for the deepest frame of ``exc`` in ``path``."""
    import traceback

    if isinstance(exc, SyntaxError) and exc.lineno:
        text = (exc.text or "").strip()
        return f" (line {exc.lineno}" + (f": {text}" if text else "") + ")"
    real = os.path.realpath(path)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.realpath(f.filename) == real]
    if not frames:
        return ""
    f = frames[-1]
    line = (f.line or "").strip()
    return f" (line {f.lineno}, in {f.name}" + (f": {line}" if line else "") + ")"


def describe_exception(exc: BaseException, path) -> str:
    """``TypeError: ... (line 12, in shift_right: ...)`` -- the exception and where in the file."""
    text = (exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)).strip()
    head = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return head + (_where_in_file(exc, str(path)) if path is not None else "")


# ---- objects that stay in the grader -----------------------------------------------------------------------
class Channel:
    """The pipes to the grader, for the replies and for callbacks made while a call runs."""

    def __init__(self, rfd: int, wfd: int):
        self.rfd, self.wfd = rfd, wfd
        self.calls = 0

    def send(self, value) -> None:
        wire.write_frame(self.wfd, wire.pack(value))

    def receive(self):
        frame = wire.read_frame(self.rfd)
        return None if frame is None else wire.unpack(frame, remote=self.remote)

    def remote(self, oid, kind, attrs, methods):
        return RemoteObject(self, oid, kind, attrs, methods)

    def callback(self, oid: int, kind: str, method: str, args, kwargs, training):
        """Ask the grader to run ``method`` of its object ``oid``; its result, by value."""
        self.calls += 1
        self.send({"callback": {"object": oid, "method": method, "args": tuple(args), "kwargs": dict(kwargs),
                                "training": training, "n": self.calls}})
        reply = self.receive()
        if not isinstance(reply, dict) or reply.get("n") != self.calls:
            raise RuntimeError("the grader did not answer the call")
        if "raised" in reply:
            raise RemoteError(reply["raised"])
        return reply.get("ok")


class RemoteError(Exception):
    """What the grader's object raised when the student's code called one of its methods."""


class RemoteObject:
    """A minitf object handed to the student's code, which stays in the grader's process.

    Its data attributes (a model's ``config``, an attention layer's ``params`` and ``n_heads``)
    are copies; each method the task allows (``model.forward``, ``model.encode``...) is a stub
    that asks the grader to run it and returns what it returned, by value (a cache stays in
    the grader and arrives as a placeholder).  ``train()``, ``eval()`` and ``evaluating()``
    set the mode the grader runs this object's methods in: its own object never changes."""

    def __init__(self, channel, oid, kind, attrs, methods):
        attrs = dict(attrs)
        config = attrs.pop("config", None)
        state = {"_channel": channel, "_id": oid, "_kind": kind, "_methods": tuple(methods),
                 "training": bool(attrs.pop("training", False)), **attrs}
        if isinstance(config, dict):
            state["config"] = Config(config)
        self.__dict__.update(state)

    def __getattr__(self, name):  # only for names not set above
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._methods:
            return lambda *args, **kwargs: self._channel.callback(self._id, self._kind, name, args, kwargs,
                                                                  self.training)
        offered = ", ".join(sorted({*self._methods, *(k for k in self.__dict__ if not k.startswith("_"))}
                                   | {"train", "eval", "evaluating"}))
        raise AttributeError(f"the {self._kind} handed to your code offers {offered}; not {name!r} (what a task "
                             f"asks you to write is not offered)")

    def train(self, mode: bool = True):
        self.__dict__["training"] = bool(mode)
        return self

    def eval(self):
        return self.train(False)

    def evaluating(self):
        import contextlib

        @contextlib.contextmanager
        def mode():
            was = self.training
            self.train(False)
            try:
                yield self
            finally:
                self.train(was)

        return mode()

    def __repr__(self) -> str:
        return f"<{self._kind} (kept in the grader's process)>"


class Config:
    """A model's configuration, read-only: ``model.config.pad_id``."""

    def __init__(self, values: dict):
        self.__dict__.update(values)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def __setattr__(self, name, value):
        raise AttributeError("the model's configuration is read-only")

    def __repr__(self) -> str:
        return f"Config({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def _returned(value):
    """What comes back of an argument: remote objects as None (they stayed in the grader)."""
    if isinstance(value, RemoteObject):
        return None
    if wire.is_namedtuple(value):
        return type(value)(*(_returned(v) for v in value))
    if type(value) in (list, tuple):
        return type(value)(_returned(v) for v in value)
    if type(value) is dict:
        return {k: _returned(v) for k, v in value.items()}
    return value


# ---- serving calls -------------------------------------------------------------------------------------
def _import_submission(path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(SUBMISSION_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[SUBMISSION_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # SyntaxError, NameError, SystemExit... whatever the file raised
        return None, describe_exception(e, path)
    return module, None


def _describe(obj) -> dict:
    import inspect

    info = {"callable": callable(obj), "type": type(obj).__name__}
    if callable(obj):
        try:
            info["parameters"] = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            info["parameters"] = []
    return info


def serve(channel: Channel, module, path: str) -> None:
    while True:
        request = channel.receive()
        if request is None:
            return
        op, name = request["op"], request.get("name")
        t0 = time.perf_counter()
        try:
            if op == "names":
                result = {k: _describe(v) for k, v in vars(module).items() if not k.startswith("__")}
            elif op == "value":
                result = getattr(module, name)
            elif op == "call":
                result = getattr(module, name)(*request["args"], **request["kwargs"])
            else:
                raise ValueError(f"unknown request {op!r}")
            reply = {"ok": result, "args": _returned(request.get("args", ())),
                     "kwargs": _returned(request.get("kwargs", {}))}
        except BaseException as e:  # the student's exception, reported; the process goes on
            reply = {"raised": {"type": type(e).__name__, "message": str(e), "described": describe_exception(e, path)}}
        _flush()
        reply["seconds"] = time.perf_counter() - t0
        reply["id"] = request.get("id")
        try:
            channel.send(reply)
        except wire.WireError as e:
            channel.send({"raised": {"type": "WireError", "message": str(e), "described": f"your {name} returned {e}"},
                          "seconds": reply["seconds"], "id": reply["id"]})


def main(config: dict) -> None:
    _limit(int(config["memory_bytes"]), int(config["cpu_seconds"]))
    workdir = config["workdir"]
    os.chdir(workdir)
    _redirect_output(os.path.join(workdir, "output.log"))
    sys.path[:] = list(config["sys_path"])  # the standard library and NumPy's folder: nothing else
    import importlib.util  # noqa: F401  (what serving needs, loaded before the hooks are in)
    import inspect  # noqa: F401
    import traceback  # noqa: F401

    import numpy  # noqa: F401  (NumPy imports what it needs while it still may)

    sys.meta_path.insert(0, ImportGuard())
    _close_escape_hatches()
    sys.addaudithook(Guard(workdir, config["readable"]))
    channel = Channel(int(config["fd_in"]), int(config["fd_out"]))
    path = config["submission"]
    module, error = _import_submission(path)
    _flush()
    channel.send({"ready": error is None, "error": error})
    if module is not None:
        serve(channel, module, path)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
