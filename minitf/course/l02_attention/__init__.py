"""Lesson 2 -- Attention from scratch.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/02-attention-from-scratch.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("2", 'Attention from scratch',
                'why 1/sqrt(Dh); the softmax Jacobian and its cheap form; the attention backward line by line; heads',
                '02-attention-from-scratch.ipynb')
