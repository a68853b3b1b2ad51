"""Homework 4 -- Cross-attention: joining the two stacks.

Four tasks, one per idea of Lesson 4.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 4.4 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like (a helper shared by two tasks is fine).

Check your work as often as you like:

    minitf grade hw04 hw04_cross_attention.py                  # every task: a score table
    minitf grade hw04 hw04_cross_attention.py --task 4.3         # task 4.3 only

The tests load your ``params`` into minitf's own ``MultiHeadAttention`` and compare what
your functions return with what it computes.  Your code runs in a process of its own,
with a time and memory limit; only the data it returns is checked.  Task 4.4 is scored by
the course's autograder (its answer key is not handed out).

The weights
-----------
Every function receives the weights of one cross-attention as a dict ``params`` of NumPy
arrays, with minitf's names and layout (``x @ W``, as in the papers)::

    params["W_q"], params["W_k"], params["W_v"], params["W_o"]    (D, D)
    params["b_q"], params["b_k"], params["b_v"], params["b_o"]    (D,)

and the number of heads ``H`` (D = H * Dh).  The forward of Lesson 4, section 1::

    Q = split(X_q  @ W_q + b_q)       (B, H, T, Dh)    queries: the decoder stream
    K = split(X_kv @ W_k + b_k)       (B, H, S, Dh)    keys:    the encoder output H_enc
    V = split(X_kv @ W_v + b_v)       (B, H, S, Dh)    values:  the encoder output H_enc
    A = softmax(Q K^T / sqrt(Dh) + source mask)        (B, H, T, S)   over the S keys
    O = merge(A V)                    (B, T, D)
    Y = O @ W_o + b_o                 (B, T, D)

``split`` turns (B, n, D) into (B, H, n, Dh): head h owns the columns h*Dh .. (h+1)*Dh-1;
``merge`` is its inverse, putting the heads side by side again.

The source mask
---------------
``src_mask`` is (B, S), *additive*, one row per example: 0 at a real source token,
``MASK_VALUE`` (-1e9) at padding.  It is added to every head's scores of every query: in
the (B, H, T, S) scores it is ``src_mask[:, None, None, :]`` (minitf's (B, 1, 1, S), as
``model.source_mask`` returns it).  A source with no real token at all (a row of
``src_mask`` that is all ``MASK_VALUE``) gives all-zero weights, as in minitf (Lesson 3):
never NaN, never a softmax over padding.

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Do not modify your inputs in place (the arrays of ``params`` included): compute new arrays.
* Float comparisons use stated tolerances; float64 inputs must give float64 outputs,
  float32 inputs float32 outputs.  Task 4.3 is checked in float64 to about 1e-10:
  write the backward out, finite differences are not precise enough.
* The scores are not always small (some problems have them in the thousands), and padding
  may sit anywhere in a source: write the softmax so that it cannot overflow.

Shapes: B batch, S source length, T target length, D d_model, H heads, Dh = D / H.
"""
from __future__ import annotations

MASK_VALUE = -1e9  # what src_mask holds at padding (minitf.masks.MASK_VALUE)


# =====================================================================================
# Task 4.1 -- queries from the decoder, keys and values from the encoder
# =====================================================================================
def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    """Task 4.1: the forward of one cross-attention (Lesson 4, sections 1 and 2).

    The decoder asks, the encoder answers: the T queries come from the decoder stream
    ``X_q``, the S keys and values from the encoder output ``X_kv`` (H_enc).  Each head's
    weight matrix is T x S: row t holds query t's weights over the S source positions and
    sums to 1 over them (padding gets exactly 0).  Nothing needs T = S.

    The only mask is the source padding.  There is **no causal mask** here: the source is
    known in full before the first target token is written, so query t may look at every
    real source position, before or after t.

    Parameters
    ----------
    X_q : float array (B, T, D)
        The decoder stream (queries).  Do not modify it.
    X_kv : float array (B, S, D)
        The encoder output H_enc (keys and values).  Do not modify it.
    params : dict of arrays
        W_q, W_k, W_v, W_o (D, D) and b_q, b_k, b_v, b_o (D,); see the module docstring.
    H : int
        The number of heads; D is a multiple of H, Dh = D / H.
    src_mask : float array (B, S)
        0 at real source tokens, MASK_VALUE at padding (additive, before the softmax).

    Returns
    -------
    Y : array (B, T, D), the dtype of ``X_q``
        The output, shaped like the decoder stream (the block adds it to its residual).
    A : array (B, H, T, S), the dtype of ``X_q``
        The attention weights.

    Not allowed: ``MultiHeadAttention.forward``, ``.project_q``, ``.project_kv``, ``.project_qkv``,
    ``minitf.attention.scaled_dot_product_attention`` (and what calls it:
    ``DecoderBlock.forward``, the decoding steps).
    """
    raise NotImplementedError("Task 4.1: cross_attention_forward is not written yet")


