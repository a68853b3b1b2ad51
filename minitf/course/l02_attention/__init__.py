"""Lesson 2 -- Attention from scratch.

Its notebook is ``lessons/02-attention-from-scratch.ipynb``; everything else of the lesson is
in this folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l02_attention as l2``), which holds
every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("2", "Attention from scratch",
                "why 1/sqrt(Dh); the softmax Jacobian and its cheap form; the attention backward line by line; heads",
                "02-attention-from-scratch.ipynb")
