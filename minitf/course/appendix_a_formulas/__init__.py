"""Appendix A: every formula of the course, linked to the minitf function that computes it and
checked numerically.

The registry (:mod:`minitf.course.kit.formulas`) holds one :class:`Formula` per formula: an id, the lesson and
section that introduce it, its LaTeX, the dotted paths of the minitf functions that compute it
and a check.  A check computes the formula in plain NumPy, straight from its LaTeX, on a small
random float64 input, and compares with the linked functions' output (and, for a gradient,
with finite differences).  Each lesson folder's ``formulas.py`` registers that lesson's formulas; they are found by
scanning the folders (:func:`minitf.course.kit.formulas.load`).

:mod:`.notebook` turns the registry into ``lessons/A-formulas.ipynb``::

    python -m minitf.course.appendix_a_formulas            # run every check, print the reports
    python -m minitf.course.appendix_a_formulas --write    # regenerate the notebook from the registry

In a notebook::

    from minitf.course import appendix_a_formulas as formulas
    formulas.show("softmax-backward")           # the check's report; raises if it fails
"""
from ..kit.formulas import (FORMULAS, Comparison, Formula, FormulaCheckFailed, Link, LinkError, Result, compare,
                            finite_differences, formula, get, link, load, resolve, run, run_all, show, summary)
from ..kit.lessons import Lesson

LESSON = Lesson("A", "Appendix A: formulas", "every formula, linked to the function that computes it and checked numerically",
                "A-formulas.ipynb")

load()  # the appendix is the collection: every lesson folder's formulas, registered in course order

__all__ = ["LESSON", "FORMULAS", "Comparison", "Formula", "FormulaCheckFailed", "Link", "LinkError", "Result", "compare",
           "finite_differences", "formula", "get", "link", "load", "resolve", "run", "run_all", "show", "summary"]
