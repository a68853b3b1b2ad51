"""Lesson 4 -- Cross-attention: joining the two stacks.

Its notebook is ``lessons/04-cross-attention.ipynb``; everything else of the lesson is in this
folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l04_cross_attention as l4``), which
holds every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("4", "Cross-attention: joining the two stacks",
                "alignment heatmaps of a trained model; K and V once per layer; dX_q, dX_kv and each block's share",
                "04-cross-attention.ipynb")
