"""Lesson 10 -- Fine-tuning on supervised pairs.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/10-fine-tuning-on-supervised-pairs.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("10", 'Fine-tuning on supervised pairs',
                'pretrained vs scratch by number of pairs; frozen encoder; early stopping on loss vs self-fed run; overfitting',
                '10-fine-tuning-on-supervised-pairs.ipynb')
