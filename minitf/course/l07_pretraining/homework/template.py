"""Homework 7 -- Pretraining objectives.

Four tasks, one per idea of Lesson 7.  Each task is a function whose body raises
``NotImplementedError`` until you write it; task 7.4 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw07 hw07_pretraining.py                  # every task: a score table
    minitf grade hw07 hw07_pretraining.py --task 7.2         # task 7.2 only

The tests compare what your functions return with minitf's own noise functions
(``minitf.data.noise``), which follow T5's and fairseq's reference code.  Your code runs in a
process of its own, with a time and memory limit; only the data it returns is checked.
Task 7.4 is scored by the course's autograder (its answer key is not handed out).

Why the noise is *given*
------------------------
Pretraining draws the noise at random (T5: ``random_spans_noise_mask``; BART: Poisson span
lengths at random places).  Here the random draw is done for you and handed in (a noise
mask, span starts and lengths), so that what you write -- the corruption itself -- has one
right answer that can be checked exactly.

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Do not modify your inputs in place: compute new arrays.
* Token ids are integers, of any integer dtype (unsigned too: a pretraining corpus is often
  stored as uint16); return 1-D integer NumPy arrays (int64 is fine).  Ordinary token
  ids are below the sentinels (``< vocab_size - n_sentinels``) and never equal ``mask_id``.

Shapes: L tokens in the text.  Every function works on one text, a 1-D array, as T5's and
fairseq's code do (a batch is built from many corrupted texts, padded afterwards).
"""
from __future__ import annotations

import numpy as np


# =====================================================================================
# Task 7.1 -- T5 span corruption from a given noise mask
# =====================================================================================
def span_corruption(tokens, noise_mask, vocab_size):
    """Task 7.1 (Lesson 7, section 2): T5's input and target from a text and its noise mask.

    Parameters
    ----------
    tokens : int array (L,)
        The text (no ``<eos>``).  Not modified.
    noise_mask : bool array (L,)
        True on the tokens that are noise.  A *span* is a maximal run of consecutive True
        (or, for the target, of consecutive False) positions.
    vocab_size : int
        V.  Sentinels are counted from the top of the vocabulary down, as T5's extra ids:
        the first span's sentinel is ``V - 1``, the second's ``V - 2``, and so on.

    Returns
    -------
    inputs : int array (L_in,)
        The text with every run of NOISE tokens replaced by one sentinel (T5's
        ``noise_span_to_unique_sentinel``): L_in = L - noise tokens + noise spans.
    targets : int array (L_tgt,)
        The text with every run of NON-noise tokens replaced by one sentinel, numbered the
        same way (T5's ``nonnoise_span_to_unique_sentinel``).

    T5's own test vector (its ``preprocessors_test``), V = 1000::

        tokens     10   11   12   13   14   15
        noise_mask  T    T    F    F    T    F
        inputs    [999, 12, 13, 998, 15]
        targets   [10, 11, 999, 14, 998]

    T5 draws its masks so that the text starts with non-noise (section 2 of the lesson);
    then each target sentinel comes just before the span it stands for, and a text that
    ends with non-noise gives the target its closing sentinel::

        tokens     the dog saw a red ball      noise: saw a, ball
        inputs     the dog <999> red <998>
        targets    <999> saw a <998> ball         (no closing sentinel: the text ends in noise)

    Both sequences are short of the whole text: the target is about 15 % + one sentinel per
    span.  (T5 appends ``<eos>`` to both; minitf's tasks append it to the target when the
    pair is batched.  Do not append it here.)

    Not allowed: ``minitf.data.noise.noise_span_to_unique_sentinel``,
    ``nonnoise_span_to_unique_sentinel``, ``span_corruption``, ``DenoisingTask.corrupt``.
    """
    raise NotImplementedError("Task 7.1: span_corruption is not written yet")


# =====================================================================================
# Task 7.2 -- the inverse: the original text from the input and the target
# =====================================================================================
def rebuild(inputs, targets, vocab_size, n_sentinels):
    """Task 7.2 (Lesson 7, section 2): undo :func:`span_corruption`.

    Parameters
    ----------
    inputs, targets : int arrays (L_in,), (L_tgt,)
        What ``span_corruption(tokens, noise_mask, vocab_size)`` returned, for some mask.
        Not modified.
    vocab_size : int
        V.
    n_sentinels : int
        Ids ``>= V - n_sentinels`` are sentinels; every other id is an ordinary token.

    Returns
    -------
    tokens : int array (L,)
        The original text, with no sentinel in it.

    The target's runs of ordinary tokens are the noise spans, in the order of the text;
    the input's sentinels, in order, mark where they were: the k-th sentinel of the input
    is replaced by the k-th run of ordinary tokens of the target.  (Do not match sentinel
    *ids* across the two: with a text that starts with noise, T5's test vector, the span
    that fills the input's ``999`` comes *before* the target's ``999``.)  For the vector of
    task 7.1: ``rebuild([999, 12, 13, 998, 15], [10, 11, 999, 14, 998], 1000, 16)`` is
    ``[10, 11, 12, 13, 14, 15]``.

    Not allowed: ``minitf.data.noise.rebuild_from_span_corruption``.
    """
    raise NotImplementedError("Task 7.2: rebuild is not written yet")


# =====================================================================================
# Task 7.3 -- BART's text infilling from given spans
# =====================================================================================
def text_infilling(tokens, starts, lengths, mask_id):
    """Task 7.3 (Lesson 7, section 3): BART's text infilling, the noise drawn beforehand.

    Parameters
    ----------
    tokens : int array (L,)
        The document.  Not modified.
    starts, lengths : int arrays (n,)
        The spans, in no particular order: span i covers ``tokens[starts[i] : starts[i] +
        lengths[i]]``.  Lengths come from Poisson(3), so some are 0.  Spans of length >= 1
        lie inside the text and do not overlap; a span of length 0 has ``0 <= start <= L``
        and never starts strictly inside another span.
    mask_id : int
        The ``<mask>`` token.

    Returns
    -------
    corrupted : int array (L')
        The document with
        * every span of length >= 1 replaced by ONE ``mask_id`` (whatever its length: the
          model must find out how many tokens are missing), and
        * one ``mask_id`` inserted before ``tokens[start]`` for every span of length 0 (at
          the end if ``start == L``; two such spans at one place insert two masks, and one
          at the start of a longer span goes before that span's mask).

    Example, mask_id = 1::

        tokens   [20, 21, 22, 23, 24, 25]
        starts   [4, 1, 6]      lengths [2, 2, 0]
        result   [20, 1, 23, 1, 1]
                 (21 22 -> one mask; 24 25 -> one mask; a mask inserted at the end)

    BART's target is the whole original document (not computed here).

    Not allowed: ``minitf.data.noise.mask_spans``, ``insert_masks``, ``text_infilling``,
    ``bart_noise``.
    """
    raise NotImplementedError("Task 7.3: text_infilling is not written yet")


# =====================================================================================
# Task 7.4 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
