"""Homework 1 -- The sequence-to-sequence problem (the RNN encoder-decoder).

Six tasks, following Lesson 1: the LSTM's step and its backward, a recurrent layer run over
a padded batch and backpropagation through time (BPTT), the conditioning vector handed
from the encoder to the decoder, scheduled sampling, and additive attention.  Each task is a
pair of functions whose bodies raise ``NotImplementedError`` until you write them; task 1.6
is a set of answers written as data.  The docstrings are the contract: shapes, dtypes, what
to return.  Keep the names and the signatures; add helper functions if you like (a helper
shared by two tasks is fine).

Check your work as often as you like:

    minitf grade hw01 hw01_rnn_seq2seq.py                  # every task: a score table
    minitf grade hw01 hw01_rnn_seq2seq.py --task 1.2         # task 1.2 only

The tests load your ``params`` into minitf's own cells, recurrent layer, attention and
RNN encoder-decoder (``minitf.rnn``, ``minitf.models.RNNSeq2Seq``) and compare what your
functions return with what they compute.  Your code runs in a process of its own, with a
time and memory limit; only the data it returns is checked.  Task 1.6 is scored by the
course's autograder (its answer key is not handed out).

The weights
-----------
Every function receives its weights as a dict ``params`` of NumPy arrays, with minitf's
names and layout: a linear map is stored (D_in, D_out) for ``x @ W``, the transpose of
torch's ``weight``.  A recurrent cell has four, the gates side by side along the columns::

    params["W_ih"]   (D, k Dr)     input -> gates        torch: weight_ih_l0.T
    params["W_hh"]   (Dr, k Dr)     state -> gates        torch: weight_hh_l0.T
    params["b_ih"]   (k Dr,)
    params["b_hh"]   (k Dr,)       two biases, both added: a = x W_ih + b_ih + h W_hh + b_hh

    k = 1 for the tanh RNN; k = 4 for the LSTM, in torch's order i, f, g, o:
    columns 0..Dr-1 are i, Dr..2Dr-1 are f, 2Dr..3Dr-1 are g, 3Dr..4Dr-1 are o.

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
  float32 inputs float32 outputs.  The backward functions are checked in float64 to about
  1e-11: write the backward out, finite differences are not precise enough.
* Vectorise over the batch (one loop over time is fine: that loop is the recurrence).
* The inputs are not always small: gates can saturate and attention scores run into the
  thousands.  Write the sigmoid and the softmax so that they cannot overflow.

Shapes: B batch, S source length, T number of steps (target length), D a cell's input
width, Dr its hidden width, De an encoder state's width, E the embedding width, A additive
attention's width, V the vocabulary.
"""
from __future__ import annotations

import numpy as np

MASK_VALUE = -1e9  # what an attention mask holds at padding (minitf.masks.MASK_VALUE)


# =====================================================================================
# Task 1.1 -- one LSTM step, forward and backward
# =====================================================================================
def lstm_step_forward(x, h_prev, c_prev, params):
    """Task 1.1 (a): one step of the LSTM of torch.nn.LSTM (Lesson 1, section 2).

    The four gates' pre-activations come from one matrix product, in torch's order::

        [a_i, a_f, a_g, a_o] = x W_ih + b_ih + h_prev W_hh + b_hh        (B, 4Dr)
        i = sigmoid(a_i)   f = sigmoid(a_f)   g = tanh(a_g)   o = sigmoid(a_o)
        c = f * c_prev + i * g                 the cell state: an additive memory
        h = o * tanh(c)                        the hidden state: the step's output

    Parameters
    ----------
    x : float array (B, D)
        The step's input.  Do not modify it (nor the other arguments).
    h_prev, c_prev : float arrays (B, Dr)
        The previous hidden and cell states.
    params : dict of arrays
        ``W_ih`` (D, 4Dr), ``W_hh`` (Dr, 4Dr), ``b_ih``, ``b_hh`` (4Dr,); see the module docstring.

    Returns
    -------
    h, c : arrays (B, Dr), the dtype of ``x``
        The new hidden and cell states.

    Not allowed: ``minitf.rnn.LSTMCell.forward`` (and the cells' ``_gates``, the
    ``Recurrent`` layer).
    """
    raise NotImplementedError("Task 1.1: lstm_step_forward is not written yet")


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    """Task 1.1 (b): the backward of :func:`lstm_step_forward` (Lesson 1, section 2).

    ``dh`` and ``dc`` are the gradients arriving at this step's h and c (from the loss and
    from the next step).  Recompute what you need of the forward, then run it in reverse.
    Mind the two ways c reaches the loss (directly through ``dc``, and through
    h = o * tanh(c)), and what carries the gradient back to ``c_prev``: the cell state's
    path back in time is what lets an LSTM learn long dependencies.  The derivative of the
    sigmoid s = sigmoid(a) is s * (1 - s); of tanh, 1 - tanh^2.

    Parameters
    ----------
    dh, dc : float64 arrays (B, Dr)
        dL/dh and dL/dc of this step.  Do not modify them.
    x, h_prev, c_prev, params
        The forward's inputs, as in :func:`lstm_step_forward`.

    Returns
    -------
    dict of arrays
        ``"dx"`` (B, D), ``"dh_prev"`` (B, Dr), ``"dc_prev"`` (B, Dr): the input gradients;
        ``"dW_ih"`` (D, 4Dr), ``"dW_hh"`` (Dr, 4Dr), ``"db_ih"``, ``"db_hh"`` (4Dr,): the weight
        gradients, each shaped like its weight, gates in the order i, f, g, o.

    Not allowed: ``minitf.rnn.LSTMCell.backward``, the cells' ``_gates_backward``,
    ``minitf.layers.linear.affine_backward`` (and ``Linear.backward``), ``minitf.gradcheck``.
    """
    raise NotImplementedError("Task 1.1: lstm_step_backward is not written yet")


