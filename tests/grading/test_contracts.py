"""Every promise tested: each clause of a graded function's template docstring is exercised by a
public test of its task, as the tests actually call it.

The calls are recorded, not assumed: the reference graded in an ordinary process on the public
problems with every graded function wrapped to print how it was called (the dtypes and shapes of
its arrays, the values of its other arguments), each line landing in its test's record.  From the
template each function promises:

* **dtype** -- "the dtype of x" (or ``dtype`` an argument): called with float32 *and* float64;
* **batch of one** -- an argument shaped ``(B, ...)``: called with B = 1;
* **every argument at another value** -- an argument with a default (``eps=1e-5``,
  ``ignore_index=-100``, ``min_tokens_to_keep=1``): called with another value;
* **special ids** -- an id argument (``pad_id``, ``start_id``, ``eos_id``, ``bos_id``, ``mask_id``): called
  with at least two values, one of them not the course tokenizer's (0, 1, 2).

A clause a test cannot exercise is listed in :data:`NOT_APPLICABLE` with the reason.  Sizes
(S != T, a missing transpose that still fits), empty and fully padded inputs are asserted by the tests
themselves and named in the closing table of issue 28; :func:`contract_table` prints the whole table.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import re
from functools import lru_cache
from pathlib import Path

import pytest
from grading.tools import INSTRUCTOR

from minitf.grading import get_homework, homeworks
from minitf.grading.grader import grade

IDS = ("pad_id", "start_id", "eos_id", "bos_id", "mask_id")
COURSE_IDS = {0, 1, 2}  # the course tokenizer's <pad>, <bos>, <eos>

NOT_APPLICABLE: dict = {
    # (homework, function, clause): why no test exercises it.  Empty: every promise read off the
    # templates is exercised.  (The backward functions whose arrays are float64 by contract -- hw01's,
    # hw04's -- promise no dtype, so none is asked of them.)
}


DEFAULTS: dict = {}  # (homework, function, argument) -> its default in the template


# ---- the template's promises ----------------------------------------------------------------------------
def promises(hw) -> dict:
    """``{function: {clause: detail}}`` read off the template's signatures and docstrings."""
    tree = ast.parse(hw.template_path.read_text(encoding="utf-8"))
    namespace: dict = {}
    exec(compile(hw.render_template(), str(hw.template_path), "exec"), namespace)
    coded = {f for t in hw.tasks if not t.autograder_only for f in t.functions}
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name not in coded:
            continue
        doc = ast.get_docstring(node) or ""
        args = [a.arg for a in node.args.args]
        signature = inspect.signature(namespace[node.name])
        defaults = {a: p.default for a, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
        clauses = {}
        if re.search(r"dtype of|'s dtype|dtype\b.*\bresult|\bdtype :", doc) and "float64 array (B" not in doc:
            clauses["dtype"] = "float32 and float64"
        batched = [a for a in args if re.search(rf"^\s*{a}\b[^\n]*\(B[,)]", doc, re.M)]
        if batched:
            clauses["B=1"] = batched[0]
        for a, d in defaults.items():
            if a != "dtype":
                clauses[a] = f"another value than the default {d!r}"
                DEFAULTS[(hw.name, node.name, a)] = d
        for a in args:
            if a in IDS:
                clauses[a] = "two values, one not 0, 1 or 2"
        out[node.name] = clauses
    return out


# ---- how the tests call each function --------------------------------------------------------------------------
RECORDER = r'''
import inspect as _inspect
import json as _json
import numpy as _np


def _desc(v):
    if isinstance(v, _np.ndarray):
        return {"a": v.dtype.str, "s": list(v.shape)}
    if isinstance(v, (bool, int, float, str, type(None), _np.generic)):
        return {"v": v.item() if isinstance(v, _np.generic) else v}
    if isinstance(v, type):
        return {"v": _np.dtype(v).name if issubclass(v, _np.generic) else v.__name__}
    if isinstance(v, _np.dtype):
        return {"v": v.name}
    if isinstance(v, dict):  # arrays (params), and a configuration's dtype
        return {"d": {str(k): _desc(x) for k, x in v.items() if isinstance(x, _np.ndarray) or k == "dtype"}}
    if isinstance(v, (list, tuple)):
        return {"l": [_desc(x) for x in v if isinstance(x, _np.ndarray)]}
    return {"o": type(v).__name__}


def _record(fn):
    signature = _inspect.signature(fn)

    def recorded(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            print("CALL " + _json.dumps({"f": fn.__name__, "a": {k: _desc(v) for k, v in bound.arguments.items()}}))
        except Exception:
            pass
        return fn(*args, **kwargs)

    recorded.__signature__ = signature
    return recorded
'''


@lru_cache(maxsize=None)
def calls(name: str) -> dict:
    """``{function: [(test, {argument: description})]}``: every call the public tests of the
    function's own task make (the reference, recorded, graded on the public problems)."""
    hw = get_homework(name)
    coded = {f: t.number for t in hw.tasks if not t.autograder_only for f in t.functions}
    source = (INSTRUCTOR / name / "reference.py").read_text(encoding="utf-8") + RECORDER + "".join(
        f"\n{f} = _record({f})" for f in coded) + "\n"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / hw.filename
        path.write_text(source, encoding="utf-8")
        env = os.environ.pop("MINITF_INSTRUCTOR", None)
        try:
            result = grade(name, path, isolation="process")
        finally:
            if env is not None:
                os.environ["MINITF_INSTRUCTOR"] = env
    out: dict = {f: [] for f in coded}
    for t in result.tasks:
        assert t.ok or not t.graded, (t.label, t.message)  # the recorder changes nothing the tests see
        for test in t.tests:
            for line in (test.get("output") or "").splitlines():
                if line.startswith("CALL "):
                    call = json.loads(line[5:])
                    if coded.get(call["f"]) == t.task.number:  # a call of a function of this test's own task
                        out[call["f"]].append((re.sub(r"\[.*\]$", "", test["name"]), call["a"]))
    return out


def _arrays(desc):
    if "a" in desc:
        yield desc
    for x in desc.get("d", {}).values():
        yield from _arrays(x)
    for x in desc.get("l", []):
        yield from _arrays(x)


def exercised(name: str, function: str, clause: str, detail: str) -> set:
    """The tests whose calls of ``function`` exercise ``clause`` (as :func:`promises` states it)."""
    recorded = calls(name)[function]
    if clause == "dtype":
        kinds: dict = {}
        for test, args in recorded:
            seen = {a["a"] for d in args.values() for a in _arrays(d)}
            for d in [args.get("dtype", {})] + [a.get("d", {}).get("dtype", {}) for a in args.values()]:
                if d.get("v") in ("float32", "float64"):  # an argument or a configuration's dtype
                    seen.add({"float32": "<f4", "float64": "<f8"}[d["v"]])
            for k in seen:
                kinds.setdefault(k, set()).add(test)
        floats = {"<f4", "<f8"} <= set(kinds)
        ints = not any(k[1] == "f" for k in kinds) and {"<i4", "<i8"} <= set(kinds)  # "the dtype of labels"
        pair = ("<f4", "<f8") if floats else ("<i4", "<i8")
        return kinds[pair[0]] | kinds[pair[1]] if floats or ints else set()
    if clause == "B=1":
        return {test for test, args in recorded if (next(_arrays(args.get(detail, {})), {}).get("s") or [0])[0] == 1}
    values = [(test, "<an array>" if "a" in args.get(clause, {}) else args.get(clause, {}).get("v"))
              for test, args in recorded]
    if clause in IDS:
        distinct = {v for _, v in values}
        return {t for t, v in values if v not in COURSE_IDS} if len(distinct) >= 2 else set()
    default = DEFAULTS[(name, function, clause)]
    return {t for t, v in values if v != default}


CASES = [(hw, f, clause, detail) for hw in sorted(homeworks())
         for f, clauses in promises(get_homework(hw)).items() for clause, detail in clauses.items()]


@pytest.mark.parametrize("hw, function, clause, detail", CASES, ids=[f"{h}-{f}-{c}" for h, f, c, _ in CASES])
def test_every_promise_is_exercised(hw, function, clause, detail):
    why = NOT_APPLICABLE.get((hw, function, clause))
    tests = exercised(hw, function, clause, detail)
    if why:
        assert not tests, f"{hw} {function} {clause}: listed as not applicable ({why}), yet {sorted(tests)} exercise it"
        return
    assert tests, (f"{hw} {function}: the template promises {clause} ({detail}), and no public test of its task "
                   f"calls it so")


def test_what_is_not_applicable_is_a_promise():
    assert set(NOT_APPLICABLE) <= {(h, f, c) for h, f, c, _ in CASES}


def test_the_recording_can_fail(monkeypatch):
    """The planted bug the test above must catch: the recording of a test that passes the defaults
    only (hw08's loss without its ignore_index test) shows no other value."""
    recorded = calls("hw08")["masked_cross_entropy"]
    monkeypatch.setitem(calls("hw08"), "masked_cross_entropy",
                        [(t, a) for t, a in recorded if t != "test_another_ignore_index_and_a_batch_of_one"])
    assert not exercised("hw08", "masked_cross_entropy", "ignore_index", "another value than the default -100")
    assert not exercised("hw08", "masked_cross_entropy", "B=1", "logits")


def contract_table() -> str:
    """The table of issue 28's closing note: function x clause x tests (markdown)."""
    rows = ["| homework | function | clause | tests |", "| --- | --- | --- | --- |"]
    for hw, f, clause, detail in CASES:
        why = NOT_APPLICABLE.get((hw, f, clause))
        tests = sorted(exercised(hw, f, clause, detail))
        rows.append(f"| {hw} | `{f}` | {clause} | {why and 'n/a: ' + why or ', '.join(tests)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(contract_table())
