"""minitf: encoder-decoder transformers in NumPy, every backward pass written by hand.

The most used names are importable from here; everything else lives in one module per
idea.  Importing minitf loads NumPy only: no matplotlib, no torch, no global settings.

Where things live
-----------------
* **Model code**, read line by line, forward next to backward: ``layers/`` ->
  ``attention.py``, ``masks.py`` -> ``blocks.py`` -> ``models/`` (encoder-decoder,
  decoder-only, encoder-only, pointer-generator, RNN encoder-decoder); ``rnn/`` (recurrent
  cells, BPTT, additive attention, scheduled sampling); ``loss.py``, ``optim.py``,
  ``schedules.py``, ``training.py``, ``scheduled_sampling.py``, ``pretraining.py``;
  ``decoding/`` (caches, logit filters, greedy, sampling, beam search); ``data/``
  (tokenizers, batches, the toy tasks, pretraining noise, the corpus); ``config.py``,
  ``module.py``, ``checks.py``, ``gradcheck.py``, ``checkpoint.py``, ``torch_bridge.py``,
  ``process.py`` (the allocator setting training runs with).
* **Course code**, which measures and draws: ``course/``, one folder per lesson
  (``course/l09_inference/``: its runs and measurements, figures, formulas for Appendix A and
  homework) and ``course/kit/`` (what every lesson shares: the lesson run, the stored sweep,
  the figure key, style, registry and rendering, the FLOP and byte counts).
  :mod:`minitf.course` maps every lesson to its experiments, figures, notebook and homework.
* **Tooling** around the course: ``grading/`` (the grader, its pytest plugin, the sandbox the
  student's code runs in, the Gradescope bundle), ``bench/`` (benchmarks), ``cli/`` (the
  ``minitf`` command, one module per sub-command).

Imports point down that list: model code never imports course code or tooling.

Dimension letters, in every shape comment and docstring
-------------------------------------------------------
B batch, S source length, T target length (in attention: query length T, key length S),
D d_model, H heads, Dh = D / H head width, F d_ff feed-forward width, V vocabulary,
L layers.  Decoding adds G rows per example (beams or samples), N = B * G rows and T_max
the cache's capacity (:mod:`minitf.decoding`).
"""
from .config import ModelConfig
from .data import IGNORE_INDEX, Batch, CharTokenizer, make_batch, shift_right
from .gradcheck import check_gradients, check_layer, numerical_gradient, rel_error
from .loss import cross_entropy
from .masks import MASK_VALUE, causal_mask, key_padding_mask
from .models import DecoderOnly, EncoderDecoder
from .data.tasks import get_task

__version__ = "0.1.0"

__all__ = [
    "IGNORE_INDEX", "MASK_VALUE", "Batch", "CharTokenizer", "DecoderOnly", "EncoderDecoder", "ModelConfig",
    "causal_mask", "check_gradients", "check_layer", "cross_entropy", "get_task", "key_padding_mask",
    "make_batch", "numerical_gradient", "rel_error", "shift_right",
]
