"""Lesson 7 -- Pretraining objectives.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/07-pretraining-objectives.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("7", 'Pretraining objectives',
                "T5 span corruption and BART's five noises on corpus text; target lengths and cost; denoising loss curves",
                '07-pretraining-objectives.ipynb')
