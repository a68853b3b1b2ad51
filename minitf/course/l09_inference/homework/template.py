"""Homework 9 -- Inference.

Six tasks on Lesson 9: how a decoder's next token is chosen (filtering, beam search), how a
pointer-generator copies and how coverage keeps it from attending twice, and how scheduled
sampling mixes the decoder's inputs.  Each task is a function (or two) whose body raises
``NotImplementedError`` until you write it; task 9.6 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw09 hw09_inference.py                  # every task: a score table
    minitf grade hw09 hw09_inference.py --task 9.3         # task 9.3 only

Your code runs in a process of its own, with a time and memory limit; only the data it
returns is checked, against minitf's own implementation, on problems drawn from a seed (public ones here, secret ones too when the course grades it) at every
grading.  Task 9.6 is scored by the course's autograder (its answer key is not handed out).

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Do not modify the arrays you are given; return new ones.
* Vectorise: no Python loop over the batch, the beams or the positions is needed.
* Logits are not always small (some problems have them in the hundreds or thousands): write
  any softmax so that it cannot overflow.
* float64 inputs must give float64 outputs, float32 inputs float32 outputs.  The backward
  tasks (9.3 (b), 9.4) are compared with minitf's backward in float64 at a tolerance that
  numerical (finite-difference) gradients cannot reach: write the derivative.

Shapes: B batch, K beams, V output vocabulary, V_ext extended vocabulary (V + the source's
own tokens), T target length, S source length.
"""
from __future__ import annotations

import numpy as np  # noqa: F401  (you will need it)

IGNORE_INDEX = -100  # the label of a padding position: no loss, no gradient


# =====================================================================================
# Task 9.1 -- top-k and top-p (Lesson 9, section 3)
# =====================================================================================
def top_k_filter(logits, k):
    """Task 9.1 (a): keep the k largest logits of each row; the others become ``-inf``.

    As Hugging Face's ``TopKLogitsWarper``: the threshold is the k-th largest *value* of the
    row, and every logit equal to it stays -- with ties, more than k tokens stay::

        logits [2.0, 5.0, 1.0, 5.0, 3.0],  k = 2   ->  [-inf, 5.0, -inf, 5.0, -inf]
        logits [2.0, 5.0, 3.0, 3.0, 1.0],  k = 2   ->  [-inf, 5.0, 3.0, 3.0, -inf]   (a tie at the 2nd)

    ``k = 0`` or ``k >= V`` keeps every token.  Kept logits are returned unchanged
    (``softmax`` of the result is the distribution a token is then drawn from).

    Parameters
    ----------
    logits : float array (..., V)
        Any leading axes (a batch, beams); do not modify it.
    k : int >= 0

    Returns
    -------
    filtered : array (..., V), the dtype of ``logits``

    Not allowed: ``minitf.decoding.top_k_filter`` (nor ``warp_logits``, ``sample``).
    """
    raise NotImplementedError("Task 9.1: top_k_filter is not written yet")


def top_p_filter(logits, p, min_tokens_to_keep=1):
    """Task 9.1 (b): nucleus (top-p) filtering; removed tokens become ``-inf``.

    Keep the *smallest* set of most likely tokens whose probabilities (``softmax(logits)``)
    add up to at least p.  The token whose probability makes the running total cross p is
    kept: that is what makes the kept mass >= p.  As Hugging Face's ``TopPLogitsWarper``
    computes it: sort the tokens from least to most likely, take the cumulative sum of their
    probabilities, and remove every token whose cumulative sum (its own probability and all
    below it) is <= 1 - p.  Example, probabilities [0.5, 0.3, 0.15, 0.05] and p = 0.7: the
    two most likely hold 0.8 >= 0.7, so they stay (0.5 alone is short of 0.7, the 0.3 is
    the crossing token); 0.15 and 0.05 go.

    The ``min_tokens_to_keep`` most likely tokens always stay, whatever p (1 by default: the
    most likely token is never removed).  ``p = 1`` keeps everything.  The tests use logits
    without ties and stay clear of exact boundaries (a cumulative sum equal to 1 - p).

    Parameters
    ----------
    logits : float array (..., V)
        Do not modify it.
    p : float in (0, 1]
    min_tokens_to_keep : int >= 1

    Returns
    -------
    filtered : array (..., V), the dtype of ``logits``

    Not allowed: ``minitf.decoding.top_p_filter`` (nor ``warp_logits``, ``sample``).
    """
    raise NotImplementedError("Task 9.1: top_p_filter is not written yet")


