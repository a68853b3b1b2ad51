"""Lesson 1 -- The sequence-to-sequence problem (the RNN encoder-decoder).

Its notebook is ``lessons/01-the-sequence-to-sequence-problem.ipynb``; everything else of the
lesson is in this folder: ``experiments.py`` (the sections' measurements; section 4's in ``generation.py``), ``sweep.py`` (the
stored sweep's task, models and runs; ``python -m minitf.course.l01_seq2seq --measure``
measures it again), ``figures.py`` (its figures), ``formulas.py`` (its formulas, for Appendix
A), ``results/`` (its stored results) and ``homework/`` (its assignment). The notebook reads
this package (``from minitf.course import l01_seq2seq as l1``), which holds every name of
``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("1", "The sequence-to-sequence problem (the RNN encoder-decoder)",
                "the fixed vector's accuracy against source length, reversal, attention that removes the middle",
                "01-the-sequence-to-sequence-problem.ipynb")
