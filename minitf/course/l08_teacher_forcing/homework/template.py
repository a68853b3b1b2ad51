"""Homework 8 -- Training: teacher forcing & the loss.

Six tasks, one per idea of Lesson 8.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 8.6 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw08 hw08_teacher_forcing.py                  # every task: a score table
    minitf grade hw08 hw08_teacher_forcing.py --task 8.3         # task 8.3 only

Where a task plugs into minitf, its tests also put your function inside a real model:
they train a tiny model with your shift_right, mask or loss in place and compare with a
run of minitf's own, and they decode with your decoder.  Your code runs in a process of
its own, with a time and memory limit; only the data it returns is checked.  Task 8.6 is
scored by the course's autograder (its answer key is not handed out).

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Float comparisons in the tests use stated tolerances; float64 inputs must give float64
  outputs, float32 inputs float32 outputs.

Shapes: B batch, S source length, T target length, D d_model, H heads, Dh = D / H,
V vocabulary, L_dec decoder blocks.
"""
from __future__ import annotations

import numpy as np

IGNORE_INDEX = -100  # the label of a padding position: no loss, no gradient (PyTorch's ignore_index)


# =====================================================================================
# Task 8.1 -- shifted inputs: what the decoder is fed
# =====================================================================================
def shift_right(labels, start_id, pad_id):
    """Task 8.1: the decoder inputs of teacher forcing, built from the labels.

    Position t of the decoder is fed the *previous* target token y_{t-1} and asked to
    predict y_t; position 0 is fed the start token.  Label padding (``IGNORE_INDEX``)
    must not reach the embedding table: it becomes ``pad_id``.

    Example (start_id = 1, pad_id = 0; 2 is <eos>)::

        labels            [[5, 4, 6, 2],        decoder_input_ids   [[1, 5, 4, 6],
                           [7, 2, -100, -100]]                       [1, 7, 2, 0]]

    Parameters
    ----------
    labels : integer array (B, T)
        Target ids, ``IGNORE_INDEX`` on padding.  Do not modify it.
    start_id : int
        The first decoder input (``<bos>``; T5 uses its pad id).
    pad_id : int
        What an ``IGNORE_INDEX`` becomes in the decoder inputs.

    Returns
    -------
    decoder_input_ids : integer array (B, T), the dtype of ``labels``

    Not allowed: ``minitf.data.shift_right``, ``minitf.data.make_batch``.
    """
    raise NotImplementedError("Task 8.1: shift_right is not written yet")


# =====================================================================================
# Task 8.2 -- the causal mask
# =====================================================================================
def causal_mask(T, dtype=np.float32):
    """Task 8.2: the decoder self-attention mask, (T, T), *additive*.

    Entry [t, s] is added to the attention score of query position t for key position s:
    0 where position t may look at position s, and a large negative **finite** number
    (minitf uses -1e9) where it may not.  Position t may look at itself and at every
    earlier position, never at a later one.

    Parameters
    ----------
    T : int
        Target length, T >= 1.
    dtype : float32 or float64
        The dtype of the result.

    Returns
    -------
    mask : array (T, T) of ``dtype``

    Not allowed: ``minitf.masks.causal_mask``.
    """
    raise NotImplementedError("Task 8.2: causal_mask is not written yet")


# =====================================================================================
# Task 8.3 -- the loss, and its gradient p_hat - y
# =====================================================================================
def masked_cross_entropy(logits, labels, ignore_index=IGNORE_INDEX):
    """Task 8.3: the mean cross-entropy over the real target tokens, and its gradient.

        L = -(1 / n_real) * sum over real positions (b, t) of log softmax(z_{b,t})[y_{b,t}]

    A position is real when its label is not ``ignore_index``; n_real counts them.
    Padding positions add nothing to the sum, nothing to n_real, and get a gradient of
    exactly zero.  Compute the softmax stably (subtract the row maximum).

    Parameters
    ----------
    logits : float array (B, T, V)
    labels : integer array (B, T)
        Target ids in [0, V), or ``ignore_index``.  At least one label is real.
    ignore_index : int

    Returns
    -------
    loss : float
        The mean over real tokens.
    dlogits : array (B, T, V), the dtype of ``logits``
        dL/dlogits: (p_hat - onehot(y)) / n_real at real positions, 0 at padding.

    Not allowed: ``minitf.loss.cross_entropy``, ``minitf.training.forward_loss``,
    ``minitf.training.train_step``.
    """
    raise NotImplementedError("Task 8.3: masked_cross_entropy is not written yet")


