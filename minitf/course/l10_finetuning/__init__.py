"""Lesson 10 -- Fine-tuning on supervised pairs.

Its notebook is ``lessons/10-fine-tuning-on-supervised-pairs.ipynb``; everything else of the
lesson is in this folder: ``experiments.py`` (the pretrained checkpoint and the stored sweep;
``python -m minitf.course.l10_finetuning`` makes them again), ``figures.py`` (its figures),
``results/`` (its stored results) and ``homework/`` (its assignment). The notebook reads this
package (``from minitf.course import l10_finetuning as l10``), which holds every name of
``experiments``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("10", "Fine-tuning on supervised pairs",
                "pretrained vs scratch by number of pairs; frozen encoder; early stopping on loss vs self-fed run; overfitting",
                "10-fine-tuning-on-supervised-pairs.ipynb")