# =====================================================================================
# Task 1.2 -- a recurrent layer over a padded batch, and BPTT
# =====================================================================================
def rnn_forward(x, lengths, h0, params):
    """Task 1.2 (a): the tanh RNN (torch.nn.RNN) over a right-padded batch (Lesson 1, sections 1 and 3).

    One step is ``h_t = tanh(x_t W_ih + b_ih + h_{t-1} W_hh + b_hh)``.  Row b has
    ``lengths[b]`` real steps (1 <= lengths[b] <= T), then padding.  At a padded step
    (t >= lengths[b]) row b keeps its state and outputs zero::

        h_t   = h_{t-1}   where t >= lengths   (else the cell's new state)
        out_t = 0         where t >= lengths   (else h_t)

    so the final state is each row's state after its OWN last real step (what torch's
    ``pack_padded_sequence`` gives), and padding cannot change what the row computed.

    Parameters
    ----------
    x : float array (B, T, D)
        The inputs; the entries at padded steps are arbitrary (not zero).
    lengths : int array (B,)
        Each row's number of real steps.
    h0 : float array (B, Dr)
        The initial state.
    params : dict of arrays
        ``W_ih`` (D, Dr), ``W_hh`` (Dr, Dr), ``b_ih``, ``b_hh`` (Dr,).

    Returns
    -------
    outputs : array (B, T, Dr), the dtype of ``x``
        h_t at every real step, 0 at padded steps.
    h_final : array (B, Dr), the dtype of ``x``
        Each row's state after its last real step.

    Not allowed: ``minitf.rnn.RNNCell.forward``, ``minitf.rnn.Recurrent`` (and its
    ``run_direction``), the cells' ``_gates``, ``RNNSeq2Seq.encode``.
    """
    raise NotImplementedError("Task 1.2: rnn_forward is not written yet")


def rnn_backward(doutputs, dh_final, x, lengths, h0, params):
    """Task 1.2 (b): backpropagation through time for :func:`rnn_forward` (Lesson 1, section 3).

    Walk the steps from T-1 down to 0, carrying dL/dh_t back.  The weights are the same at
    every step, so their gradients are sums over the steps.  A padded step computed nothing
    that reached the loss (its output is the constant 0, its state a copy): no gradient
    enters the cell there, from ``doutputs`` or from the state, and the state's gradient
    passes through it unchanged on its way to the row's last real step.

    Parameters
    ----------
    doutputs : float64 array (B, T, Dr)
        dL/d(outputs).  Random everywhere, padded steps included (what arrives there must
        be ignored: those outputs are constants).  Do not modify it.
    dh_final : float64 array (B, Dr)
        dL/d(h_final).
    x, lengths, h0, params
        The forward's inputs, as in :func:`rnn_forward`.

    Returns
    -------
    dict of arrays
        ``"dx"`` (B, T, D) (0 at padded steps), ``"dh0"`` (B, Dr), ``"dW_ih"`` (D, Dr),
        ``"dW_hh"`` (Dr, Dr), ``"db_ih"``, ``"db_hh"`` (Dr,).

    Not allowed: ``minitf.rnn.RNNCell.backward``, ``Recurrent.backward`` (and
    ``run_direction_backward``), ``minitf.layers.linear.affine_backward``, ``minitf.gradcheck``.
    """
    raise NotImplementedError("Task 1.2: rnn_backward is not written yet")


