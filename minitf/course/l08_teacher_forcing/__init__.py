"""Lesson 8 -- Training: teacher forcing & the loss.

Its notebook is ``lessons/08-training-teacher-forcing.ipynb``; everything else of the lesson
is in this folder: ``experiments.py`` (the set-up, the reference run, sections 1-2),
``loss.py`` (sections 3-4), ``data_parallel.py`` (section 3: a batch cut into shards), ``gap.py`` (section 5),
``leakage_curves.py`` (section 2's leaky runs, stored in ``results/``), ``figures.py`` (its figures),
``formulas.py`` (its formulas, for Appendix A) and ``homework/`` (its assignment). The
notebook reads this package (``from minitf.course import l08_teacher_forcing as l8``), which
holds every name of ``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("8", "Training: teacher forcing & the loss",
                "shifted inputs and the causal mask; the masked loss; dL/dH_enc over all blocks; exposure bias",
                "08-training-teacher-forcing.ipynb")
