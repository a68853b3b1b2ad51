"""What every task's tests of homework 2 share: the tolerances, the test problems, calling
the student's code, checking that its inputs come back untouched, and finding Python loops
in its source.

The test problems are drawn from the run's ``homework_seed`` (``minitf grade`` draws a fresh
one each time), so their answers cannot be recorded beforehand."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from minitf.grading.asserts import fail, returned_arg, same_array

# Forward values: two correct float64 softmaxes or attentions agree to ~1e-16 relative.
FORWARD64 = dict(rtol=1e-10, atol=1e-14)
# Backward values, float64: a backward written out agrees with minitf's to ~1e-15; central finite
# differences of the forward reach ~1e-10 at best, and fail this -- the task is the backward itself.
BACKWARD64 = dict(rtol=1e-11, atol=1e-13)
# float32 results against minitf's float32 results (a few ulps of float32, 6e-8 each).
FLOAT32 = dict(rtol=2e-5, atol=1e-6)
# "close, but only as close as finite differences or float32 arithmetic get": what a
# backward that is right in form but not in precision reaches.
ROUGH = dict(rtol=1e-5, atol=1e-7)

SHAPES_HINT = ("a shape error in a matrix product: write each product's shapes down, e.g. (B, H, T, S) @ (B, H, S, Dh) "
               "-> (B, H, T, Dh); transpose only the last two axes with x.swapaxes(-1, -2) (x.T on a 4-D array "
               "reverses all four)")


def attention_inputs(rng: np.random.Generator, B: int, H: int, T: int, S: int, Dh: int, dtype=np.float64):
    """Q (B, H, T, Dh), K and V (B, H, S, Dh), standard normal entries, of ``dtype``."""
    Q = rng.standard_normal((B, H, T, Dh))
    K = rng.standard_normal((B, H, S, Dh))
    V = rng.standard_normal((B, H, S, Dh))
    return Q.astype(dtype), K.astype(dtype), V.astype(dtype)




def expect_untouched(fn, sent: dict) -> None:
    """Fail if the student's last call of ``fn`` changed an input in place.  ``sent`` maps
    the position of an argument to ``(name, a copy of what was sent)``."""
    for index, (name, original) in sent.items():
        if not same_array(returned_arg(fn, index), original):
            fail(f"{fn.__name__} changed its input {name} in place; the caller still needs it (the forward's "
                 f"arrays are kept for the backward): compute new arrays instead of writing into it")


def as_pair(name: str, value, first: str, second: str) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        what = type(value).__name__ + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        fail(f"{name}: expected a pair ({first}, {second}), received a {what}")
    return tuple(value)


# ---- no Python loops ---------------------------------------------------------------------------------
LOOPS = {ast.For: "a for loop", ast.AsyncFor: "a for loop", ast.While: "a while loop",
         ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension",
         ast.DictComp: "a dict comprehension", ast.GeneratorExp: "a generator expression"}


# A loop written as a call: the function runs once per element (per head, per row), in Python.  These are
# the calls' own names; ``reduce`` only as functools' (np.add.reduce, a ufunc's reduce, is one array operation).
LOOP_CALLS = {"map": "a call of map", "filter": "a call of filter", "starmap": "a call of itertools.starmap",
              "vectorize": "np.vectorize (a Python loop in disguise)",
              "frompyfunc": "np.frompyfunc (a Python loop in disguise)",
              "apply_along_axis": "np.apply_along_axis (a Python loop over the rows)",
              "apply_over_axes": "np.apply_over_axes (a Python loop over the axes)"}
FUNCTOOLS_REDUCE = "functools.reduce (a Python loop in disguise)"


def _fixed_size(iterable) -> bool:
    """An iterable whose length the code fixes, not the data: a literal tuple, list or set (``for a in
    (Q, K, V)``), or an array's shape or strides, sliced or not (``map(int, x.shape)``).  Going over one
    is no loop over the batch, the heads or the positions."""
    if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
        return True
    if isinstance(iterable, ast.Subscript):
        iterable = iterable.value
    return isinstance(iterable, ast.Attribute) and iterable.attr in ("shape", "strides")


def _loop(node) -> str | None:
    """What kind of loop ``node`` is, if it is a loop statement or a comprehension over data."""
    kind = LOOPS.get(type(node))
    if kind is None or isinstance(node, ast.While):
        return kind
    iterables = [node.iter] if isinstance(node, (ast.For, ast.AsyncFor)) else [g.iter for g in node.generators]
    return None if all(_fixed_size(it) for it in iterables) else kind


def _loop_call(node: ast.Call, own: set) -> str | None:
    """What kind of loop the call ``node`` is, if it is one; None for an ordinary call (the file's own
    functions, ``own``, are visited instead) and for a map or filter over a fixed-size iterable."""
    if len(node.args) >= 2 and all(_fixed_size(a) for a in node.args[1:]):
        return None  # map(int, x.shape): over a shape, not over the data
    f = node.func
    if isinstance(f, ast.Name):
        if f.id in own:
            return None
        return FUNCTOOLS_REDUCE if f.id == "reduce" else LOOP_CALLS.get(f.id)
    if isinstance(f, ast.Attribute):
        if f.attr == "reduce":  # functools.reduce, not np.add.reduce
            return FUNCTOOLS_REDUCE if isinstance(f.value, ast.Name) and f.value.id == "functools" else None
        if f.attr in ("map", "filter"):  # builtins.map; a method of the student's own object is not one
            return LOOP_CALLS[f.attr] if isinstance(f.value, ast.Name) and f.value.id == "builtins" else None
        return LOOP_CALLS.get(f.attr)
    return None


def python_loops(source: str, names) -> list[str]:
    """Every loop or comprehension in the top-level functions ``names`` of ``source``, and
    in the file's own functions they call (by name): ``["line 12 (a for loop in split_heads)"]``.
    A call that loops in Python (map, functools.reduce, np.vectorize, np.apply_along_axis...,
    :data:`LOOP_CALLS`) counts as a loop; a ufunc's own ``np.add.reduce`` does not, nor does going
    over a fixed-size iterable (:func:`_fixed_size`: a literal tuple, an array's shape)."""
    functions = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    found: list[str] = []
    seen: set[str] = set()

    def visit(name: str, via: str) -> None:
        if name in seen or name not in functions:
            return
        seen.add(name)
        for node in ast.walk(functions[name]):
            kind = _loop(node) or (_loop_call(node, set(functions)) if isinstance(node, ast.Call) else None)
            if kind:
                found.append(f"line {node.lineno} ({kind} in {name}{via})")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                visit(node.func.id, f", called from {name}")

    for name in names:
        visit(name, "")
    return found


def submission_source(request) -> str:
    """The student's file, read in the grader's process (its syntax only: nothing is run)."""
    from minitf.grading.plugin import current_submission

    return Path(current_submission(request.config)).read_text(encoding="utf-8")
