"""Loading a homework submission, and making sure it writes what it is asked to write.

:func:`load` imports a student's file (or, without a path, the reference solution) once
per process.  A file that fails to import is not an error of the grader: the failure is
kept, explained (exception, line, source line), and every test that needs the file fails
with that explanation.

Each task lists the minitf objects it replaces (``Task.forbidden``).  A submission that
uses one gets no credit for the task, found two ways:

* statically -- :func:`scan_source` reads the file's syntax tree for imports of those
  names from minitf, or attribute access such as ``minitf.data.shift_right``; importing
  ``minitf.homework`` (the grader and the reference solution) counts against every task;
* at run time -- while a student's function runs, :func:`forbid` swaps each forbidden
  object, wherever minitf or the submission holds a reference to it, for a stand-in that
  records the call and raises :class:`ForbiddenCall`.  The call is recorded, so a
  submission that catches the exception is caught all the same.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.abc
import importlib.util
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from . import Homework, Task, get_homework


class SubmissionError(Exception):
    """The submission cannot be checked for a task: it failed to import, or lacks a name."""


class ForbiddenCall(Exception):
    """The submission used minitf's own implementation of what the task asks it to write."""


class TimeLimitExceeded(BaseException):
    """A test ran past its time limit.  A ``BaseException``, so that a submission's
    ``except Exception`` cannot swallow it."""


# ---- the static scan -----------------------------------------------------------------
HOMEWORK_PACKAGE = "minitf.homework"


def _dotted(node) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None for anything that is not a plain name chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _is_minitf(module: str | None) -> bool:
    return bool(module) and (module == "minitf" or module.startswith("minitf."))


def _is_homework(module: str | None) -> bool:
    return bool(module) and (module == HOMEWORK_PACKAGE or module.startswith(HOMEWORK_PACKAGE + "."))


def scan_source(source: str, homework: Homework, filename: str = "<submission>") -> dict[int, list[str]]:
    """Find uses of forbidden minitf objects in a submission's source.

    Returns ``{task number: [finding, ...]}``; a finding is a sentence naming the object
    and the line.  Raises ``SyntaxError`` if the source does not parse.
    """
    tree = ast.parse(source, filename)
    findings: dict[int, list[str]] = {}
    everywhere: list[str] = []

    def add(tasks, text):
        for t in tasks:
            if text not in findings.setdefault(t, []):
                findings[t].append(text)

    # which local names stand for minitf modules or objects, and what they stand for
    origin: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _is_homework(a.name):
                    everywhere.append(f"line {node.lineno} imports {a.name} (the grader and its reference solution)")
                if _is_minitf(a.name):
                    if a.asname:
                        origin[a.asname] = a.name
                    else:
                        origin[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            mod = node.module
            for a in node.names:
                full = f"{mod}.{a.name}"
                if _is_homework(mod) or _is_homework(full):
                    everywhere.append(f"line {node.lineno} imports {full} (the grader and its reference solution)")
                elif _is_minitf(mod):
                    origin[a.asname or a.name] = full
        elif isinstance(node, ast.Call):  # importlib.import_module("minitf.homework..."), __import__(...)
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and HOMEWORK_PACKAGE in arg.value:
                    everywhere.append(f"line {node.lineno} imports {arg.value} (the grader and its reference solution)")

    for task in homework.tasks:
        for path in task.forbidden:
            parts = path.split(".")
            name, owner = parts[-1], parts[-2]
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and _is_minitf(node.module):
                    if any(a.name == name for a in node.names):
                        add([task.number], f"line {node.lineno} imports {name} from {node.module}")
                elif isinstance(node, ast.Attribute) and node.attr == name:
                    chain = _dotted(node)
                    if chain and chain[0] in origin:
                        full = ".".join(origin[chain[0]].split(".") + chain[1:])
                        bits = full.split(".")
                        # the object itself, a re-export (minitf.shift_right), or another owner of that name
                        if full == path or full == f"minitf.{name}" or (len(bits) >= 2 and bits[-2] == owner):
                            add([task.number], f"line {node.lineno} uses {full}")
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in origin:
                    if origin[node.id] == path:
                        add([task.number], f"line {node.lineno} uses {path} (as {node.id})")
    for text in everywhere:
        add([t.number for t in homework.tasks], text)
    return findings


# ---- the run-time guard ----------------------------------------------------------------
def _resolve(path: str):
    """``"minitf.attention.MultiHeadAttention.backward"`` -> (owner, attribute, object), or
    None when the module does not exist in this version of minitf."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:i])
        try:
            obj = importlib.import_module(modname)
        except ImportError:
            continue
        owner = obj
        try:
            for attr in parts[i:]:
                owner, obj = obj, getattr(obj, attr)
        except AttributeError:
            return None
        return owner, parts[-1], obj
    return None


def _holders(extra_modules) -> list[ModuleType]:
    """minitf's modules (not the homework package's own) and the submission's module."""
    mods = [m for name, m in list(sys.modules.items())
            if isinstance(m, ModuleType) and _is_minitf(name) and not _is_homework(name)]
    return mods + [m for m in extra_modules if m is not None]


