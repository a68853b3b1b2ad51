"""The formula registry: what a formula of the course is, how it is linked and how it is checked.

A :class:`Formula` holds its LaTeX, the dotted paths of the minitf functions that compute it
(``computes``), and a *check*: a function that computes the formula again in plain NumPy,
straight from its LaTeX, and compares the result with the linked functions' output on a
small random float64 input.  A check returns a list of :class:`Comparison` (what was
compared, the largest absolute difference, the tolerance).

:func:`run` resolves every link (a function that was removed or renamed is an error),
runs the check under a profiler hook that records which functions were called, and
reports, for each link, whether the check really exercised it: a link to a function the
check never calls is a wrong link.  The links shown to students (dotted name, source file
and line) are read from the live objects with :mod:`inspect`, never typed by hand.

Formulas are registered with the :func:`formula` decorator on their check function, in the
lesson modules of this package, in course order.
"""
from __future__ import annotations

import importlib
import inspect
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from ...config import ModelConfig
from .lessons import get_lesson, lesson_packages

REPO = Path(__file__).resolve().parents[3]
"""The folder holding the ``minitf`` package (the repository, for an editable install)."""

FORMULAS: list["Formula"] = []
"""Every registered formula, in course order (filled by importing the lesson modules)."""

INTROS: dict[str, str] = {}
"""A short markdown paragraph per lesson key, shown under the lesson's heading."""


# ---- comparisons ---------------------------------------------------------------------------
class Comparison(NamedTuple):
    """One number a check prints: the largest |difference| between the formula, computed in
    NumPy, and another computation of the same quantity (minitf's, or finite differences)."""

    quantity: str  # what is compared: "dQ", "logits", ...
    against: str  # "minitf" or "finite differences"
    diff: float  # max |a - b| over all entries (inf when the shapes or the infinities differ)
    tol: float  # the check passes when diff <= tol

    @property
    def ok(self) -> bool:
        return bool(self.diff <= self.tol)  # nan compares False: a nan never passes


def max_difference(a, b) -> float:
    """max |a - b| over all entries; equal infinities (a -inf logit filtered out by both) count
    as no difference, a nan or an infinity on one side only as an infinite one."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    with np.errstate(invalid="ignore"):
        d = np.where(a == b, 0.0, np.abs(a - b))  # (inf - inf is nan; a == b covers it)
    return float(np.max(np.where(np.isnan(d), np.inf, d), initial=0.0))


def compare(quantity: str, formula_value, minitf_value, tol: float = 1e-12, against: str = "minitf") -> Comparison:
    """The formula's value against minitf's (or against what ``against`` names: an exact value)."""
    return Comparison(quantity, against, max_difference(formula_value, minitf_value), tol)


def finite_differences(quantity: str, analytic, f: Callable[[], float], x: np.ndarray,
                       tol: float = 1e-8) -> Comparison:
    """A gradient formula's value against the numerical gradient of ``f()`` with respect to
    ``x`` (minitf's fourth-order centred differences; ``x`` float64, perturbed in place and
    restored)."""
    from ...gradcheck import numerical_gradient

    return Comparison(quantity, "finite differences", max_difference(analytic, numerical_gradient(f, x)), tol)


# ---- the registry --------------------------------------------------------------------------
@dataclass(frozen=True)
class Formula:
    """One formula of the course."""

    id: str  # stable, kebab-case: "softmax-backward"
    lesson: str  # the key of the lesson that introduces it (minitf.course.kit.lessons): "1" .. "10"
    section: int | None  # the lesson's section (its "## N." heading), or None
    title: str  # a few words
    latex: str  # display math, without the $$ delimiters
    computes: tuple[str, ...]  # dotted paths of the minitf functions that compute it
    check: Callable[[np.random.Generator], list[Comparison]] = field(repr=False, compare=False)
    note: str = ""  # a sentence or two of markdown: what the symbols are, where else it is used

    @property
    def where(self) -> str:
        """'Lesson 2 §3'"""
        return f"Lesson {self.lesson}" + (f" §{self.section}" if self.section else "")


def formula(id: str, *, lesson: str, section: int | None, title: str, latex: str, computes,
            note: str = ""):
    """Register the decorated check function as the check of a new :class:`Formula`."""
    def register(check):
        if any(f.id == id for f in FORMULAS):
            raise ValueError(f"formula: id {id!r} is registered twice")
        get_lesson(lesson)  # a real lesson key, or ValueError
        targets = (computes,) if isinstance(computes, str) else tuple(computes)
        if not targets:
            raise ValueError(f"formula {id!r}: computes names no function")
        FORMULAS.append(Formula(id, str(lesson), section, title, latex.strip(), targets, check, note.strip()))
        return check
    return register


def lesson_intro(lesson: str, text: str) -> None:
    """The paragraph shown under a lesson's heading in Appendix A."""
    INTROS[str(lesson)] = text.strip()


