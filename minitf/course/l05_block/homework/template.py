"""Homework 5 -- The block.

Five tasks, one per idea of Lesson 5.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 5.5 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like (a helper shared by two tasks is fine).

Check your work as often as you like:

    minitf grade hw05 hw05_the_block.py                  # every task: a score table
    minitf grade hw05 hw05_the_block.py --task 5.2         # task 5.2 only

The tests load the same numbers into minitf's own layers (``LayerNorm``, the sub-layer of
``minitf.blocks``, ``FeedForward``, ``sinusoidal_table``) and compare what your functions
return with what they compute.  Your code runs in a process of its own, with a time and
memory limit; only the data it returns is checked.  Task 5.5 is scored by the course's
autograder (its answer key is not handed out).

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Task 5.2 may use your task 5.1 functions (it is about *where* the norm sits, not the
  norm itself).
* Do not import ``minitf.grading`` (the grader).
* Do not modify your inputs in place (the arrays of ``params`` included): compute new arrays.
* Float comparisons use stated tolerances; float64 inputs must give float64 outputs,
  float32 inputs float32 outputs.  The backward passes are checked in float64 to about
  1e-10: write them out, finite differences are not precise enough.

Shapes: B batch, T positions, D d_model, F the feed-forward width.  Every layer of this
homework acts on the last axis, (..., D): position by position, example by example.  The
weights are stored for ``x @ W``, as in the papers and in minitf: W (D_in, D_out).
"""
from __future__ import annotations

import math

import numpy as np


# =====================================================================================
# Task 5.1 -- LayerNorm and its backward (Lesson 5, section 2)
# =====================================================================================
def layernorm_forward(x, gamma, beta, eps=1e-5):
    """Task 5.1 (a): layer normalisation over the last axis (Ba, Kiros & Hinton, 2016).

    Each position's D features are normalised on their own, whatever the other examples
    of the batch or the other positions hold::

        mu      = mean(x)              over the last axis       (..., 1)
        sigma^2 = mean((x - mu)^2)     over the last axis, the *biased* variance (divide by D)
        x_hat   = (x - mu) / sqrt(sigma^2 + eps)                 (..., D)   eps INSIDE the root
        y       = gamma * x_hat + beta                           (..., D)

    Parameters
    ----------
    x : float array (..., D)
        Any number of leading axes: (D,), (N, D), (B, T, D).  Do not modify it.
    gamma, beta : float arrays (D,), x's dtype
    eps : float

    Returns
    -------
    y : array shaped like x, of x's dtype

    Not allowed: ``minitf.layers.LayerNorm`` (forward and backward).
    """
    raise NotImplementedError("Task 5.1: layernorm_forward is not written yet")


def layernorm_backward(dy, x, gamma, eps=1e-5):
    """Task 5.1 (b): the backward of :func:`layernorm_forward`: (dx, dgamma, dbeta).

    Recompute what you need from ``x`` (x_hat and 1 / sqrt(sigma^2 + eps)).  Then::

        dgamma = sum of dy * x_hat  over every leading axis     (D,)
        dbeta  = sum of dy          over every leading axis     (D,)
        dx_hat = dy * gamma                                      (..., D)
        dx     = ?                                               (..., D)

    mu and sigma are functions of x: x_j reaches y_i three ways, directly, through the mean
    and through the standard deviation.  Treating mu and sigma as constants gives
    ``dx = dx_hat / sqrt(sigma^2 + eps)``, which is wrong.  Derive the other two terms
    (the lesson's section 2 does it with the Jacobian); what must ``sum(dx)`` over a row be,
    given that adding a constant to a row of x changes nothing?

    Parameters
    ----------
    dy : float array (..., D), dL/dy
    x : float array (..., D), the forward's input
    gamma : float array (D,)
    eps : float
    Do not modify any of them.

    Returns
    -------
    dx : array shaped like x
    dgamma, dbeta : arrays (D,)
    All of x's dtype.

    Not allowed: ``minitf.layers.LayerNorm``, ``minitf.course.l05_block.layernorm_jacobian``
    and numerical gradients (``minitf.gradcheck``).
    """
    raise NotImplementedError("Task 5.1: layernorm_backward is not written yet")