@contextlib.contextmanager
def forbid(paths, extra_modules=(), calls: list | None = None):
    """Within the block, every object named in ``paths`` raises :class:`ForbiddenCall`
    when called, and the call is appended to ``calls``.

    A module-level function is replaced wherever a minitf module or one of
    ``extra_modules`` holds it (``from minitf.data import shift_right`` in the submission
    included); a method is replaced on its class.
    """
    calls = [] if calls is None else calls
    patches = []  # (owner, attribute, original value or None if it was inherited)

    def stand_in_for(path):
        def stand_in(*args, **kwargs):
            calls.append(path)
            raise ForbiddenCall(f"{path} is the function this task asks you to write")

        return stand_in

    for path in paths:
        resolved = _resolve(path)
        if resolved is None:
            continue
        owner, attr, obj = resolved
        if isinstance(owner, type):
            patches.append((owner, attr, owner.__dict__.get(attr)))
            setattr(owner, attr, stand_in_for(path))
        else:
            for mod in _holders(extra_modules):
                for name, value in list(vars(mod).items()):
                    if value is obj:
                        patches.append((mod, name, value))
                        setattr(mod, name, stand_in_for(path))
    try:
        yield calls
    finally:
        for owner, attr, original in reversed(patches):
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)


# ---- loading ---------------------------------------------------------------------------------
@dataclass
class LoadedSubmission:
    """A submission imported once: the module, or why it could not be."""

    homework: Homework
    path: Path
    is_reference: bool
    module: ModuleType | None = None
    error: str | None = None  # why the import failed, for the student
    findings: dict = field(default_factory=dict)  # task number -> forbidden uses found in the source


class _BlockReference(importlib.abc.MetaPathFinder):
    """Keeps a submission from importing the homework's reference solution."""

    def __init__(self, module_name: str):
        self.module_name = module_name

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.module_name:
            raise ImportError(f"{fullname} (the reference solution) is not available to a submission")
        return None