def get(id: str) -> Formula:
    load()
    for f in FORMULAS:
        if f.id == id:
            return f
    raise KeyError(f"formula: no formula {id!r}; known: {', '.join(f.id for f in FORMULAS)}")


# ---- links -----------------------------------------------------------------------------------
class LinkError(LookupError):
    """A formula links to a minitf function that does not exist (removed, renamed or moved)."""


def resolve(path: str):
    """The object a dotted path names: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name is not None and module_name.startswith(e.name):
                continue  # this prefix is not a module: try a shorter one
            raise
        for name in parts[i:]:
            try:
                obj = getattr(obj, name)
            except AttributeError:
                raise LinkError(f"{path}: {module_name} has no {'.'.join(parts[i:])!r} (removed or renamed? "
                                f"update the formula's computes=)") from None
        return obj
    raise LinkError(f"{path}: no such module")


def _function(path: str):
    obj = inspect.unwrap(resolve(path))
    if not inspect.isfunction(obj):
        raise LinkError(f"{path}: expected a function or method, got {type(obj).__name__}")
    return obj


class Link(NamedTuple):
    """Where a linked function lives, read from the object itself."""

    path: str  # the dotted name, as the formula gives it
    file: str  # its source file, relative to the repository: "minitf/layers/softmax.py"
    line: int  # the line of its ``def``


def link(path: str) -> Link:
    fn = _function(path)
    file = Path(inspect.getsourcefile(fn)).resolve()
    try:
        file = file.relative_to(REPO)
    except ValueError:
        pass
    return Link(path, file.as_posix(), inspect.getsourcelines(fn)[1])


# ---- running a check -------------------------------------------------------------------------
@dataclass
class Result:
    """What :func:`run` found."""

    formula: Formula
    links: list[Link]
    comparisons: list[Comparison]
    called: dict[str, bool]  # linked path -> did the check call it?
    error: str | None = None  # the exception a link or the check raised

    @property
    def ok(self) -> bool:
        return (self.error is None and bool(self.comparisons) and all(c.ok for c in self.comparisons)
                and all(self.called.values()))

    def report(self) -> str:
        """The lines the appendix prints under the formula."""
        f = self.formula
        lines = [f"{f.id}: {'OK' if self.ok else 'FAILED'}"]
        if self.error:
            lines.append(f"  error: {self.error}")
        rows = [(f"max |formula - {c.against}|", c.quantity, c) for c in self.comparisons]
        w1, w2 = (max((len(r[i]) for r in rows), default=0) for i in (0, 1))
        for head, quantity, c in rows:
            mark = "ok" if c.ok else "FAILED: above the tolerance"
            lines.append(f"  {head:<{w1}}  {quantity:<{w2}} = {c.diff:.1e}   (tolerance {c.tol:.0e}: {mark})")
        for l in self.links:
            lines.append(f"  computed by {l.path}  ({l.file}:{l.line}; "
                         f"{'called by the check' if self.called.get(l.path) else 'NOT called by the check'})")
        return "\n".join(lines)


def run(formula_or_id, seed: int = 0) -> Result:
    """Resolve the formula's links and run its check on ``np.random.default_rng(seed)``.

    Never raises for a broken formula: a missing function or an exception inside the
    check is reported in ``Result.error`` (and makes ``Result.ok`` False)."""
    f = get(formula_or_id) if isinstance(formula_or_id, str) else formula_or_id
    try:
        links = [link(p) for p in f.computes]
        codes = {p: _function(p).__code__ for p in f.computes}
    except Exception as e:  # a broken link: report it, with the formula
        return Result(f, [], [], {p: False for p in f.computes}, f"{type(e).__name__}: {e}")
    seen: set = set()

    def hook(frame, event, arg):
        if event == "call":
            seen.add(frame.f_code)

    previous = sys.getprofile()  # restored afterwards (a profiler running around the check pauses meanwhile)
    sys.setprofile(hook)
    try:
        comparisons = list(f.check(np.random.default_rng(seed)))
        error = None
    except Exception as e:
        comparisons, error = [], f"the check raised {type(e).__name__}: {e}"
    finally:
        sys.setprofile(previous)
    return Result(f, links, comparisons, {p: code in seen for p, code in codes.items()}, error)


class FormulaCheckFailed(AssertionError):
    """Raised by :func:`show` when a formula's check fails, so that a notebook run stops there."""


