"""Lesson 4 -- Cross-attention: joining the two stacks.

Everything of the lesson lives in this folder: its homework (``homework/``), and its runs,
measurements, figures and formulas.  Its notebook is ``lessons/04-cross-attention.ipynb``.
"""
from ..kit.lessons import Lesson

LESSON = Lesson("4", 'Cross-attention: joining the two stacks',
                "alignment heatmaps of a trained model; K and V once per layer; dX_q, dX_kv and each block's share",
                '04-cross-attention.ipynb')