def _where_in_file(exc: BaseException, path: Path) -> str:
    """' (your file, line 12: `x = 1/0`)' for the deepest frame of ``exc`` in ``path``."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        text = (exc.text or "").strip()
        return f" (line {exc.lineno}" + (f": {text}" if text else "") + ")"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path]
    if not frames:
        return ""
    f = frames[-1]
    line = (f.line or "").strip()
    return f" (line {f.lineno}, in {f.name}" + (f": {line}" if line else "") + ")"


def describe_exception(exc: BaseException, path: Path | None) -> str:
    """``TypeError: ... (line 12, in shift_right: ...)`` -- the exception and where in the file."""
    text = (exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)).strip()
    head = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return head + (_where_in_file(exc, path) if path is not None else "")


_CACHE: dict[tuple[str, str], LoadedSubmission] = {}


def load(homework, path=None) -> LoadedSubmission:
    """Import a submission (``path``), or the reference solution (``path=None``), once per process."""
    hw = get_homework(homework)
    key = (hw.name, str(Path(path).resolve()) if path is not None else "")
    if key in _CACHE:
        return _CACHE[key]
    if path is None:
        loaded = LoadedSubmission(hw, hw.reference_path, is_reference=True)
        try:
            loaded.module = importlib.import_module(hw.reference_module)
        except Exception as e:  # the reference is part of minitf: a failure here is a bug
            loaded.error = describe_exception(e, hw.reference_path)
    else:
        loaded = LoadedSubmission(hw, Path(path).resolve(), is_reference=False)
        _load_file(loaded)
    _CACHE[key] = loaded
    return loaded


def _load_file(loaded: LoadedSubmission) -> None:
    path, hw = loaded.path, loaded.homework
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        loaded.error = f"cannot read {path}: {e}"
        return
    try:
        loaded.findings = scan_source(source, hw, str(path))
    except SyntaxError as e:
        loaded.error = describe_exception(e, path)
        return
    if not any(isinstance(f, _BlockReference) for f in sys.meta_path):
        sys.meta_path.insert(0, _BlockReference(hw.reference_module))
    module_name = f"{hw.name}_submission"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except TimeLimitExceeded:
        sys.modules.pop(module_name, None)
        loaded.error = ("importing the file did not finish within the time limit: is there an endless loop "
                        "(or a long computation) at module level?")
    except BaseException as e:  # SyntaxError, NameError, SystemExit... whatever the file raised
        sys.modules.pop(module_name, None)
        loaded.error = describe_exception(e, path)
    else:
        loaded.module = module


# ---- what a test sees ------------------------------------------------------------------------
class TaskSubmission:
    """A submission as seen by the tests of one task (the ``submission`` fixture)."""

    def __init__(self, loaded: LoadedSubmission, task: Task):
        self.loaded = loaded
        self.task = task
        self.homework = loaded.homework

    @property
    def label(self) -> str:
        return f"Task {self.homework.label(self.task)}"

    @property
    def is_reference(self) -> bool:
        return self.loaded.is_reference

    def _check(self, name: str):
        if self.loaded.error is not None:
            raise SubmissionError(f"your file could not be imported, so nothing in it can be checked: "
                                  f"{self.loaded.error}")
        found = self.loaded.findings.get(self.task.number)
        if found:
            raise ForbiddenCall(f"{self.label} gets no credit: {'; '.join(found)}. This task asks you to write "
                                f"that yourself, so its tests do not run.")
        missing = object()
        value = getattr(self.loaded.module, name, missing)
        if value is missing:
            raise SubmissionError(f"your file defines no {name!r} ({self.label}); keep the template's names")
        return value

    def value(self, name: str):
        """A piece of data the task asks for (e.g. ``ANSWERS``)."""
        return self._check(name)

    def function(self, name: str):
        """The student's function ``name``, wrapped so that calling minitf's own version of
        it (or of anything else this task forbids) fails the test with an explanation."""
        fn = self._check(name)
        if not callable(fn):
            raise SubmissionError(f"{name} in your file is a {type(fn).__name__}, not a function ({self.label})")
        task, label, module = self.task, self.label, self.loaded.module

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            calls: list = []
            try:
                with forbid(task.forbidden, [module], calls):
                    result = fn(*args, **kwargs)
            except BaseException:
                if not calls:
                    raise
                result = None
            if calls:
                used = ", ".join(dict.fromkeys(calls))
                raise ForbiddenCall(f"{label} gets no credit: your {name} called minitf's own {used}. "
                                    f"This task asks you to write that yourself.") from None
            return result

        return guarded
