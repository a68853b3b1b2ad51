"""Reading a submission: its bytes (:func:`read_submission`: a regular file, read once), its
source (:func:`check_source`: UTF-8 that compiles), and the static scan.

The static scan:

Each task lists the minitf functions it replaces (``Task.forbidden``).  A submission whose
source names one -- an import of it from minitf, or an attribute such as
``minitf.data.shift_right`` -- gets no credit for the task: :func:`scan_source` reads the
file's syntax tree for them; importing ``minitf.grading`` (the grader) counts against every
task.  (At run time there is nothing to call: the student's process holds no minitf, see
:mod:`minitf.grading.sandbox`, and a minitf object a test hands over offers only the methods
its task allows, :mod:`minitf.grading.remote`.)

The installed minitf is readable, so its code can also be pasted in: a function of the file that
is one of the task's forbidden functions copied (the same syntax tree -- the same statements and
constants -- once names, docstrings, type hints and statements that do nothing are set aside,
:func:`copied_functions`) counts as using it.  Only functions of some size are compared
(``COPY_MIN_NODES``), so that a short formula written the way minitf writes it is never mistaken
for a copy.  It is a deterrent, not a proof: a copy with one statement changed or moved is not
caught here (that is a question for a similarity tool and the lecturer), nor is code run from a
string (``exec``), which no static scan reads.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import os
import stat
import textwrap
from functools import lru_cache
from pathlib import Path

from . import Homework


MAX_SUBMISSION_BYTES = 4 << 20  # a homework file is a few dozen kB


class SubmissionRefused(ValueError):
    """The submission is not a regular file's bytes that can be graded (a link, a folder...)."""


