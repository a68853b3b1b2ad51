"""Homework 10 -- Fine-tuning on supervised pairs.

Four tasks, from Lesson 10, section 4 (evaluate with a self-fed run) and section 5
(overfitting and the held-out set).  Each task is a function whose body raises
``NotImplementedError`` until you write it; task 10.4 is a set of answers written as data.
The docstrings are the contract: shapes, dtypes, what to return.  Keep the names and the
signatures; add helper functions if you like.

Check your work as often as you like:

    minitf grade hw10 hw10_finetuning.py                  # every task: a score table
    minitf grade hw10 hw10_finetuning.py --task 10.2         # task 10.2 only

Tasks 10.1 and 10.2 receive a small trained minitf ``EncoderDecoder`` (float64, with dropout)
and a validation batch of pairs; the tests compare your numbers with
``minitf.training.evaluate`` on the same model and batch.  Your code runs in a process of
its own, with a time and memory limit; only the data it returns is checked.  Task 10.4 is
scored by the course's autograder (its answer key is not handed out).

The model
---------
``model.forward(src_ids, decoder_input_ids)`` -> ``(logits, cache)``: src_ids (B, S) right-
padded with ``pad_id`` (the model masks the padding itself), decoder_input_ids (B, t) ->
logits (B, t, V); position j scores the token that follows ``decoder_input_ids[:, j]``.
The model may arrive in training mode: ``with model.evaluating(): ...`` (or
``model.eval()``) switches dropout off.  (``model.encode`` / ``model.decode`` exist too, if
you want to encode the sources once.)

The pairs
---------
``input_ids`` (B, S) int64, the sources, right-padded with ``pad_id``.  ``labels`` (B, T)
int64, the targets, each ending with ``<eos>``, right-padded with -100 (``IGNORE_INDEX``):
a position holding -100 is padding, scored by nothing.

Rules
-----
* Use NumPy and the standard library, nothing else.  When your file is graded it runs in a
  process that holds no minitf, no torch, scipy or any other package: importing one fails,
  and the grader says why.  The few helpers a task needs (a softmax, a sigmoid, split_heads)
  are a line or two each: write them in your file.  A task whose code names one of the
  minitf functions it replaces (its docstring's "Not allowed") gets no credit.
* Do not import ``minitf.grading`` (the grader).
* Do not modify your inputs in place.
* Floats are compared to rtol 1e-9 (the model is float64); token ids exactly.
* The model may be very confident (logits in the thousands): compute log-probabilities so
  that neither exp overflows nor a probability that rounds to 0 sends the loss to infinity.

Shapes: B pairs, S source length, T target length, V vocabulary, T' generated length.
"""
from __future__ import annotations

import numpy as np

IGNORE_INDEX = -100


# =====================================================================================
# Task 10.1 -- the teacher-forced validation loss
# =====================================================================================
def teacher_forced_eval(model, input_ids, labels, start_id, pad_id):
    """Task 10.1 (Lesson 10, sections 1 and 4): the validation loss, teacher-forced.

    The decoder is fed the true prefix: the labels shifted right by one, ``start_id`` in
    front, -100 mapped to ``pad_id`` (Lesson 8).  In eval mode (dropout off).

    Returns
    -------
    dict with
        "loss" : float
            the mean cross-entropy over the REAL target tokens,
            ``-(1/n_real) * sum over real (b, t) of log softmax(logits[b, t])[labels[b, t]]``;
            padding (-100) adds nothing and does not count in n_real.
        "token_accuracy" : float
            the share of real target tokens whose argmax (given the true prefix) is right.

    Both must not change when the batch is padded further (more -100 columns, more source
    padding).

    Not allowed: ``minitf.training.forward_loss``, ``minitf.training.evaluate``,
    ``minitf.loss.cross_entropy``, the pointer-generator's ``copy_nll`` (and the course
    helpers built on them).
    """
    raise NotImplementedError("Task 10.1: teacher_forced_eval is not written yet")


# =====================================================================================
# Task 10.2 -- the free-running (self-fed) evaluation
# =====================================================================================
def free_running_eval(model, input_ids, labels, start_id, eos_id, pad_id, max_len):
    """Task 10.2 (Lesson 10, section 4): generate with no teacher, then score the outputs.

    Generation: greedy, in eval mode.  Step 0 feeds ``start_id``; every later step feeds
    the model's OWN previous outputs (the argmax at the last position), never the labels
    -- they are only for scoring.  A row is finished once it has produced ``eos_id``; after
    that it gets ``pad_id``.  Stop when every row has finished, or after ``max_len`` tokens.

    Returns
    -------
    dict with
        "predictions" : int array (B, T'), T' <= max_len
            the generated tokens, without the start token; ``pad_id`` after a row's
            ``<eos>``; T' = the step at which the last row finished (or max_len).
        "exact_match" : float
            the share of rows whose output is exactly the target: every real target token
            right, position by position, ``<eos>`` included (so the output stops there).
            Padding is not part of the target: compare real positions only.
        "token_accuracy" : float
            the share of real target tokens (over the whole batch) that the output has right
            at the same position (an output shorter than the target misses the rest).

    Not allowed: ``minitf.training.evaluate``, ``minitf.training.sequence_metrics``,
    ``minitf.decoding.greedy_search``, ``sample``, ``beam_search`` (and the course helpers
    built on them).
    """
    raise NotImplementedError("Task 10.2: free_running_eval is not written yet")


# =====================================================================================
# Task 10.3 -- early stopping on a validation metric
# =====================================================================================
def early_stopping(values, mode, patience, min_delta=0.0):
    """Task 10.3 (Lesson 10, sections 4 and 5): when to stop, and which checkpoint to keep.

    Parameters
    ----------
    values : 1-D float array or list
        The validation metric at each evaluation of a run, in order (evaluation i is the
        checkpoint saved then).  Not modified.
    mode : "min" or "max"
        "min" for a loss (lower is better), "max" for an accuracy or exact match (higher
        is better).
    patience : int >= 1
        How many evaluations in a row without improvement are tolerated.
    min_delta : float >= 0
        An improvement must beat the best value so far by MORE than this: ``value < best -
        min_delta`` ("min"), ``value > best + min_delta`` ("max").  The first evaluation
        always improves (best starts at +inf for "min", -inf for "max").

    Rules (Keras's ``EarlyStopping`` with ``restore_best_weights=True``): after each
    evaluation, an improvement makes it the best and resets the count of evaluations
    without improvement to 0; otherwise the count goes up by one, and training stops at the
    evaluation where it reaches ``patience``.

    Returns
    -------
    (best_index, stop_index) : (int, int)
        the evaluation whose checkpoint is kept (the last improvement, not the last
        evaluation), and the evaluation at which training stops (``len(values) - 1`` if the
        run ends first).

    Example: values [3.0, 2.0, 2.5, 1.95, 2.2], mode "min", patience 2, min_delta 0.1 ->
    (1, 3): evaluation 1 improves (2.0 < 3.0 - 0.1); evaluation 2 does not (count 1);
    evaluation 3 does not either, 1.95 is not below 2.0 - 0.1 (count 2 = patience: stop).
    The checkpoint kept is evaluation 1's.

    Not allowed: ``minitf.course.l10_finetuning.early_stopping_picks``.
    """
    raise NotImplementedError("Task 10.3: early_stopping is not written yet")


# =====================================================================================
# Task 10.4 -- concept check
# =====================================================================================
# Answer each question with one letter, "a" to "d", in ANSWERS below.
# {questions}
