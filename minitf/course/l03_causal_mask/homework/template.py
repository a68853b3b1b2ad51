"""Homework 3 -- The causal mask.

Five tasks, one per idea of Lesson 3.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 3.5 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw03 hw03_masks.py                  # every task: a score table
    minitf grade hw03 hw03_masks.py --task 3.2         # task 3.2 only

Your masks are also put to work inside minitf's own attention (a chunk of queries decoded
against a cache of keys must agree with the full causal pass), and your leak measurement
runs on a real encoder-decoder.  Your code runs in a process of its own, with a time and
memory limit; only the data it returns is checked.  Task 3.5 is scored by the course's
autograder (its answer key is not handed out).

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Task 3.2 asks for the softmax too: it is three lines, and where the mask meets it is
  the point of the task.
* Do not import ``minitf.grading`` (the grader).
* Do not modify the arrays you are given; return new ones.
* Float comparisons in the tests use stated tolerances; float64 inputs must give float64
  outputs, float32 inputs float32 outputs.  Fully masked rows (padding) are normal input:
  they must never give NaN.

Shapes: B batch, H heads, T query length, S key length, Dh head width.  Scores and
attention weights are (B, H, T, S): query t of head h of example b, against key s.
"""
from __future__ import annotations

import numpy as np

MASK_VALUE = -1e9  # what an additive mask adds to a blocked score (minitf.masks.MASK_VALUE)


# =====================================================================================
# Task 3.1 -- the masks (Lesson 3, sections 1 and 3)
# =====================================================================================
def causal_mask(T, S=None, offset=0, dtype=np.float32):
    """Task 3.1 (a): the causal mask, (T, S), *additive*.

    Entry [t, s] is added to the score of query t against key s: 0 where the query may look
    at the key, ``MASK_VALUE`` (a large negative, **finite** number) where it may not.  A
    query may look at its own position and every earlier one, never a later one.

    Query t sits at absolute position ``offset + t``; key s at absolute position s.  With
    ``offset = 0`` and ``S = T`` this is the training mask.  When decoding with a cache of
    keys, the T new queries come after ``offset`` positions already computed: e.g. one new
    token (T = 1) after 4 cached ones (offset = 4) sees all S = 5 keys::

        causal_mask(3)                causal_mask(2, offset=3)        (0 = attend, x = MASK_VALUE)
            s: 0 1 2                      s: 0 1 2 3 4
        t=0    0 x x                  t=0    0 0 0 0 x        query 0 is position 3
        t=1    0 0 x                  t=1    0 0 0 0 0        query 1 is position 4
        t=2    0 0 0

    Parameters
    ----------
    T : int
        The number of queries, T >= 1.
    S : int or None
        The number of keys; ``None`` means ``offset + T`` (every position so far).  Keys at
        positions beyond a query's own are blocked, however large S is.
    offset : int
        The absolute position of query 0, >= 0.
    dtype : float32 or float64
        The dtype of the result.

    Returns
    -------
    mask : array (T, S) of ``dtype``

    Not allowed: ``minitf.masks.causal_mask``.
    """
    raise NotImplementedError("Task 3.1: causal_mask is not written yet")


def padding_mask(ids, pad_id, dtype=np.float32):
    """Task 3.1 (b): the key-padding mask, (B, 1, 1, S), *additive*.

    Entry [b, 0, 0, s] is ``MASK_VALUE`` where ``ids[b, s]`` is padding, else 0.  It
    blocks padded *keys*: no query may take a value from a padded position.  The two axes
    of size 1 make it broadcast against the scores (B, H, T, S), over every head and every
    query; added to a causal mask (T, S) it gives (B, 1, T, S).

    Parameters
    ----------
    ids : integer array (B, S)
        Token ids, ``pad_id`` at padding.  Do not modify it.
    pad_id : int
    dtype : float32 or float64

    Returns
    -------
    mask : array (B, 1, 1, S) of ``dtype``

    Not allowed: ``minitf.masks.key_padding_mask`` (nor ``EncoderDecoder.source_mask``).
    """
    raise NotImplementedError("Task 3.1: padding_mask is not written yet")


