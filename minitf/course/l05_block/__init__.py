"""Lesson 5 -- The block.

Its notebook is ``lessons/05-the-block.ipynb``; everything else of the lesson is in this
folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l05_block as l5``), which holds every
name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("5", "The block",
                "residuals, LayerNorm's backward, pre-LN vs post-LN and warm-up, ReLU vs GELU, positions",
                "05-the-block.ipynb")
