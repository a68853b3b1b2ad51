"""Homework 8, task 8.1 (shift_right): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX
from minitf.data import shift_right as minitf_shift_right
from minitf.grading.asserts import as_array, expect_equal_ids, fail, returned_arg, same_array
from minitf.grading.problems import shapes
from minitf.grading.wire import Student

from .common import PAD, START, expect_same_curve, random_labels, reference_losses, student_losses, tiny_task

HOMEWORK = "hw08"
task1 = pytest.mark.hw08_task1


# =====================================================================================
# Task 8.1 -- shift_right
# =====================================================================================
def diagnose_shift(labels, out, start_id, pad_id) -> str | None:
    """Name the classic mistake in ``out = shift_right(labels, start_id, pad_id)``, if it is one."""
    B, T = labels.shape
    as_ids = np.where(labels == IGNORE_INDEX, pad_id, labels)  # the labels as token ids
    expected = minitf_shift_right(labels, start_id, pad_id)
    if np.array_equal(out, expected):
        return None
    if (out == IGNORE_INDEX).any():
        b, t = np.argwhere(out == IGNORE_INDEX)[0]
        return (f"decoder_input_ids[{b}, {t}] is -100: IGNORE_INDEX was left in the decoder inputs. -100 marks a "
                f"label the loss skips; it is not a token id, and the embedding lookup cannot take it. "
                f"Map it to pad_id={pad_id}")
    if T > 1 and (np.array_equal(out, as_ids) or np.array_equal(out[:, 1:], as_ids[:, 1:])):
        return (f"the decoder input at position t is y_t, the very label it must predict at t: that is label "
                f"leakage. Shift right by one: position t is fed y_(t-1) (labels {labels[0].tolist()} -> "
                f"expected {expected[0].tolist()}, received {out[0].tolist()})")
    if T > 1 and np.array_equal(out[:, :-1], as_ids[:, 1:]):
        return ("the labels were shifted left: position t is fed y_(t+1), a future token (label leakage). "
                "Shift right: position t is fed y_(t-1)")
    if not (out[:, 0] == start_id).all():
        b = int(np.argmax(out[:, 0] != start_id))
        hint = (" (np.roll wraps the last label round to the front)" if T > 1 and (out[:, 0] == as_ids[:, -1]).all()
                else "")
        return (f"no start token: position 0 has no previous token and must be fed start_id={start_id}, but row {b} "
                f"begins with {out[b, 0]}{hint}; expected {expected[b].tolist()}, received {out[b].tolist()}")
    return None


def check_shift(shift_right, labels, start_id, pad_id) -> None:
    original = labels.copy()
    out = shift_right(labels, start_id, pad_id)
    out = as_array("decoder_input_ids", out, shape=labels.shape, kind="i")
    if not same_array(returned_arg(shift_right, 0), original):
        fail("shift_right changed its input labels in place; the loss still needs them: work on a new array")
    if out.dtype != labels.dtype:
        fail(f"decoder_input_ids: expected the dtype of labels ({labels.dtype}), received {out.dtype}")
    mistake = diagnose_shift(labels, out, start_id, pad_id)
    if mistake:
        fail(mistake)
    expect_equal_ids("decoder_input_ids", out, minitf_shift_right(labels, start_id, pad_id),
                     hint=f"labels {labels.tolist()}, start_id={start_id}, pad_id={pad_id}")


@task1
def test_shift_right_docstring_example(submission, homework_seed):
    """The template's example; on the secret seed, one like it that no public run shows (an answer
    recorded for the example alone earns nothing)."""
    shift_right = submission.function("shift_right")
    labels = np.array([[5, 4, 6, 2], [7, 2, IGNORE_INDEX, IGNORE_INDEX]], dtype=np.int64)
    check_shift(shift_right, labels, START, PAD)
    if homework_seed.secret:
        check_shift(shift_right, random_labels(homework_seed.rng("docstring example"), 2, 4), START, PAD)


@task1
def test_shift_right_random_batches(submission, homework_seed):
    shift_right = submission.function("shift_right")
    rng = np.random.default_rng(homework_seed + 8)
    sizes = shapes(homework_seed, [(5, 9), (3, 4), (4, 1), (1, 12)], B=(1, 6), T=(1, 12))
    for (B, T), dtype in zip(sizes, [np.int64, np.int32, np.int64, np.int64]):
        labels = random_labels(rng, B, T).astype(dtype)
        check_shift(shift_right, labels, START, PAD)
    # T5's convention: the pad id is the start token too
    check_shift(shift_right, random_labels(rng, 4, 6), 0, 0)
    check_shift(shift_right, random_labels(rng, 4, 6), 7, 5)


@task1
def test_training_with_your_shift_right(submission, homework_seed):
    shift_right = submission.function("shift_right")
    batch = tiny_task().batch(tiny_task().sample(8, np.random.default_rng(homework_seed)))
    out = as_array("decoder_input_ids", shift_right(batch.labels.copy(), START, PAD), shape=batch.labels.shape,
                   kind="i")
    mistake = diagnose_shift(batch.labels, out, START, PAD)
    if mistake:
        fail(mistake)
    losses = student_losses(submission, homework_seed, shift=Student("shift_right"))
    reference = reference_losses(homework_seed)
    if losses[-1] < 0.5 * reference[-1]:
        fail(f"with your shift_right the training loss collapses to {losses[-1]:.4g} (minitf's run: "
             f"{reference[-1]:.4g}): the decoder is being shown the answer, which is label leakage")
    expect_same_curve("your shift_right", losses, reference)