# =====================================================================================
# Task 1.3 -- the conditioning vector: initial state vs input at every step
# =====================================================================================
def condition_decoder(h_enc, embeddings, params, conditioning):
    """Task 1.3 (a): hand the encoder's final state to the decoder (Lesson 1, section 2).

    ``h_enc`` is the conditioning vector: all the decoder learns of the source, De numbers
    whatever the source's length.  Two ways to use it (minitf's ``RNNConfig.conditioning``):

    * ``"init"`` (Sutskever et al., 2014): the decoder starts from it, through a learned
      bridge, ``h0 = tanh(h_enc W_bridge + b_bridge)``; its inputs are the embeddings alone;
    * ``"concat"`` (Cho et al., 2014): the decoder starts from zeros and ``h_enc`` is
      concatenated to its input at EVERY step: ``x_t = [e_t; h_enc]``;
    * ``"both"``: the two at once.

    Parameters
    ----------
    h_enc : float array (B, De)
        The encoder's final hidden state.  Do not modify it.
    embeddings : float array (B, T, E)
        The decoder's embedded inputs e_t = E y_{t-1}, one per step.  Do not modify it.
    params : dict of arrays
        ``W_bridge`` (De, Dr), ``b_bridge`` (Dr,): the bridge (used by "init" and "both").
    conditioning : str
        ``"init"``, ``"concat"`` or ``"both"``.

    Returns
    -------
    h0 : array (B, Dr), the dtype of ``h_enc``
        The decoder's initial state (zeros for "concat").
    X : array (B, T, E) for "init", (B, T, E + De) for "concat" and "both"
        The decoder's input at every step: the embedding first, then h_enc.

    Not allowed: ``RNNSeq2Seq.initial_state`` (and its ``step_forward``),
    ``minitf.layers.Linear.forward``.
    """
    raise NotImplementedError("Task 1.3: condition_decoder is not written yet")


def condition_decoder_backward(dh0, dX, h_enc, params, conditioning):
    """Task 1.3 (b): the gradient reaching the conditioning vector (Lesson 1, section 2).

    The decoder has L layers, and with "init" every one of them starts from the same h0
    (as in minitf's ``RNNSeq2Seq``): ``dh0[l]`` is the gradient that reached layer l's
    initial state.  With "concat", ``h_enc`` was part of the input of every step.  Add up
    every path by which h_enc reached the loss.

    Parameters
    ----------
    dh0 : float64 array (L, B, Dr)
        dL/d(initial state) of each decoder layer.  With "concat" the initial state is a
        constant zero, so this gradient goes nowhere.  Do not modify it.
    dX : float64 array (B, T, E) or (B, T, E + De)
        dL/dX, the gradient at the decoder's input of every step (shaped like ``X``).
    h_enc, params, conditioning
        As in :func:`condition_decoder`.

    Returns
    -------
    dict of arrays
        ``"dh_enc"`` (B, De): dL/dh_enc, what the encoder's BPTT starts from;
        ``"dW_bridge"`` (De, Dr), ``"db_bridge"`` (Dr,): the bridge's gradients (zeros for
        "concat", which has no bridge).

    Not allowed: ``RNNSeq2Seq.initial_state_backward`` (``step_backward``, ``backward``),
    ``minitf.layers.linear.affine_backward`` (and ``Linear.backward``).
    """
    raise NotImplementedError("Task 1.3: condition_decoder_backward is not written yet")


# =====================================================================================
# Task 1.4 -- scheduled sampling
# =====================================================================================
def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    """Task 1.4 (a): the decoder's inputs under scheduled sampling (Lesson 1, section 5).

    Teacher forcing feeds step t the gold token of position t-1 (step 0: the start token).
    Scheduled sampling (Bengio et al., 2015) flips a coin per row at every step t > 0: with
    probability ``eps`` the gold token y_{t-1} is fed, otherwise the model's OWN token from
    step t-1 -- the one it chose from its logits at step t-1 (its guess at position t-1).
    Step t's coin is ``coins[:, t]``: the gold token is fed where ``coins[:, t] < eps``.

    The tests check your inputs against minitf's ``RNNSeq2Seq.decode`` run with the same
    coins: ``own_tokens`` comes from that very run, step by step.

    Parameters
    ----------
    labels : int array (B, T)
        The gold target y_0 .. y_{T-1} (no padding here).  Do not modify it.
    own_tokens : int array (B, T)
        ``own_tokens[:, t]`` is the token the model chose at step t (the argmax of its
        logits at step t): its guess at position t.
    coins : float array (B, T)
        Uniform in [0, 1).  ``coins[:, 0]`` is not used: step 0 is always fed the start token.
    eps : float in [0, 1]
        The probability of feeding the gold token (1: plain teacher forcing).
    bos_id : int
        The start token.

    Returns
    -------
    fed : int array (B, T)
        The token fed at each step.
    gold : bool array (B, T)
        True where the gold token (or the start token, at step 0) was fed.

    Not allowed: ``RNNSeq2Seq.decode`` (and ``forward``), ``minitf.data.shift_right``,
    ``minitf.rnn.scheduled_sampling.choose_tokens``.
    """
    raise NotImplementedError("Task 1.4: scheduled_sampling_inputs is not written yet")


