"""From text to the three arrays a training step eats: a tokenizer, the shift right that
turns labels into decoder inputs, and padded batches.

The package's parts:

* :mod:`minitf.data.batches` -- :func:`shift_right`, :class:`Batch`, :func:`make_batch` (re-exported here);
* :mod:`minitf.data.tokenizer` -- :class:`CharTokenizer`, :class:`WordTokenizer` (re-exported here);
* :mod:`minitf.data.noise` -- the pretraining noises of Lesson 7: T5's span corruption, BART's five;
* :mod:`minitf.data.tasks` -- the toy tasks (copy, reverse, sort, addition, dates) and :func:`get_task`;
* :mod:`minitf.data.corpus` -- a small generated language to pretrain on, and a task on it to
  fine-tune on (Lesson 10).

Teacher forcing in one picture (Lesson 8, section 2).  For a target ``y = "cab"`` with
``<eos>`` appended and ``<bos>`` as the start token::

    position t          0      1      2      3
    labels              c      a      b      <eos>     what position t must predict: y_t
    decoder_input_ids   <bos>  c      a      b         what position t is fed:      y_{t-1}

``decoder_input_ids`` is ``labels`` shifted right by one with the start token in front,
exactly as Hugging Face's ``shift_tokens_right`` builds it.  In a padded batch the label
padding is ``IGNORE_INDEX`` (-100): those positions get no loss and no gradient, and the
mean loss divides by :attr:`Batch.n_tokens`, the number of *real* target tokens.
"""
from .batches import IGNORE_INDEX, Batch, make_batch, shift_right
from .tokenizer import SPECIAL_TOKENS, CharTokenizer, WordTokenizer, tokenizer_from_dict

__all__ = ["IGNORE_INDEX", "SPECIAL_TOKENS", "CharTokenizer", "WordTokenizer", "tokenizer_from_dict",
           "shift_right", "Batch", "make_batch"]
