"""Homework 2 -- Attention from scratch.

Five tasks, one per idea of Lesson 2.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 2.5 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw02 hw02_attention.py                  # every task: a score table
    minitf grade hw02 hw02_attention.py --task 2.3         # task 2.3 only

The tests compare what your functions return with minitf's own, on problems drawn from a seed (and, when the course grades it, on secret problems
of other sizes)
at every run, and put your heads into a real multi-head attention.  Your code runs in a
process of its own, with a time and memory limit; only the data it returns is checked.
Task 2.5 is scored by the course's autograder (its answer key is not handed out).

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Tasks 2.2 and 2.3 may use your own softmax and softmax_backward from task 2.1.
* No Python loop over the batch, the heads or the positions: every function here is a few
  array operations on whole (B, H, T, ...) arrays.
* Do not import ``minitf.grading`` (the grader), and do not modify your inputs in place.
* Float comparisons in the tests use stated tolerances; float64 inputs must give float64
  outputs, float32 inputs float32 outputs.  (Under NumPy 2 a NumPy scalar such as
  ``np.sqrt(Dh)`` is a float64 that turns float32 arrays into float64; ``math.sqrt(Dh)``,
  a Python float, does not.)

Shapes: B batch, H heads, T query length, S key/value length (in cross-attention the
target and the source length: T and S differ), D d_model, Dh = D / H the head width.
"""
from __future__ import annotations

import math

import numpy as np


# =====================================================================================
# Task 2.1 -- the softmax and its backward                  (Lesson 2, section 3)
# =====================================================================================
def softmax(z):
    """Task 2.1 (a): the softmax over the last axis, computed stably.

        p_i = exp(z_i) / sum_j exp(z_j)          over the last axis of z

    In attention the last axis is the keys: each query's row of weights sums to 1.
    Computed as written, ``exp`` overflows as soon as a score passes about 709 (float64)
    or 88 (float32), and a row whose scores are all very negative (a masked row holds
    -1e9) gives 0 / 0.  Subtract each row's own maximum first: softmax(z) = softmax(z - c)
    for any c that is constant along the row, and with c = max_j z_j every exponent is
    <= 0 and the largest is exactly 0, so the denominator is at least 1.

    Parameters
    ----------
    z : float array (..., S)
        Any number of leading axes.  Do not modify it.

    Returns
    -------
    p : array (..., S), the dtype of ``z``
        Entries in [0, 1], each row (along the last axis) summing to 1; never NaN.

    Not allowed: ``minitf.layers.softmax`` (softmax, log_softmax), ``minitf.loss.cross_entropy``,
    ``minitf.course.l02_attention.naive_softmax``.
    """
    raise NotImplementedError("Task 2.1: softmax is not written yet")


def softmax_backward(dp, p):
    """Task 2.1 (b): the gradient through the softmax, in its cheap form.

    Given p = softmax(z) and the upstream gradient dp = dL/dp, return dz = dL/dz.  Every
    p_j depends on every z_i: the Jacobian of one row is

        dp_j / dz_i = p_j ([i = j] - p_i),  i.e.  J = diag(p) - p p^T     (S, S)

    and dz = J^T dp.  Never build J (it is S times bigger than p): expand the product,

        dz_i = p_i (dp_i - sum_j dp_j p_j) = p_i (dp_i - <dp, p>)

    one inner product per row (over the last axis), then elementwise.  A row of p that is
    all zeros (a query with nothing to attend to, Lesson 3) gives a zero row.

    Parameters
    ----------
    dp : float array (..., S)
        dL/dp.  Do not modify it.
    p : float array (..., S)
        The softmax's output.  Do not modify it.

    Returns
    -------
    dz : array (..., S), the dtype of ``p``

    Not allowed: ``minitf.layers.softmax.softmax_backward``,
    ``minitf.course.l02_attention.softmax_jacobian``.
    """
    raise NotImplementedError("Task 2.1: softmax_backward is not written yet")


