"""Forbidden by concept, not by function: each coded task names the concept it grades
(``Task.concept``) and its implementations in minitf (``Task.forbidden``); this file enumerates
every minitf function that computes the concept and shows that none is in the student's reach.

Two ways minitf could reach a student's code, both closed:

* **importing it**: the student's process holds no minitf at all (the allow-list of
  ``workers.bwrap_command``, walked in ``test_attacks_filesystem.py``), so every function that
  computes a concept is out of reach by import -- the enumeration below lists them;
* **through an object a test hands over** (a model, an attention layer; :mod:`minitf.grading.remote`):
  its offered methods run in the grader.  Each offered method is *traced* -- every minitf function
  it runs, decoding steps included -- and none may compute the concept of the task it is offered
  in.  The methods offered are what the reference's grading recorded, task by task.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from functools import lru_cache

import numpy as np
import pytest
from grading import tools

import minitf
from minitf.attention import MultiHeadAttention
from minitf.grading import get_homework, homeworks
from minitf.grading.remote import KINDS, method_path

CODED = [(hw, t) for hw in (get_homework(n) for n in sorted(homeworks())) for t in hw.tasks if not t.autograder_only]
# names too generic to follow in the static enumeration (every module has a forward); a method root is
# followed by the traces of what is offered instead
GENERIC = {"forward", "backward", "__init__", "__call__", "decode", "encode", "step", "run", "batch", "parameters",
           "_owned", "num_parameters"}


def resolve(path: str):
    """The object a ``Task.forbidden`` dotted path names (a function, a method), or raise."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def qualified(obj) -> str:
    """``module.Qual.name`` of a function or method, where it is defined (re-exports resolved)."""
    obj = inspect.unwrap(getattr(obj, "__func__", obj))
    return f"{obj.__module__}.{obj.__qualname__}"


# ---- every task names its concept and its implementations ---------------------------------------------------
@pytest.mark.parametrize("hw, task", CODED, ids=[f"{hw.name}-{t.number}" for hw, t in CODED])
def test_every_task_names_its_concept_and_every_implementation_exists(hw, task):
    """A concept in words, and implementations that exist: a path that no longer resolves (a function
    renamed or moved) would forbid nothing."""
    assert task.concept and len(task.concept) < 90, task.concept
    assert task.forbidden, f"{hw.name} task {task.number} names no minitf implementation of {task.concept!r}"
    for path in task.forbidden:
        try:
            obj = resolve(path)
        except (ImportError, AttributeError) as e:
            pytest.fail(f"{hw.name} task {task.number}: {path} does not resolve ({e})")
        assert callable(obj), path


# ---- what each offered method runs -----------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _objects():
    from minitf.config import ModelConfig
    from minitf.models import EncoderDecoder

    cfg = ModelConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, d_ff=16, n_encoder_layers=1,
                      n_decoder_layers=2, max_len=16, dropout=0.0, dtype="float64", seed=0)
    model = EncoderDecoder(cfg)
    attn = MultiHeadAttention(8, 2, rng=np.random.default_rng(0), dtype=np.float64)
    return model, attn


def _call(kind_name: str, method: str):
    model, attn = _objects()
    rng = np.random.default_rng(0)
    src, dec = rng.integers(3, 12, size=(2, 5)), rng.integers(3, 12, size=(2, 4))
    if kind_name == "MultiHeadAttention":
        x_q, x_kv = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 5, 8))
        return {"forward": lambda: attn.forward(x_q, x_kv, np.zeros((2, 1, 1, 5)))}[method]()
    H_enc, _ = model.encode(src)
    calls = {"forward": lambda: model.forward(src, dec), "encode": lambda: model.encode(src),
             "decode": lambda: model.decode(dec, H_enc, model.source_mask(src)),
             "source_mask": lambda: model.source_mask(src)}
    return calls[method]()


@lru_cache(maxsize=None)
def traced(path: str) -> frozenset:
    """Every minitf function (``module.Qual.name``) that the offered method ``path`` runs."""
    kind = next(k for k in KINDS for m in k.methods if method_path(k, m) == path)
    method = path.rsplit(".", 1)[1]
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith("minitf"):
                seen.add(f"{module}.{frame.f_code.co_qualname}")

    sys.setprofile(profile)
    try:
        _call(kind.cls.__name__, method)
    finally:
        sys.setprofile(None)
    return frozenset(seen)


