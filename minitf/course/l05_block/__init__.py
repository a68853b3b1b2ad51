"""Lesson 5 -- The block.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/05-the-block.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("5", 'The block',
                "residuals, LayerNorm's backward, pre-LN vs post-LN and warm-up, ReLU vs GELU, positions",
                '05-the-block.ipynb')
