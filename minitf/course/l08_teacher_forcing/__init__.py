"""Lesson 8 -- Training: teacher forcing & the loss.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/08-training-teacher-forcing.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("8", 'Training: teacher forcing & the loss',
                'shifted inputs and the causal mask; the masked loss; dL/dH_enc over all blocks; exposure bias',
                '08-training-teacher-forcing.ipynb')