def show(formula_or_id, seed: int = 0) -> None:
    """Run one formula's check and print its report (Appendix A's live cells).  Raises
    :class:`FormulaCheckFailed` if the check fails."""
    result = run(formula_or_id, seed)
    print(result.report())
    if not result.ok:
        raise FormulaCheckFailed(result.report())


def load() -> None:
    """Import every lesson folder's ``formulas.py`` (once), registering its formulas in course order."""
    for package in lesson_packages():
        try:
            importlib.import_module(f"{package}.formulas")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.formulas":
                raise  # a formulas module that fails to import is an error, not a lesson without formulas


def run_all(lesson: str | None = None, seed: int = 0) -> list[Result]:
    load()
    return [run(f, seed) for f in FORMULAS if lesson is None or f.lesson == str(lesson)]


def summary(seed: int = 0) -> str:
    """One paragraph: how many formulas, links and comparisons, and whether all passed."""
    results = run_all(seed=seed)
    failed = [r.formula.id for r in results if not r.ok]
    n_cmp = sum(len(r.comparisons) for r in results)
    worst = max((c.diff for r in results for c in r.comparisons if c.against == "minitf"), default=0.0)
    lessons = sorted({r.formula.lesson for r in results}, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else k))
    n_links = sum(len(r.links) for r in results)
    n_called = sum(sum(r.called.values()) for r in results)
    text = (f"{len(results)} formulas from lessons {', '.join(lessons)}; {n_links} links to minitf functions, "
            f"{n_called} of them called by their checks; {n_cmp} comparisons; "
            f"largest |formula - minitf| difference {worst:.1e}.")
    return text + (f"\nFAILED: {', '.join(failed)}" if failed else "\nEvery check passed.")


# ---- the formulas written out independently, which several lessons' checks share ----------------------
# (each check computes its formula a second way, from these, and compares with minitf's function)
def softmax_rows(z):
    """The formula: exp(z - max z) / sum exp(z - max z), row by row (the last axis)."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

def attention(Q, K, V, M=0.0):
    """softmax(Q K^T / sqrt(Dh) + M) V, and the weights P."""
    P = softmax_rows(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) + M)
    return P @ V, P

def to_heads(x, H):
    """(B, L, D) -> (B, H, L, Dh): head h is columns h Dh .. (h+1) Dh - 1."""
    B, L, D = x.shape
    return x.reshape(B, L, H, D // H).transpose(0, 2, 1, 3)  # (B, H, L, Dh)

def from_heads(x):
    """(B, H, L, Dh) -> (B, L, D), the heads side by side."""
    B, H, L, Dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, L, H * Dh)

def sinusoidal(T, D):
    """P (T, D): sin(t / 10000^(2i/D)) in the even columns 2i, cos in the odd ones 2i + 1."""
    t, i2 = np.arange(T)[:, None], np.arange(0, D, 2)[None, :]
    P = np.zeros((T, D))
    P[:, 0::2] = np.sin(t / 10000.0 ** (i2 / D))
    P[:, 1::2] = np.cos(t / 10000.0 ** (i2 / D))[:, : D // 2]
    return P

def tiny_config(**changes) -> ModelConfig:
    """A small float64 model for the checks: D 8, 2 heads, F 16, 2 + 1 blocks, V 11 and 13."""
    c = dict(src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=16, n_encoder_layers=2,
             n_decoder_layers=1, max_len=12, dtype="float64", seed=0)
    c.update(changes)
    return ModelConfig(**c)

def random_ids(rng, B, L, V):
    return rng.integers(3, V, size=(B, L))  # no padding, no special tokens