def test_the_traces_see_what_a_method_computes():
    """The tracing can fail: the model's forward runs the attention core, its decode the causal mask
    and the decoder block -- and an attention forward does not run its backward."""
    model_forward = traced("minitf.models.encoder_decoder.EncoderDecoder.forward")
    assert "minitf.attention.scaled_dot_product_attention" in model_forward
    assert qualified(resolve("minitf.masks.causal_mask")) in traced("minitf.models.encoder_decoder.EncoderDecoder.decode")
    assert not any("backward" in f for f in traced("minitf.attention.MultiHeadAttention.forward"))


# ---- the methods each task offers, from the reference's grading ---------------------------------------------------
@lru_cache(maxsize=None)
def offered_by_task() -> dict:
    """``{(homework, task number): {method path}}``: what the reference's grading offered to the
    student's code in each task (the plugin records it test by test)."""
    out = {}
    for hw in (get_homework(n) for n in sorted(homeworks())):
        result = tools.reference_result(hw.name)
        for t in result.tasks:
            out[(hw.name, t.task.number)] = {m for test in t.tests for m in test.get("offered", [])}
    return out


def enumerate_implementations(task) -> set:
    """Every minitf function that computes ``task``'s concept: its named implementations, and every
    function whose body calls one of them by name, transitively (generic method names are followed by
    the traces instead)."""
    roots = {qualified(resolve(p)) for p in task.forbidden}
    calls, defined = _static_calls()
    found = set(roots)
    names = {r.rsplit(".", 1)[1] for r in roots} - GENERIC
    while True:
        new = {f for f, called in calls.items() if f not in found and called & names}
        if not new:
            return found
        found |= new
        names |= {f.rsplit(".", 1)[1] for f in new} - GENERIC


@lru_cache(maxsize=None)
def _static_calls() -> tuple:
    """``({module.Qual.name: {names it calls}}, {short name: {module.Qual.name}})`` over every module
    of minitf but the grader."""
    calls, defined = {}, {}
    for info in pkgutil.walk_packages(minitf.__path__, "minitf."):
        if info.name.startswith("minitf.grading") or info.name.endswith("__main__"):
            continue
        try:
            source = inspect.getsource(importlib.import_module(info.name))
        except Exception:  # a module that does not import here (an optional dependency): not in reach either
            continue
        tree = ast.parse(source)

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = f"{info.name}.{prefix}{child.name}"
                    called = set()
                    for n in ast.walk(child):
                        if isinstance(n, ast.Call):
                            f = n.func
                            called.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
                    calls[name] = called
                    defined.setdefault(child.name, set()).add(name)

        visit(tree, "")
    return calls, defined


@pytest.mark.parametrize("hw, task", CODED, ids=[f"{hw.name}-{t.number}" for hw, t in CODED])
def test_nothing_that_computes_the_concept_is_in_reach(hw, task):
    """The enumeration of the concept's implementations, against what the task's code can reach: minitf
    is not in its process (no import reaches any of them), and no method offered to it runs one."""
    implementations = enumerate_implementations(task)
    assert implementations >= {qualified(resolve(p)) for p in task.forbidden}
    offered = offered_by_task()[(hw.name, task.number)]
    for method in sorted(offered):
        assert method not in task.forbidden, f"{method} is offered in {hw.name} task {task.number}, which forbids it"
        reached = (traced(method) | {method}) & implementations
        assert not reached, (f"{hw.name} task {task.number} ({task.concept}): the offered {method} runs "
                             f"{sorted(reached)}, which compute(s) the concept")


def test_the_enumeration_can_fail(monkeypatch):
    """The planted bug the test above must catch: hw04's task 4.1 (cross-attention forward) offered an
    attention layer's forward, as the grader offered it before -- the trace finds the concept."""
    hw = get_homework("hw04")
    task = hw.task(1)
    implementations = enumerate_implementations(task)
    method = "minitf.attention.MultiHeadAttention.forward"
    assert method in task.forbidden
    assert (traced(method) | {method}) & implementations
    # and the static enumeration reaches past the named implementations (a function calling one)
    assert len(enumerate_implementations(get_homework("hw08").task(3))) > len(get_homework("hw08").task(3).forbidden)