# ---- reading a submission ------------------------------------------------------------------------------------
def read_submission(path, folder=None) -> bytes:
    """The bytes of the submission at ``path``: a regular file, not a link (symbolic or hard), inside ``folder``
    (default: its own folder), read once with ``O_NOFOLLOW``.  Raises :class:`SubmissionRefused`
    saying why not."""
    path = Path(path)
    shown = str(path)
    if path.suffix == ".ipynb":
        raise SubmissionRefused(f"{shown} is a notebook: export it to .py (in Jupyter: File > Save and Export "
                                f"Notebook As > Executable Script, or `jupyter nbconvert --to script`), then "
                                f"submit the .py file")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionRefused(f"{shown}: no such file") from None
    except OSError as e:
        raise SubmissionRefused(f"{shown} cannot be read: {e.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionRefused(f"{shown} is a symbolic link, not your file: submit the file itself (a link is "
                                f"not graded, whatever it points to)")
    if stat.S_ISDIR(info.st_mode):
        raise SubmissionRefused(f"{shown} is a folder: submit your .py file itself")
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionRefused(f"{shown} is not a regular file (a device, a pipe or a socket): submit your .py "
                                f"file itself")
    if info.st_nlink > 1:
        raise SubmissionRefused(f"{shown} is a hard link (a file with {info.st_nlink} names: its bytes live under "
                                f"another name as well): submit a file of your own")
    base = Path(folder) if folder is not None else path.parent
    real, real_base = os.path.realpath(path), os.path.realpath(base)
    if not (real == real_base or real.startswith(real_base.rstrip(os.sep) + os.sep)):
        raise SubmissionRefused(f"{shown} resolves to {real}, outside the submission's folder {real_base}: "
                                f"submit the file itself")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:  # replaced by a link between the look and the read
        raise SubmissionRefused(f"{shown} cannot be opened as a regular file ({e.strerror})") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise SubmissionRefused(f"{shown} is not a regular file: submit your .py file itself")
        if opened.st_size > MAX_SUBMISSION_BYTES:
            raise SubmissionRefused(f"{shown} is {opened.st_size} bytes: a homework file is at most "
                                    f"{MAX_SUBMISSION_BYTES} bytes")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_SUBMISSION_BYTES:
                raise SubmissionRefused(f"{shown} is larger than {MAX_SUBMISSION_BYTES} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_source(data: bytes, shown: str) -> str | None:
    """Why ``data`` cannot be a homework file (not UTF-8, a syntax error), or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"{shown} is not UTF-8 text (byte {e.start}): save it as UTF-8"
    try:
        compile(text, shown, "exec", dont_inherit=True)
    except SyntaxError as e:
        where = f"line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
        code = f": {e.text.strip()}" if e.text and e.text.strip() else ""
        return (f"your file has a syntax error, so none of it can run and every task scores 0: "
                f"{type(e).__name__}: {e.msg} ({where}{code})")
    except ValueError as e:  # a null byte
        return f"your file cannot be compiled: {e}"
    except (RecursionError, MemoryError):  # an expression nested deeper than Python's parser goes
        return "your file is nested too deeply for Python to compile (an expression thousands of levels deep?)"
    return None


# ---- the static scan -----------------------------------------------------------------
GRADER_PACKAGES = ("minitf.grading",)  # the grader


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
    return bool(module) and any(module == p or module.startswith(p + ".") for p in GRADER_PACKAGES)


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
                    everywhere.append(f"line {node.lineno} imports {a.name} (the grader)")
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
                    everywhere.append(f"line {node.lineno} imports {full} (the grader)")
                elif _is_minitf(mod):
                    origin[a.asname or a.name] = full
        elif isinstance(node, ast.Call) and (_dotted(node.func) or [""])[-1] in ("import_module", "__import__"):
            for arg in node.args:  # importlib.import_module("minitf.grading..."), __import__(...)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and any(p in arg.value
                                                                                         for p in GRADER_PACKAGES):
                    everywhere.append(f"line {node.lineno} imports {arg.value} (the grader)")

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
    for task in homework.tasks:
        for line, name, path in copied_functions(tree, task.forbidden):
            add([task.number], f"line {line}: {name} is {path} copied from minitf")
    for text in everywhere:
        add([t.number for t in homework.tasks], text)
    return findings


# ---- copies of minitf's code -------------------------------------------------------------------------
COPY_MIN_NODES = 120  # syntax-tree nodes a function needs before a match counts: minitf's causal_mask (85) is
# below it -- four lines that a student who read minitf writes the same way (the course's own reference does)


def _no_op(statement: ast.stmt, read: set) -> bool:
    """A statement that does nothing: ``pass``, a bare constant (a docstring, a string left as a
    comment), or an assignment of a constant to a name never read."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True
    return (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
            and all(isinstance(t, ast.Name) and t.id not in read for t in statement.targets))


def _fingerprint(node: ast.AST) -> tuple[str, int]:
    """A function's syntax tree with its names made anonymous -- its own, its arguments', its locals'
    and the globals it reads become n0, n1, ... in order of appearance -- and without its docstrings,
    type hints and statements that do nothing (:func:`_no_op`): ``(ast.dump, size)``.  Attribute
    names (``np.partition``) and constants stay: they are what the code does."""
    node = ast.parse(ast.unparse(node)).body[0]  # a fresh copy: the caller's tree is not changed
    node.decorator_list, node.returns = [], None
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            sub.annotation = None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(sub, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [b for b in block if not _no_op(b, read)]
                setattr(sub, field, kept or ([ast.Pass()] if field == "body" else []))
    names: dict[str, str] = {}
    for sub in ast.walk(node):
        for attr in ("id", "arg", "name"):
            if isinstance(getattr(sub, attr, None), str) and not isinstance(sub, (ast.alias, ast.keyword)):
                setattr(sub, attr, names.setdefault(getattr(sub, attr), f"n{len(names)}"))
    return ast.dump(node), sum(1 for _ in ast.walk(node))


@lru_cache(maxsize=None)
def _minitf_fingerprint(path: str) -> str | None:
    """The fingerprint of the minitf function or method ``path`` names (None if it has no source
    or is too small to compare)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
            source = textwrap.dedent(inspect.getsource(inspect.unwrap(getattr(obj, "__func__", obj))))
        except (AttributeError, TypeError, OSError):
            return None
        node = ast.parse(source).body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        dump, size = _fingerprint(node)
        return dump if size >= COPY_MIN_NODES else None
    return None


def copied_functions(tree: ast.AST, forbidden) -> list[tuple[int, str, str]]:
    """``(line, name, minitf path)`` for every function in ``tree`` that is one of ``forbidden``
    (dotted paths of minitf functions) copied: the same fingerprint (:func:`_fingerprint`)."""
    wanted = {}
    for path in forbidden:
        dump = _minitf_fingerprint(path)
        if dump is not None:
            wanted.setdefault(dump, path)
    if not wanted:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            try:
                dump, size = _fingerprint(node)
            except RecursionError:  # a function nested too deeply to print again is no copy of minitf's
                continue
            if size >= COPY_MIN_NODES and dump in wanted:
                found.append((node.lineno, node.name, wanted[dump]))
    return found
