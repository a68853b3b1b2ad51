"""Lesson 5 -- The block.

Its notebook is ``lessons/05-the-block.ipynb``; everything else of the lesson is in this
folder: ``experiments.py`` (its runs and measurements; the set-up in ``configs.py``, section 5's
in ``positions.py``), ``short_runs.py`` and ``warmup_curves.py`` (stored runs, each written again
by its command), ``figures.py`` (its figures), ``formulas.py`` (its formulas, for Appendix A),
``results/`` (its stored results) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l05_block as l5``), which holds every
name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("5", "The block",
                "residuals, LayerNorm's backward, pre-LN vs post-LN and warm-up, ReLU vs GELU, positions",
                "05-the-block.ipynb")
