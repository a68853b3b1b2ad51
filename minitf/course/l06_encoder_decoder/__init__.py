"""Lesson 6 -- The whole encoder-decoder.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/06-the-whole-encoder-decoder.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("6", 'The whole encoder-decoder',
                'every shape from ids to logits; parameters, FLOPs and activation memory counted and measured',
                '06-the-whole-encoder-decoder.ipynb')