# =====================================================================================
# Task 5.2 -- the residual sub-layer, pre-LN and post-LN (Lesson 5, sections 1 and 3)
# =====================================================================================
def sublayer_forward(x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (a): one residual sub-layer around f(h) = h @ W + b, in either arrangement.

    In a transformer block f is the attention or the feed-forward network; here it is a
    linear map, so that the whole chain is yours to write::

        pre-LN  (norm_first=True):    y = x + f(LN(x))        the stream x itself is never normalised
        post-LN (norm_first=False):   y = LN(x + f(x))        the sum is normalised

    LN is the LayerNorm of task 5.1 with ``gamma``, ``beta`` and ``eps`` (use your
    ``layernorm_forward``, or minitf's ``LayerNorm``).

    Parameters
    ----------
    x : float array (B, T, D), the residual stream
    W : float array (D, D);  b : float array (D,)
    gamma, beta : float arrays (D,)
    norm_first : bool
    eps : float
    Do not modify any of them.

    Returns
    -------
    y : array (B, T, D), x's dtype

    Not allowed: ``minitf.blocks.sublayer_forward`` (nor the blocks' ``forward``).
    """
    raise NotImplementedError("Task 5.2: sublayer_forward is not written yet")


def sublayer_backward(dy, x, W, b, gamma, beta, norm_first, eps=1e-5):
    """Task 5.2 (b): the backward of :func:`sublayer_forward`.

    Undo the forward in reverse order.  Wherever a value feeds two paths, its gradient
    is the sum of the two: ``x`` feeds the identity path and the branch, in both
    arrangements.  Where does LayerNorm's backward go in each (and with which input's
    statistics)?

    Parameters
    ----------
    dy : float array (B, T, D), dL/dy
    x, W, b, gamma, beta, norm_first, eps : as in :func:`sublayer_forward`
    Do not modify any of them.

    Returns
    -------
    grads : dict of arrays, x's dtype
        ``"dx"`` (B, T, D), ``"dW"`` (D, D), ``"db"`` (D,), ``"dgamma"`` (D,), ``"dbeta"`` (D,)

    Not allowed: ``minitf.blocks.sublayer_backward`` (nor the blocks' ``backward``),
    numerical gradients (``minitf.gradcheck``).
    """
    raise NotImplementedError("Task 5.2: sublayer_backward is not written yet")


# =====================================================================================
# Task 5.3 -- the feed-forward network (Lesson 5, section 4)
# =====================================================================================
def feedforward_forward(x, params, activation):
    """Task 5.3 (a): the position-wise feed-forward network::

        a = x @ W_1 + b_1            (..., F)   the pre-activation
        h = act(a)                   (..., F)
        y = h @ W_2 + b_2            (..., D)

    ``activation`` is ``"relu"`` or ``"gelu"``:

        relu(a) = max(0, a)
        gelu(a) = a * Phi(a),   Phi(a) = (1 + erf(a / sqrt 2)) / 2   the standard normal CDF

    GELU here is the exact, erf form (minitf's and PyTorch's default ``"gelu"``), not its
    tanh approximation.  NumPy has no ``erf``: apply ``math.erf`` entry by entry
    (``np.vectorize(math.erf)``), or use ``minitf.layers.activations.erf``.

    Parameters
    ----------
    x : float array (..., D).  Do not modify it.
    params : dict of float arrays
        ``"W_1"`` (D, F), ``"b_1"`` (F,), ``"W_2"`` (F, D), ``"b_2"`` (D,)
    activation : "relu" or "gelu"

    Returns
    -------
    y : array shaped like x, of x's dtype

    Not allowed: ``minitf.layers.FeedForward``, the activations of
    ``minitf.layers.activations`` (``relu_forward``, ``gelu_forward``, ...) and
    ``minitf.layers.Linear`` / ``affine_forward`` / ``affine_backward``.
    """
    raise NotImplementedError("Task 5.3: feedforward_forward is not written yet")


def feedforward_backward(dy, x, params, activation):
    """Task 5.3 (b): the backward of :func:`feedforward_forward`.

    Recompute the forward's a and h, then undo it line by line::

        forward: y = h @ W_2 + b_2     ->  dh, dW_2, db_2
        forward: h = act(a)            ->  da = dh * act'(a)
        forward: a = x @ W_1 + b_1     ->  dx, dW_1, db_1

    act'(a) is the derivative with respect to the pre-activation a.  For ReLU take 0 at
    a = 0 exactly (as minitf and PyTorch do); for GELU differentiate a * Phi(a) with the
    product rule (phi, the normal density, is Phi's derivative).  A weight's gradient has
    the weight's shape; a bias gradient sums over every position of every example.

    Parameters
    ----------
    dy : float array (..., D), dL/dy
    x, params, activation : as in :func:`feedforward_forward`
    Do not modify any of them.

    Returns
    -------
    grads : dict of arrays, x's dtype
        ``"dx"`` shaped like x, ``"dW_1"`` (D, F), ``"db_1"`` (F,), ``"dW_2"`` (F, D), ``"db_2"`` (D,)

    Not allowed: as in :func:`feedforward_forward`, and numerical gradients (``minitf.gradcheck``).
    """
    raise NotImplementedError("Task 5.3: feedforward_backward is not written yet")


# =====================================================================================
# Task 5.4 -- positions (Lesson 5, section 5)
# =====================================================================================
def sinusoidal_positions(max_len, d_model):
    """Task 5.4: the fixed sinusoidal position table of Vaswani et al. (2017), as minitf's.

    Row t is added to the embedding of the token at position t (t = 0, 1, ..., counted from
    0).  Column pair (2i, 2i+1) is one frequency, sine in the even column and cosine in the
    odd one next to it (interleaved, not in two halves)::

        P[t, 2i]   = sin(t / 10000^(2i / D))
        P[t, 2i+1] = cos(t / 10000^(2i / D))        the same frequency as column 2i

    for i = 0, 1, ..., and D = d_model.  When D is odd the last column is a sine with no
    cosine partner.

    Parameters
    ----------
    max_len : int >= 1, the number of positions (rows)
    d_model : int >= 1, D

    Returns
    -------
    P : float64 array (max_len, D)

    Not allowed: ``minitf.layers.sinusoidal_table`` (nor ``PositionalEncoding``).
    """
    raise NotImplementedError("Task 5.4: sinusoidal_positions is not written yet")


# =====================================================================================
# Task 5.5 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
