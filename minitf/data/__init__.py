"""From text to the three arrays a training step eats: a tokenizer, the shift right that
turns labels into decoder inputs, and padded batches.

The package's parts:

* :mod:`minitf.data.batches` -- :func:`shift_right`, :class:`Batch`, :func:`make_batch` (re-exported here);
* :mod:`minitf.data.tokenizer` -- :class:`CharTokenizer`, :class:`WordTokenizer` (re-exported here);
* :mod:`minitf.data.noise` -- the pretraining noises of Lesson 7: T5's span corruption, BART's five;
* :mod:`minitf.data.extended_vocab` -- the pointer-generator's extended vocabulary (Lesson 9);
* :mod:`minitf.data.tasks` -- the toy tasks (copy, reverse, sort, addition, dates) and :func:`get_task`;
* :mod:`minitf.data.corpus` -- a small generated language to pretrain on, and a task on it to
  fine-tune on (Lesson 10).

Teacher forcing in one picture (Lesson 8, section 2): :mod:`minitf.data.batches`.
"""
from .batches import IGNORE_INDEX, Batch, make_batch, shift_right
from .tokenizer import SPECIAL_TOKENS, CharTokenizer, WordTokenizer, tokenizer_from_dict

__all__ = ["IGNORE_INDEX", "SPECIAL_TOKENS", "CharTokenizer", "WordTokenizer", "tokenizer_from_dict",
           "shift_right", "Batch", "make_batch"]
