"""Appendix A's notebook, generated from the registry.

Every formula becomes a markdown cell (its LaTeX in ``$$...$$``, its note, and a link to the
source file of each function that computes it, read from the code with :mod:`inspect`) and a
code cell that runs its check live (:func:`minitf.course.appendix_a_formulas.show`), which prints the
differences and the functions' current file and line.  The formulas are in markdown cells, so
they show wherever the notebook is read (GitHub, Jupyter, ``minitf lessons --html``), outputs
or not.

``python -m minitf.course.appendix_a_formulas --write`` writes the notebook; :func:`out_of_date` lists
how a written notebook differs from what the registry gives (the test suite calls it).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..kit.lessons import all_lessons, get_lesson, slide_types
from ..kit.formulas import FORMULAS, INTROS, Formula, link

NOTEBOOK = "A-formulas.ipynb"

TITLE = """\
# Appendix A — Formulas

Every formula the course uses, grouped by the lesson that introduces it, and two cells that
minitf has but no lesson trains, the tanh RNN and the GRU, placed beside Lesson 1's LSTM. Under each formula:
the minitf function (or functions) that compute it, and a live cell that **checks** it. The check
computes the formula again in plain NumPy, read straight off the LaTeX (in each
lesson folder's `formulas.py`, not in minitf's model code), on a small random float64 input, and
prints the largest absolute difference from what the linked functions return. Backward formulas
are also compared with finite differences of the forward. Each check also records which
functions it really called (a profiler hook), so a link to a function that does not compute the
formula fails as surely as a wrong formula does; the file and line printed with each link are
read from the code as it is now.

Notation, as in every lesson: vectors are rows and a linear layer is x W + b (W stored
D_in × D_out); ⊙ is the element-wise product; dX stands for ∂L/∂X; the shape letters are B batch,
S source length, T target length, D model width, H heads, D_h = D/H, F feed-forward width,
V vocabulary, L layers. Statistical statements, like var(q · k) = D_h in Lesson 2 §2, are
measured in their lessons, not here.

This notebook is generated from the registry (`minitf/course/kit/formulas.py`, filled by each
lesson folder's `formulas.py`): `python -m minitf.course.appendix_a_formulas --write` rewrites it, and the test suite fails when
the notebook and the registry disagree, when a linked function is gone, or when a check fails.
The first cell runs every check at once."""

SETUP = """\
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: one BLAS thread, as in the lessons

from minitf.course import appendix_a_formulas as formulas

print(formulas.summary())"""


def _lesson_order(key: str) -> int:
    return [l.key for l in all_lessons()].index(key)


def lessons() -> list[str]:
    """The keys of the lessons that have formulas, in course order."""
    return sorted({f.lesson for f in FORMULAS}, key=_lesson_order)


def heading(key: str) -> str:
    """The ``##`` heading of a lesson's group (tests/test_lessons.py lists them)."""
    return f"Lesson {key} — {get_lesson(key).title}"


def _lesson_link(key: str, text: str) -> str:
    nb = get_lesson(key).notebook
    return f"[{text}]({nb})" if nb else text


def lesson_markdown(key: str) -> str:
    intro = INTROS.get(key, "")
    lines = [f"## {heading(key)}", ""]
    if intro:
        lines += [intro, ""]
    n = sum(f.lesson == key for f in FORMULAS)
    lines.append(f"{n} formula{'s' if n != 1 else ''}; the lesson: {_lesson_link(key, f'Lesson {key}')}.")
    return "\n".join(lines)


_OPTIONAL_ARGUMENT = re.compile(r"(\\begin\{(?:aligned|gathered|split)\})([ \t]*\n\s*)\[")


def display_latex(latex: str) -> str:
    """``latex`` as the notebook shows it: an environment whose first line starts with ``[``
    (``\\begin{aligned}`` and, on the next line, ``[a_i, ...] &= ...``) gets an empty group
    ``{}`` after the ``\\begin``.  Without it MathJax (and LaTeX) reads ``[...]`` as the
    environment's optional position argument, ``[t]`` or ``[b]``, and drops it, and with it
    the left-hand side of the first line.  An option written on the ``\\begin`` line itself
    (``\\begin{aligned}[t]``) is left alone."""
    return _OPTIONAL_ARGUMENT.sub(r"\1{}\2[", latex)


def formula_markdown(f: Formula) -> str:
    """A formula's cell: title, LaTeX, note, and where minitf computes it."""
    lines = [f"### {f.title}", "", "$$", display_latex(f.latex), "$$", ""]
    if f.note:
        lines += [f.note, ""]
    links = ", ".join(f"[`{l.path}`](../{l.file})" for l in map(link, f.computes))
    lines.append(f"Computed by {links}. {_lesson_link(f.lesson, f.where)}; formula id `{f.id}`.")
    return "\n".join(lines)


def cells() -> list[dict]:
    """The notebook's cells, as plain dicts (cell_type, id, source, metadata)."""
    out = [_markdown("title", TITLE), _code("setup", SETUP)]
    for key in lessons():
        out.append(_markdown(f"lesson-{key}", lesson_markdown(key)))
        for f in FORMULAS:
            if f.lesson == key:
                out.append(_markdown(f.id, formula_markdown(f)))
                out.append(_code(f"{f.id}-check", f'formulas.show("{f.id}")'))
    for cell, kind in zip(out, slide_types(out)):
        cell["metadata"]["slideshow"] = {"slide_type": kind}
    return out


def _markdown(id: str, source: str) -> dict:
    return {"cell_type": "markdown", "id": id, "metadata": {}, "source": source}


def _code(id: str, source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": id, "metadata": {}, "outputs": [], "source": source}


def write(path: Path) -> Path:
    """Write the notebook (no outputs) to ``path``, in nbformat's own layout."""
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                           "name": "python3"},
                                            "language_info": {"name": "python"}})
    nb.cells = [nbformat.from_dict(c) for c in cells()]
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    return Path(path)


def _source(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def out_of_date(path: Path) -> list[str]:
    """How the notebook at ``path`` differs from the registry's: one line per difference
    (empty when it is up to date).  Compares each cell's type, id and source."""
    found = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    want = cells()
    problems = []
    for i, (a, b) in enumerate(zip(found, want)):
        if (a["cell_type"], a.get("id"), _source(a)) != (b["cell_type"], b["id"], b["source"]):
            first = _source(b).splitlines()[0] if b["source"] else ""
            problems.append(f"cell {i} ({b['id']}: {first[:60]!r}) differs")
    if len(found) != len(want):
        problems.append(f"{len(found)} cells, the registry gives {len(want)}")
    return problems
