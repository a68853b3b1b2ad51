"""Homework 8, task 8.2 (the causal mask): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, expect_close, fail
from minitf.grading.problems import shapes
from minitf.grading.wire import Student

from .common import expect_same_curve, reference_losses, student_losses, tiny_model, tiny_task

HOMEWORK = "hw08"
task2 = pytest.mark.hw08_task2


# =====================================================================================
# Task 8.2 -- the causal mask
# =====================================================================================
def check_causal_mask(mask, T: int, dtype) -> None:
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        fail("causal_mask returned a boolean array; minitf's masks are additive floats: 0 where attention is "
             "allowed, a large negative number (e.g. -1e9) where it is blocked, added to the scores")
    m = as_array("mask", mask, shape=(T, T), kind="f", dtype=dtype)
    if np.isneginf(m).any():
        fail("the mask holds -inf; use a large finite negative number such as -1e9: two masks are added "
             "together (causal + padding) and -inf - -inf is nan, and a fully masked row must stay finite")
    if not np.isfinite(m).all():
        fail(f"the mask holds non-finite values {np.unique(m[~np.isfinite(m)]).tolist()}")
    allowed = np.abs(m) <= 1e-6  # tolerance: an allowed entry adds (practically) nothing
    blocked = m <= -1e4  # large enough that exp(score + mask) is 0 in float32 and float64
    if not (allowed | blocked).all():
        t, s = np.argwhere(~(allowed | blocked))[0]
        fail(f"mask[{t}, {s}] = {m[t, s]:g}: an additive mask holds 0 (attend) or a large negative number such as "
             f"-1e9 (blocked; anything above -1e4 leaves the position partly visible after the softmax)")
    t, s = np.indices((T, T))
    if (allowed & (s == t + 1)).any():
        t0 = int(np.argmax((allowed & (s == t + 1)).any(axis=1)))
        fail(f"position {t0} can see position {t0 + 1}: the decoder input at t+1 is y_t, the label position t must "
             f"predict, so this mask leaks the answer (label leakage). Block every key s > t")
    if (allowed & (s > t)).any():
        t0, s0 = np.argwhere(allowed & (s > t))[0]
        fail(f"position {t0} can see the later position {s0}: a causal mask blocks every key s > t")
    if (blocked & (s == t)).any():
        fail("the diagonal is blocked: position t must see itself (its input y_(t-1) is the newest thing it has); "
             "block only s > t")
    if (blocked & (s < t)).any():
        t0, s0 = np.argwhere(blocked & (s < t))[0]
        fail(f"position {t0} cannot see the earlier position {s0}: a causal mask blocks the future only")


@task2
def test_causal_mask_values(submission, homework_seed):
    causal_mask = submission.function("causal_mask")
    drawn = shapes(homework_seed, [(2,), (9,)], T=(8, 40)) if homework_seed.secret else []  # sizes no public run asks
    for T, dtype in [(5, np.float32), (1, np.float32), (7, np.float64)] + [(T, np.float64) for (T,) in drawn]:
        check_causal_mask(causal_mask(T, dtype=dtype), T, dtype)


@task2
def test_causal_mask_blocks_the_future_in_the_model(submission, homework_seed):
    """Changing the decoder input after position t must leave the logits at t unchanged.

    The student's mask is data: it comes back from the student's process and goes into the
    model here, in the grader."""
    causal_mask = submission.function("causal_mask")
    task = tiny_task()
    model = tiny_model(task, d_model=16, n_decoder_layers=2, dtype="float64", seed=2)
    rng = np.random.default_rng(homework_seed + 3)
    batch = task.batch(task.sample(4, rng))
    B, T = batch.labels.shape
    mask = causal_mask(T, dtype=np.float64)
    check_causal_mask(mask, T, np.float64)
    if homework_seed.secret:  # and a length no public run asks for (a mask recorded for the public lengths fails)
        (T2,), = shapes(homework_seed, [(12,)], T=(8, 40))
        check_causal_mask(causal_mask(T2, dtype=np.float64), T2, np.float64)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids, self_mask=mask)  # (B, T, V)
    expected, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # minitf's mask
    expect_close("logits with your mask", logits, expected, rtol=1e-9, atol=1e-9,
                 hint="the model's output with your causal_mask should equal its output with minitf's")
    for t in range(T - 1):
        changed = batch.decoder_input_ids.copy()
        changed[:, t + 1:] = rng.integers(3, task.tokenizer.vocab_size, size=(B, T - t - 1))  # the future
        logits2, _ = model.forward(batch.input_ids, changed, self_mask=mask)
        diff = float(np.abs(logits2[:, :t + 1] - logits[:, :t + 1]).max())
        if diff > 1e-9:
            fail(f"with your mask, changing the decoder inputs after position {t} changed the logits at position "
                 f"{t} (by up to {diff:.3g} > 1e-9): position t sees the future, which is label leakage")


@task2
def test_training_with_your_causal_mask(submission, homework_seed):
    causal_mask = submission.function("causal_mask")
    check_causal_mask(causal_mask(4, dtype=np.float32), 4, np.float32)
    if homework_seed.secret:  # a length no public run asks for
        (T2,), = shapes(homework_seed, [(12,)], T=(8, 40))
        check_causal_mask(causal_mask(T2, dtype=np.float32), T2, np.float32)
    losses = student_losses(submission, homework_seed, mask_fn=Student("causal_mask"))
    expect_same_curve("your causal_mask", losses, reference_losses(homework_seed))
