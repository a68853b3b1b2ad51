"""Lesson 1 -- The sequence-to-sequence problem (the RNN encoder-decoder).

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/01-the-sequence-to-sequence-problem.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("1", 'The sequence-to-sequence problem (the RNN encoder-decoder)',
                "the fixed vector's accuracy against source length, reversal, attention that removes the middle",
                '01-the-sequence-to-sequence-problem.ipynb')