# =====================================================================================
# Task 4.2 -- keys and values computed once per layer
# =====================================================================================
def encoder_keys_values(H_enc, params, H):
    """Task 4.2 (a): the keys and values of one cross-attention, split into heads.

    K = split(H_enc W_k + b_k) and V = split(H_enc W_v + b_v) depend on the encoder output
    and the layer's weights only -- not on the decoder.  At generation time they are
    computed once per example, before the first step, and reused at every step (the
    cross-attention cache of Lesson 9; Lesson 4, section 4).

    Parameters
    ----------
    H_enc : float array (B, S, D)
        The encoder output.  Do not modify it.
    params : dict of arrays
        As in :func:`cross_attention_forward` (only W_k, b_k, W_v, b_v are needed).
    H : int
        The number of heads.

    Returns
    -------
    K, V : arrays (B, H, S, Dh), the dtype of ``H_enc``
        ``K[b, h]`` is head h's keys: columns h*Dh .. (h+1)*Dh-1 of H_enc W_k + b_k.

    Not allowed: ``MultiHeadAttention.project_kv`` (and ``project_q``, ``project_qkv``, ``forward``),
    ``minitf.decoding.cache.init_cache``, ``start_decoding``.
    """
    raise NotImplementedError("Task 4.2: encoder_keys_values is not written yet")


def cross_attention_step(x_t, K, V, params, src_mask):
    """Task 4.2 (b): cross-attention for ONE decoder position, from the cached K and V.

    At decoding step t only the newest decoder position's state ``x_t`` is new.  Project
    it to a query, attend over the cached keys and values of the whole source (padding
    masked), merge the heads and project the output.  The result must equal row t of
    :func:`cross_attention_forward`'s ``Y`` on the whole target: cross-attention has no
    causal mask, so query t's output depends on query t alone.

    Parameters
    ----------
    x_t : float array (B, D)
        The decoder stream at one position (one query per example).  Do not modify it.
    K, V : float arrays (B, H, S, Dh)
        From :func:`encoder_keys_values`, computed once.  Do not modify them: they are
        reused at every step.
    params : dict of arrays
        As in :func:`cross_attention_forward` (only W_q, b_q, W_o, b_o are needed).
    src_mask : float array (B, S)
        As in :func:`cross_attention_forward`.

    Returns
    -------
    y_t : array (B, D), the dtype of ``x_t``

    Not allowed: as in :func:`encoder_keys_values`, and
    ``minitf.decoding.decode_step`` (and the models' own ``decode_step``).
    """
    raise NotImplementedError("Task 4.2: cross_attention_step is not written yet")


# =====================================================================================
# Task 4.3 -- the gradient through cross-attention
# =====================================================================================
def cross_attention_backward(dY, X_q, X_kv, params, H, src_mask):
    """Task 4.3: the backward of :func:`cross_attention_forward` (Lesson 4, section 5).

    Recompute what you need of the forward, then run it in reverse.  The two inputs are
    different tensors, so their gradients are returned apart: ``dX_q`` flows on down the
    decoder, ``dX_kv`` is this block's share of dL/dH_enc.  The keys and the values are
    both computed from ``X_kv``, so ``dX_kv`` has two terms, one through K and one
    through V.  A padded source position got zero weight in the forward: no gradient
    reaches it.  The mask is a constant.

    The softmax's backward, row by row over the keys: dS = A * (dA - sum_s dA * A).

    Parameters
    ----------
    dY : float64 array (B, T, D)
        dL/dY, the gradient arriving at the output.  Do not modify it.
    X_q, X_kv, params, H, src_mask
        The forward's inputs, as in :func:`cross_attention_forward`.  Do not modify them.

    Returns
    -------
    dict of arrays
        ``"dX_q"`` (B, T, D) and ``"dX_kv"`` (B, S, D): the input gradients;
        ``"dW_q"``, ``"dW_k"``, ``"dW_v"``, ``"dW_o"`` (D, D) and ``"db_q"``, ``"db_k"``,
        ``"db_v"``, ``"db_o"`` (D,): the weight gradients, each shaped like its weight
        (summed over the batch and the positions).

    Not allowed: ``MultiHeadAttention.backward``,
    ``minitf.attention.scaled_dot_product_attention_backward``,
    ``minitf.layers.softmax.softmax_backward``, ``minitf.layers.linear.affine_backward``
    (and ``Linear.backward``), the blocks' and model's backward, ``minitf.gradcheck``.
    """
    raise NotImplementedError("Task 4.3: cross_attention_backward is not written yet")


# =====================================================================================
# Task 4.4 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
