"""Lesson 7 -- Pretraining objectives.

Its notebook is ``lessons/07-pretraining-objectives.ipynb``; everything else of the lesson is
in this folder: ``experiments.py`` (its runs and measurements), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l07_pretraining as l7``), which holds
every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("7", "Pretraining objectives",
                "T5 span corruption and BART's five noises on corpus text; target lengths and cost; denoising loss curves",
                "07-pretraining-objectives.ipynb")