# =====================================================================================
# Task 9.2 -- one step of beam search (Lesson 9, section 4)
# =====================================================================================
def beam_step(beam_scores, log_probs, length, length_penalty, eos_id):
    """Task 9.2: one step of beam search, as minitf (and today's Hugging Face) runs it.

    Each example has K live beams; beam k's running score ``beam_scores[b, k]`` is the sum
    of the log-probabilities of its tokens so far (``-inf`` marks a dead beam: at the first
    step only beam 0 is alive, since all K beams start as the same start token).

    1. Candidates: every beam extended by every token, scored by the new running sum
       ``beam_scores[b, k] + log_probs[b, k, v]``.  All K * V candidates of an example
       compete together; rank them best first (ties: the lower ``k * V + v`` first) and
       take the 2K best.  (2K: at most K of them end in <eos>, so at least K do not.)
    2. Finished: each of the **K** best candidates that ends in ``eos_id`` (and is not
       -inf) finishes a hypothesis.  Its score is the *length-normalised* sum

           score = (sum of log-probs of all its tokens) / length ** length_penalty

       where ``length`` counts the generated tokens, this step's <eos> included.  The
       division applies to the whole sum, once, when the hypothesis finishes.
    3. Next beams: the K best candidates that do **not** end in <eos>, best first.  Their
       scores stay plain sums (all live beams have the same length: no normalisation is
       needed to compare them).

    Parameters
    ----------
    beam_scores : float64 array (B, K)
    log_probs : float64 array (B, K, V)
        The model's log-probabilities of the next token, for each beam (V >= 2K).
    length : int >= 1
    length_penalty : float
        alpha; 0 ranks finished hypotheses by the plain sum.
    eos_id : int
    Do not modify the arrays.

    Returns
    -------
    next_beam : int64 array (B, K)
        The beam (0 .. K-1) each new beam extends, best candidate first.
    next_token : int64 array (B, K)
        The token it adds.
    next_scores : float64 array (B, K)
        Its running sum.
    finished_beam : int64 array (B, K)
        For the i-th best candidate (i < K): the beam it extends if it ends in <eos>,
        else -1.
    finished_scores : float64 array (B, K)
        Its length-normalised score if it ends in <eos>, else ``-inf``.

    Not allowed: ``minitf.decoding.beam_search``, ``minitf.decoding.length_normalized_score``.
    """
    raise NotImplementedError("Task 9.2: beam_step is not written yet")


# =====================================================================================
# Task 9.3 -- the pointer-generator's mixture (Lesson 9, section 5)
# =====================================================================================
def copy_mixture_forward(P_vocab, p_gen, a, src_ext, vocab_size):
    """Task 9.3 (a): the pointer-generator's output distribution (See et al., 2017).

        P_t(w) = p_gen,t P_vocab,t(w) + (1 - p_gen,t) sum_{i: x_i = w} a_t,i

    over the extended vocabulary: ids 0 .. V-1 are the output vocabulary (P_vocab is 0
    beyond it), ids V .. V_ext-1 the example's source-only tokens.  ``src_ext[b, i]`` is the
    extended id of source token i.  The copy part is a *scatter-add*: a token that occurs
    at several source positions collects the attention of every one of them.  (Careful: in
    NumPy, ``out[idx] += values`` with a repeated index adds only once; ``np.add.at`` adds
    every time.)

    Parameters
    ----------
    P_vocab : float array (B, T, V)
        The generation distribution (rows sum to 1).
    p_gen : float array (B, T)
        The probability of generating, in (0, 1).
    a : float array (B, T, S)
        The copy attention over source positions (rows sum to 1; 0 on padded positions).
    src_ext : int64 array (B, S)
        Extended ids in [0, vocab_size).
    vocab_size : int
        V_ext >= V.
    Do not modify the arrays.

    Returns
    -------
    P : array (B, T, V_ext), the dtype of ``P_vocab``; each row sums to 1.

    Not allowed: ``minitf.models.pointer_generator.scatter_add`` (nor ``CopyHead``).
    """
    raise NotImplementedError("Task 9.3: copy_mixture_forward is not written yet")


def copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext):
    """Task 9.3 (b): the backward of :func:`copy_mixture_forward`.

    Given dL/dP (B, T, V_ext), return dL/dP_vocab, dL/dp_gen and dL/da.  Work it out from
    the formula: P is linear in P_vocab and in a, and p_gen appears in both parts.  The
    backward of a scatter-add is a gather (which entry of dP did each a_t,i reach?).

    Parameters
    ----------
    dP : float array (B, T, V_ext)
    P_vocab, p_gen, a, src_ext : as in the forward.
    Do not modify the arrays.

    Returns
    -------
    dP_vocab : array (B, T, V)
    dp_gen : array (B, T)
    da : array (B, T, S)
        Each of the dtype of ``dP``.

    Not allowed: ``minitf.models.pointer_generator.gather`` (nor ``CopyHead.backward``), and
    numerical gradients (``minitf.gradcheck``).
    """
    raise NotImplementedError("Task 9.3: copy_mixture_backward is not written yet")


# =====================================================================================
# Task 9.4 -- the coverage loss (Lesson 9, section 5)
# =====================================================================================
def coverage_loss(a, labels, weight=1.0):
    """Task 9.4: See et al.'s coverage loss and its gradient.

    The coverage vector c_t is the attention the source positions received *before* step t:

        c_t = sum_{t' < t} a_t'          (c_0 = 0)                          (B, T, S)
        L   = (weight / n_real) sum_{t real} sum_i min(a_t,i, c_t,i)

    n_real counts the real target positions (labels != IGNORE_INDEX); a padded position
    adds no loss.  The gradient reaches a_t by two paths: directly through the min (where
    a_t,i < c_t,i) and through the coverage c_t'' of every later step t'' > t (where
    c <= a: on a tie, the min's derivative goes to c, as in minitf).  The tests do not look
    at padded *source* positions (a = c = 0 there, where the min has no derivative).

    Parameters
    ----------
    a : float array (B, T, S)
        The copy attention.  Do not modify it.
    labels : int array (B, T)
        ``IGNORE_INDEX`` on padding (right padding), at least one real position.
    weight : float
        lambda >= 0.

    Returns
    -------
    loss : float
    da : array (B, T, S), the dtype of ``a``

    Not allowed: ``minitf.models.coverage_loss``, ``minitf.models.pointer_generator.coverage_vector``,
    numerical gradients (``minitf.gradcheck``).
    """
    raise NotImplementedError("Task 9.4: coverage_loss is not written yet")


# =====================================================================================
# Task 9.5 -- scheduled sampling's mixed inputs (Lesson 9, section 6)
# =====================================================================================
def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    """Task 9.5: the decoder inputs of scheduled sampling's second pass (Mihaylova & Martins, 2019).

    Pass 1 ran the decoder on the gold inputs ``decoder_input_ids`` (``<bos> y_1 .. y_{T-1}``)
    and chose a token at every position: ``predictions[:, t]`` is its guess of the label at
    t, the gold token that position t + 1 is fed.  Build pass 2's inputs, position by
    position:

        fed[:, t] = decoder_input_ids[:, t]   where use_gold[:, t] (the draw said: gold)
                    the model's own token for position t, otherwise

    The model's own token for position t is the prediction made at position **t - 1** (the
    token a free-running decoder would have fed at t).  Position 0 keeps its start token (no
    prediction comes before it) and padding (``pad_id``) stays padding, whatever the draw.

    Parameters
    ----------
    decoder_input_ids : int64 array (B, T)
        The gold inputs, right-padded with ``pad_id``.
    predictions : int64 array (B, T)
        Pass 1's tokens, chosen at positions 0 .. T-1.
    use_gold : bool array (B, T)
        The draws: True where the gold token is fed.
    pad_id : int
    Do not modify the arrays.

    Returns
    -------
    fed : int64 array (B, T)
    gold : bool array (B, T)
        Where ``fed`` holds the gold token: the draw's True, position 0 and padding.

    Not allowed: ``minitf.scheduled_sampling.own_previous_tokens``, ``mix_decoder_inputs``.
    """
    raise NotImplementedError("Task 9.5: mix_inputs is not written yet")


# =====================================================================================
# Task 9.6 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
