"""Lesson 9 -- Inference.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/09-inference.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("9", 'Inference',
                'encode once, decode many; two KV caches; greedy, sampling, beam search; copy and coverage; exposure bias',
                '09-inference.ipynb')
