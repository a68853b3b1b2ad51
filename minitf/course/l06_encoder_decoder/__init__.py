"""Lesson 6 -- The whole encoder-decoder.

Its notebook is ``lessons/06-the-whole-encoder-decoder.ipynb``; everything else of the lesson
is in this folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its
figures), ``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment).
The notebook reads this package (``from minitf.course import l06_encoder_decoder as l6``),
which holds every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("6", "The whole encoder-decoder",
                "every shape from ids to logits; parameters, FLOPs and activation memory counted and measured",
                "06-the-whole-encoder-decoder.ipynb")
