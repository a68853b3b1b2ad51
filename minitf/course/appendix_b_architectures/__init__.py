"""Appendix B -- architecture comparison: encoder-decoder, decoder-only, encoder-only and the
RNN encoder-decoder, measured on the same task.

Its notebook is ``lessons/B-architectures.ipynb``; its measurements are ``experiments.py`` and
its figures ``figures.py``.
"""
from ..kit.lessons import Lesson
from .experiments import *  # noqa: F401,F403  (the notebook's names: experiments.__all__)

LESSON = Lesson("B", "Appendix B: architecture comparison",
                "encoder-decoder, decoder-only, encoder-only, RNN: inputs and labels, caches, FLOPs, memory, quality",
                "B-architectures.ipynb")
