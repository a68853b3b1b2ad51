"""Lesson 9 -- Inference.

Its notebook is ``lessons/09-inference.ipynb``; everything else of the lesson is in this
folder: ``experiments.py`` (sections 1-4), ``copy_coverage.py`` (section 5) and
``exposure.py`` (section 6), whose stored runs ``python -m minitf.course.l09_inference``
measures again, ``figures.py`` (its figures, and ``figures_exposure.py``), ``formulas.py``
(its formulas, for Appendix A), ``results/`` (its stored results) and ``homework/`` (its
assignment). The notebook reads this package (``from minitf.course import l09_inference as
l9``), which holds every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("9", "Inference",
                "encode once, decode many; two KV caches; greedy, sampling, beam search; copy and coverage; exposure bias",
                "09-inference.ipynb")
