"""Lesson 3 -- The causal mask.

Its notebook is ``lessons/03-the-causal-mask.ipynb``; everything else of the lesson is in this
folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l03_causal_mask as l3``), which holds
every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("3", "The causal mask",
                "the leak measured; -1e9 vs -inf; the 0/1-after-softmax mistake; fully padded rows give no NaN",
                "03-the-causal-mask.ipynb")