# =====================================================================================
# Task 3.2 -- masking before the softmax (Lesson 3, sections 2 and 3)
# =====================================================================================
def masked_attention_forward(Q, K, V, mask=None):
    """Task 3.2: scaled dot-product attention under an additive mask.

        scores = Q K^T / sqrt(Dh) + mask       (B, H, T, S)   the mask is added BEFORE the softmax
        A      = softmax(scores)               (B, H, T, S)   over the keys (last axis)
        out    = A V                           (B, H, T, Dh)

    Write the softmax yourself, stably (subtract each row's maximum before ``exp``).

    A query whose *every* key is blocked (a fully masked row: a padded query of a
    left-padded sequence, say) has nothing to attend to.  Its weights must be all zero,
    hence its output zero -- not a uniform average over blocked keys, and never NaN.  A
    row is fully masked when every mask entry of that row is ``<= MASK_VALUE / 2`` (masks
    added together hold -2e9 too).

    Parameters
    ----------
    Q : float array (B, H, T, Dh)
    K, V : float arrays (B, H, S, Dh), Q's dtype
    mask : float array or None
        Additive, Q's dtype, broadcastable to (B, H, T, S): (T, S), (B, 1, 1, S) or
        (B, 1, T, S); entries 0 (attend) or a large negative finite number (blocked).
        ``None``: nothing is masked.

    Returns
    -------
    out : array (B, H, T, Dh), Q's dtype
    A : array (B, H, T, S), Q's dtype
        The attention weights: each row sums to 1, or is all zero if fully masked.

    Not allowed: ``minitf.attention.scaled_dot_product_attention``,
    ``MultiHeadAttention.forward``, ``minitf.layers.softmax.softmax``.
    """
    raise NotImplementedError("Task 3.2: masked_attention_forward is not written yet")


# =====================================================================================
# Task 3.3 -- the mask in the backward (Lesson 3, section 4)
# =====================================================================================
def masked_attention_backward(dout, Q, K, V, A):
    """Task 3.3: the backward of :func:`masked_attention_forward`.

    Given dL/dout and what the forward kept (Q, K, V and its weights A, as in minitf's
    ``AttentionCache``), return dL/dQ, dL/dK, dL/dV:

        dV      = A^T dout                                   (B, H, S, Dh)
        dA      = dout V^T                                   (B, H, T, S)
        dscores = A * (dA - sum_s dA * A)                    (B, H, T, S)  the softmax backward
        dQ      = dscores K / sqrt(Dh)                       (B, H, T, Dh)
        dK      = dscores^T Q / sqrt(Dh)                     (B, H, S, Dh)

    There is no mask argument.  Think about why: where does the mask live after the
    forward?  What does the gradient of a blocked score come to, and what about a fully
    masked row (A all zero)?  The tests check that blocked scores give *exactly* zero
    gradient: a padded key gets dK = dV = 0, a fully masked query dQ = 0, with no NaN.

    Parameters
    ----------
    dout : float array (B, H, T, Dh)
    Q : float array (B, H, T, Dh)
    K, V : float arrays (B, H, S, Dh)
    A : float array (B, H, T, S)
        The forward's attention weights (0 on blocked keys, all 0 on fully masked rows).
    Do not modify any of them.

    Returns
    -------
    dQ, dK, dV : arrays shaped like Q, K, V, of their dtype

    Not allowed: ``minitf.attention.scaled_dot_product_attention_backward``,
    ``MultiHeadAttention.backward``, ``minitf.layers.softmax.softmax_backward``, and
    numerical gradients (``minitf.gradcheck``): the tests compare with minitf's backward at
    a tolerance finite differences cannot reach.
    """
    raise NotImplementedError("Task 3.3: masked_attention_backward is not written yet")


# =====================================================================================
# Task 3.4 -- the leak, measured (Lesson 3, section 1)
# =====================================================================================
def future_leak(model, src_ids, decoder_input_ids, replacement_ids):
    """Task 3.4: how much the logits at position t move when only the inputs after t change.

    For each position t = 0 .. T-1: build a copy of ``decoder_input_ids`` whose positions
    t+1 .. T-1 hold ``replacement_ids``' tokens at those positions (positions 0 .. t
    unchanged), run the model on it, and record

        leak[t] = max over b and v of | logits'[b, t, v] - logits[b, t, v] |

    where ``logits`` are the model's logits for the original ``decoder_input_ids``.  The
    last position has no future: ``leak[T-1] = 0``.

    Under the causal mask every leak[t] is 0: position t cannot see what comes after it.
    The tests run your function on a decoder built with the mask and on one with the same
    weights built without it (``causal=False``), where the future leaks in.

    Measure the model as it is used at inference: with dropout off.  The model may be
    handed to you in training mode; ``with model.evaluating(): ...`` switches dropout off
    inside the block.

    The model (a ``minitf.models.EncoderDecoder``) offers::

        logits, _ = model.forward(src_ids, decoder_input_ids)      # (B, T, V)

    Parameters
    ----------
    model : EncoderDecoder
    src_ids : integer array (B, S)
    decoder_input_ids : integer array (B, T)
        Do not modify it.
    replacement_ids : integer array (B, T)
        The tokens that replace the future (its positions 0 .. t are not used for leak[t]).

    Returns
    -------
    leak : float64 array (T,)

    Not allowed: ``minitf.course.l03_causal_mask.future_influence``.
    """
    raise NotImplementedError("Task 3.4: future_leak is not written yet")


# =====================================================================================
# Task 3.5 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