# =====================================================================================
# Task 8.4 -- the gradient's journey: through cross-attention into the encoder
# =====================================================================================
def cross_attention_backward(attn, dy, cache):
    """Task 8.4 (a): the backward pass of one decoder block's cross-attention.

    The forward (``attn.forward(x_q, H_enc, mask)``, with ``p = attn.params``)::

        Q = split(x_q   @ p["W_q"] + p["b_q"])     (B, H, T, Dh)   queries: the decoder
        K = split(H_enc @ p["W_k"] + p["b_k"])     (B, H, S, Dh)   keys:    the encoder
        V = split(H_enc @ p["W_v"] + p["b_v"])     (B, H, S, Dh)   values:  the encoder
        A = softmax(Q K^T / sqrt(Dh) + mask)       (B, H, T, S)
        o = merge(A V)                             (B, T, D)
        y = o @ p["W_o"] + p["b_o"]                (B, T, D)

    ``split`` is ``x.reshape(B, T, H, Dh).transpose(0, 2, 1, 3)`` (what ``minitf.attention.
    split_heads(x, H)`` does) and ``merge`` its inverse; write both in your file.
    The mask is a constant.  A row of A that is all zeros (a fully masked query) needs no
    special case.

    Parameters
    ----------
    attn : minitf.attention.MultiHeadAttention
        The block's cross-attention: ``attn.params`` holds W_q, W_k, W_v, W_o (D, D) and
        b_q, b_k, b_v, b_o (D,); ``attn.n_heads`` is H.
    dy : array (B, T, D)
        dL/dy, the gradient arriving at the cross-attention's output.
    cache : minitf.attention.MultiHeadAttentionCache
        What ``attn.forward`` returned: ``cache.x_q`` (B, T, D), ``cache.x_kv`` (B, S, D)
        (that is H_enc), ``cache.o`` (B, T, D) and ``cache.attn`` with fields Q, K, V and
        A, shaped as above.

    Returns
    -------
    dx_q : array (B, T, D)
        dL/dx_q, the gradient for the queries' input (it flows on down the decoder).
    dH_enc : array (B, S, D)
        dL/dH_enc, this block's share of the encoder output's gradient.

    Parameter gradients are not asked for.
    Not allowed: ``MultiHeadAttention.backward``,
    ``minitf.attention.scaled_dot_product_attention_backward``, ``DecoderBlock.backward``,
    ``minitf.blocks.sublayer_backward``, ``EncoderDecoder.backward``.
    """
    raise NotImplementedError("Task 8.4: cross_attention_backward is not written yet")


def encoder_output_gradient(cross_attns, douts, caches):
    """Task 8.4 (b): dL/dH_enc, the encoder's only learning signal.

    Every decoder block's cross-attention reads the same H_enc through its own K and V.
    Given, for each block l, its cross-attention, the gradient arriving at that
    cross-attention's output and the cache of its forward, return the encoder output's
    whole gradient.  Use your ``cross_attention_backward``.

    Parameters
    ----------
    cross_attns : list of L_dec MultiHeadAttention
        ``model.decoder_layers[l].cross_attn`` for l = 0 .. L_dec - 1.
    douts : list of L_dec arrays (B, T, D)
        dL/dy_l at block l's cross-attention output.
    caches : list of L_dec MultiHeadAttentionCache
        Block l's cross-attention cache.

    Returns
    -------
    dH_enc : array (B, S, D)

    Not allowed: as in :func:`cross_attention_backward`.
    """
    raise NotImplementedError("Task 8.4: encoder_output_gradient is not written yet")


# =====================================================================================
# Task 8.5 -- training vs inference: the gap that matters
# =====================================================================================
def free_running_decode(model, src_ids, start_id, eos_id, max_len):
    """Task 8.5 (a): greedy generation, the model feeding itself.

    Encode the source once.  Start every row's prefix with ``start_id``; at each step run
    the decoder on the prefix so far, take the argmax of the logits at the *last*
    position, and append it to the prefix: the decoder's next input is its own previous
    output.  A row is finished once it has produced ``eos_id``: nothing more is generated
    for it, and its later places hold the model's padding id (``model.config.pad_id``), as
    ``minitf generate`` pads them.  Stop after ``max_len`` steps, or as soon as every row
    has finished.

    The model (a ``minitf.models.EncoderDecoder``) offers::

        H_enc, _ = model.encode(src_ids)                              # (B, S, D)
        src_mask = model.source_mask(src_ids)                         # (B, 1, 1, S)
        logits, _ = model.decode(decoder_input_ids, H_enc, src_mask)  # (B, t, V)

    Parameters
    ----------
    model : EncoderDecoder
    src_ids : integer array (B, S)
    start_id, eos_id : int
    max_len : int
        The most tokens to generate, >= 1.

    Returns
    -------
    generated : int64 array (B, T'), T' <= max_len
        The generated tokens, without the start token; the pad id after a row's ``<eos>``.

    Not allowed: ``minitf.training.evaluate``, ``minitf.training.sequence_metrics``,
    ``minitf.decoding.greedy_search`` (and ``sample``, ``beam_search``, and the loop they
    share).
    """
    raise NotImplementedError("Task 8.5: free_running_decode is not written yet")


def exposure_bias(model, batch, start_id, eos_id):
    """Task 8.5 (b): teacher-forced vs free-running token accuracy of one model.

    * teacher-forced accuracy: feed the true prefix (``batch.decoder_input_ids``), take
      the argmax at every position, and count the real label positions it gets right;
    * free-running accuracy: generate with your :func:`free_running_decode` using
      ``max_len = T`` (the labels' length) and count the real label positions t at which
      the generated token equals the label (a place after the row's ``<eos>`` holds no
      generated token, so it never counts).

    Both are fractions of the real (not ``IGNORE_INDEX``) label positions.  The gap is
    exposure bias: in training the prefix is always right, in generation it may already
    be wrong.

    Parameters
    ----------
    model : EncoderDecoder
    batch : minitf.data.Batch
        ``input_ids`` (B, S), ``decoder_input_ids`` (B, T), ``labels`` (B, T).
    start_id, eos_id : int

    Returns
    -------
    dict with float values
        ``"teacher_forced_accuracy"``, ``"free_running_accuracy"`` and
        ``"gap"`` = teacher-forced minus free-running.

    Not allowed: as in :func:`free_running_decode`, and ``minitf.training.sequence_metrics``.
    """
    raise NotImplementedError("Task 8.5: exposure_bias is not written yet")


# =====================================================================================
# Task 8.6 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