# =====================================================================================
# Task 2.2 -- scaled dot-product attention                  (Lesson 2, sections 1 and 2)
# =====================================================================================
def attention_forward(Q, K, V):
    """Task 2.2: scaled dot-product attention (Vaswani et al., 2017), every head at once.

        scores = Q K^T / sqrt(Dh)       (B, H, T, S)   query t against key s
        A      = softmax(scores)        (B, H, T, S)   over the keys: each row sums to 1
        out    = A V                    (B, H, T, Dh)  each query's weighted mean of values

    ``K^T`` swaps the last two axes only (``K.swapaxes(-1, -2)``; ``K.T`` would reverse all
    four).  Why sqrt(Dh): with entries of mean 0 and variance 1, q . k is a sum of Dh
    products, so its variance is Dh; dividing by sqrt(Dh) brings it back to 1 whatever the
    head width, and the softmax does not saturate (Lesson 2, section 2).

    Parameters
    ----------
    Q : float array (B, H, T, Dh)
        Queries.
    K : float array (B, H, S, Dh)
        Keys (S may differ from T: cross-attention).
    V : float array (B, H, S, Dh)
        Values, one per key.

    Do not modify them.

    Returns
    -------
    out : array (B, H, T, Dh), the dtype of Q
    A : array (B, H, T, S), the dtype of Q
        The attention weights (the backward needs them).

    Not allowed: ``minitf.attention.scaled_dot_product_attention``,
    ``MultiHeadAttention.forward``.
    """
    raise NotImplementedError("Task 2.2: attention_forward is not written yet")


# =====================================================================================
# Task 2.3 -- the attention backward, line by line          (Lesson 2, section 4)
# =====================================================================================
def attention_backward(dout, Q, K, V, A):
    """Task 2.3: the gradients of scaled dot-product attention, from dL/dout.

    Walk the forward backwards, one line at a time, each gradient shaped like its
    variable:

        forward: out = A V                  ->  dV = A^T dout,   dA = dout V^T
        forward: A = softmax(scores)        ->  dscores = the softmax backward of dA
        forward: scores = Q K^T / sqrt(Dh)  ->  dQ = dscores K / sqrt(Dh),
                                                dK = dscores^T Q / sqrt(Dh)

    Check each product's shapes: A^T is (S, T) and dout (T, Dh), so dV is (S, Dh) like V.
    Use the A you are given (the forward's weights; once Lesson 3's masks arrive some of
    its entries are exactly 0): do not recompute it from Q and K.

    Parameters
    ----------
    dout : float array (B, H, T, Dh)
        dL/dout.
    Q : float array (B, H, T, Dh)
    K, V : float arrays (B, H, S, Dh)
    A : float array (B, H, T, S)
        The attention weights the forward returned.

    Do not modify any of them.

    Returns
    -------
    dQ : array (B, H, T, Dh)
    dK : array (B, H, S, Dh)
    dV : array (B, H, S, Dh)
        All of the dtype of Q.  The tests compare them with minitf's backward in float64
        to a relative 1e-11: finite differences of the forward do not get that close.

    Not allowed: ``minitf.attention.scaled_dot_product_attention_backward``,
    ``MultiHeadAttention.backward``,
    ``minitf.gradcheck`` (numerical_gradient, check_gradients, check_layer).
    """
    raise NotImplementedError("Task 2.3: attention_backward is not written yet")


# =====================================================================================
# Task 2.4 -- many heads                                    (Lesson 2, section 5)
# =====================================================================================
def split_heads(x, H):
    """Task 2.4 (a): (B, T, D) -> (B, H, T, Dh), one reshape and one transpose, no loop.

    Head h gets the contiguous slice of features ``x[:, :, h*Dh:(h+1)*Dh]`` of *every*
    position: all heads see the whole sequence, each through its own Dh features::

        out[b, h, t, :] == x[b, t, h*Dh:(h+1)*Dh]

    Reshaping straight to (B, H, T, Dh) does not do that (draw the memory layout): split
    the last axis into (H, Dh) first, then bring H forward.

    Parameters
    ----------
    x : array (B, T, D)
        Do not modify it.
    H : int
        The number of heads; it divides D.

    Returns
    -------
    heads : array (B, H, T, Dh), Dh = D // H, the dtype of ``x``

    Not allowed: ``minitf.attention.split_heads``, ``MultiHeadAttention.project_q``,
    ``project_kv`` and ``project_qkv``.
    """
    raise NotImplementedError("Task 2.4: split_heads is not written yet")


def merge_heads(x):
    """Task 2.4 (b): (B, H, T, Dh) -> (B, T, D), the inverse of :func:`split_heads`.

    ``merge_heads(split_heads(x, H))`` is ``x`` again: position t's row is the
    concatenation of every head's output at position t, head 0 first::

        out[b, t, h*Dh:(h+1)*Dh] == x[b, h, t, :]

    Parameters
    ----------
    x : array (B, H, T, Dh)
        Do not modify it.

    Returns
    -------
    merged : array (B, T, H * Dh), the dtype of ``x``

    Not allowed: ``minitf.attention.merge_heads``.
    """
    raise NotImplementedError("Task 2.4: merge_heads is not written yet")


# =====================================================================================
# Task 2.5 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
