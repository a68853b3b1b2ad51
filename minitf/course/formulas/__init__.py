"""Appendix A: every formula of the course, linked to the minitf function that computes it and
checked numerically.

The registry (:mod:`.registry`) holds one :class:`Formula` per formula: an id, the lesson and
section that introduce it, its LaTeX, the dotted paths of the minitf functions that compute it
and a check.  A check computes the formula in plain NumPy, straight from its LaTeX, on a small
random float64 input, and compares with the linked functions' output (and, for a gradient,
with finite differences).  One module per lesson registers that lesson's formulas:

======  ==========================================================================================
lesson  formulas
======  ==========================================================================================
1       :mod:`.lesson01`: RNN, LSTM, GRU cells and their parameters, the LSTM backward, BPTT over a
        padded batch, additive and Luong attention, scheduled sampling's decays
2       :mod:`.lesson02`: scaled dot-product attention, softmax and its backward, the attention
        backward, multi-head attention
3       :mod:`.lesson03`: causal and padding masks, masked attention, the mask in the backward
4       :mod:`.lesson04`: cross-attention and its backward
5       :mod:`.lesson05`: LayerNorm and its backward, pre-LN and post-LN, dropout, FFN, ReLU, GELU,
        sinusoidal positions, warm-up schedules
6       :mod:`.lesson06`: input and output of the model, linear and embedding backward, parameters,
        FLOPs, activation memory
7       :mod:`.lesson07`: T5 span corruption and BART's token noise, counted
8       :mod:`.lesson08`: shift right, cross-entropy, p_hat - y, label smoothing, the encoder's
        gradient, error compounding, AdamW, gradient clipping
9       :mod:`.lesson09`: the KV caches, temperature, top-k, top-p, length normalisation
======  ==========================================================================================

:mod:`.notebook` turns the registry into ``lessons/A-formulas.ipynb``::

    python -m minitf.course.formulas            # run every check, print the reports
    python -m minitf.course.formulas --write    # regenerate the notebook from the registry

In a notebook::

    from minitf.course import formulas
    formulas.show("softmax-backward")           # the check's report; raises if it fails
"""
from .registry import (FORMULAS, Comparison, Formula, FormulaCheckFailed, Link, LinkError, Result, compare,
                       finite_differences, formula, get, link, resolve, run, run_all, show, summary)
from . import lesson01, lesson02, lesson03, lesson04, lesson05  # noqa: F401,E402  (registration, in course order)
from . import lesson06, lesson07, lesson08, lesson09  # noqa: F401,E402

__all__ = ["FORMULAS", "Comparison", "Formula", "FormulaCheckFailed", "Link", "LinkError", "Result", "compare",
           "finite_differences", "formula", "get", "link", "resolve", "run", "run_all", "show", "summary"]
