"""Reading a submission's source: the static scan.

Each task lists the minitf functions it replaces (``Task.forbidden``).  A submission whose
source names one -- an import of it from minitf, or an attribute such as
``minitf.data.shift_right`` -- gets no credit for the task: :func:`scan_source` reads the
file's syntax tree for them; importing ``minitf.grading`` (the grader) counts against every
task.  (At run time there is nothing to call: the student's process holds no minitf, see
:mod:`minitf.grading.sandbox`, and a minitf object a test hands over offers only the methods
its task allows, :mod:`minitf.grading.remote`.)
"""
from __future__ import annotations

import ast

from . import Homework


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
    for text in everywhere:
        add([t.number for t in homework.tasks], text)
    return findings
