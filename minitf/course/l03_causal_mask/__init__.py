"""Lesson 3 -- The causal mask.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/03-the-causal-mask.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("3", 'The causal mask',
                'the leak measured; -1e9 vs -inf; the 0/1-after-softmax mistake; fully padded rows give no NaN',
                '03-the-causal-mask.ipynb')