def scheduled_sampling_backward(dlogits, dX, logits, fed, gold, W_E):
    """Task 1.4 (b): the gradients of a scheduled-sampling step's choices (Lesson 1, section 5).

    Step t's input was ``x_t = W_E[fed[:, t]]``; where ``gold`` is False, ``fed[:, t]`` was
    chosen from ``logits[:, t-1]`` (an argmax, or a draw).  Given the gradient the loss sends
    to every step's logits directly, and the gradient the decoder sends back to every step's
    input embedding, return the whole gradient reaching each step's logits and the
    embedding table's gradient.  Think about which paths lead from the loss to the logits,
    and which token's embedding row each step read.  A token fed n times gets the sum of its
    n gradients.

    Parameters
    ----------
    dlogits : float64 array (B, T, V)
        The loss's own gradient at each step's logits (softmax minus one-hot, scaled).
    dX : float64 array (B, T, E)
        dL/dx_t, the gradient arriving at each step's input embedding.
    logits : float64 array (B, T, V)
        The forward's logits.
    fed, gold : arrays (B, T)
        As returned by :func:`scheduled_sampling_inputs`.
    W_E : float64 array (V, E)
        The decoder's embedding table (every row trainable; no padding here).

    Returns
    -------
    dict of arrays
        ``"dlogits"`` (B, T, V): dL/d(logits), everything that reaches them;
        ``"dW_E"`` (V, E): dL/dW_E.

    Not allowed: ``minitf.layers.Embedding.backward``, ``minitf.layers.reductions.scatter_add_rows``,
    ``RNNSeq2Seq.backward``.
    """
    raise NotImplementedError("Task 1.4: scheduled_sampling_backward is not written yet")


# =====================================================================================
# Task 1.5 -- additive attention over the encoder states
# =====================================================================================
def additive_attention_forward(s, H_enc, params, mask):
    """Task 1.5 (a): additive attention (Bahdanau et al., 2015) for one decoder step (Lesson 1, section 6).

    Instead of one fixed vector, the decoder keeps every encoder state h_j and, at each
    step, weighs them by how well they match its query s::

        e_j = v . tanh(s W_a + h_j U_a)        (B, S)   one score per source position
        a   = softmax(e + mask)                (B, S)   over the S source positions of each row
        c   = sum_j a_j h_j                    (B, De)  the context vector

    ``mask`` is additive: 0 at a real source position, ``MASK_VALUE`` (-1e9) at padding, so
    a padded position gets exactly zero weight.  A row with no real position at all gets
    all-zero weights and a zero context (never NaN, never an average over padding).

    Parameters
    ----------
    s : float array (B, Dr)
        The decoder's query (its hidden state).  Do not modify it (nor the others).
    H_enc : float array (B, S, De)
        The encoder states h_j.
    params : dict of arrays
        ``W_a`` (Dr, A), ``U_a`` (De, A), ``v`` (A,) (no biases, as in the paper).
    mask : float array (B, S)
        0 at real source positions, MASK_VALUE at padding.

    Returns
    -------
    context : array (B, De), the dtype of ``s``
    a : array (B, S), the dtype of ``s``
        The attention weights: each row sums to 1 over its real positions (or is all 0).

    Not allowed: ``minitf.rnn.AdditiveAttention`` (``forward``, ``project_keys``, ``score``).
    """
    raise NotImplementedError("Task 1.5: additive_attention_forward is not written yet")


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    """Task 1.5 (b): the backward of :func:`additive_attention_forward` (Lesson 1, section 6).

    The encoder states are used twice: as the values the context averages, and to make
    the keys h_j U_a inside the scores.  ``dH_enc`` is the sum of both paths.  The softmax's
    backward over the S positions: de = a * (da - sum_j da_j a_j).  A padded position got
    zero weight: no gradient reaches it.  The mask is a constant.

    Parameters
    ----------
    dcontext : float64 array (B, De)
        dL/dc.  Do not modify it.
    s, H_enc, params, mask
        The forward's inputs, as in :func:`additive_attention_forward`.

    Returns
    -------
    dict of arrays
        ``"ds"`` (B, Dr), ``"dH_enc"`` (B, S, De): the input gradients;
        ``"dW_a"`` (Dr, A), ``"dU_a"`` (De, A), ``"dv"`` (A,): the weight gradients.

    Not allowed: ``minitf.rnn.AdditiveAttention.backward`` (``score_backward``,
    ``project_keys_backward``), ``minitf.layers.softmax.softmax_backward``,
    ``minitf.layers.linear.affine_backward``, ``minitf.gradcheck``.
    """
    raise NotImplementedError("Task 1.5: additive_attention_backward is not written yet")


# =====================================================================================
# Task 1.6 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
