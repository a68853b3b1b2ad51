"""Public tests of homework 8 (Training: teacher forcing & the loss), one marker per task.

Run by the grader: ``minitf grade hw08 FILE`` (or ``pytest --pyargs minitf.homework.hw08.tests
--submission FILE -m hw08_task3``; without ``--submission`` they refuse to run).  The
file's name keeps pytest from collecting it in an ordinary run.

These tests run in the grader's process.  Every call to the student's code goes to the
student's own process (the ``submission`` fixture's functions are proxies), and only its
result comes back, as data.  Where a task plugs into minitf, the whole run that uses the
student's function happens in the student's process (:mod:`.runs`) and is compared with
the same run of minitf's own.  Task 8.6's tests need the answer key: they are hidden
tests, kept with the instructor material.

Every test calls the student's function before anything else (a blank template scores
0), compares with minitf's own implementation under a stated tolerance, and, where it
recognises a classic mistake, names it.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

from minitf.attention import MultiHeadAttention, merge_heads, scaled_dot_product_attention_backward, split_heads
from minitf.data import IGNORE_INDEX, Batch
from minitf.data import shift_right as minitf_shift_right
from minitf.gradcheck import numerical_gradient
from minitf.homework.asserts import as_array, as_float, close, expect_close, expect_equal_ids, fail
from minitf.homework.hw08 import runs
from minitf.homework.wire import Student
from minitf.loss import cross_entropy as minitf_cross_entropy
from minitf.masks import key_padding_mask
from minitf.models import EncoderDecoder
from minitf.optim import Adam
from minitf.tasks import get_task
from minitf.decoding import greedy_search
from minitf.training import default_model_config, evaluate, sequence_metrics, train_step

HOMEWORK = "hw08"

task1 = pytest.mark.hw08_task1
task2 = pytest.mark.hw08_task2
task3 = pytest.mark.hw08_task3
task4 = pytest.mark.hw08_task4
task5 = pytest.mark.hw08_task5

START, PAD, EOS = 1, 0, 2  # the ids of <bos>, <pad> and <eos> in minitf's CharTokenizer


def greedy_reference(model, src_ids, max_len):
    """What free_running_decode must return: minitf's greedy search re-running the decoder on
    the whole prefix (as the task asks), with <eos> repeated after a row's end where minitf
    pads."""
    out = greedy_search(model, src_ids, max_new_tokens=max_len, start_id=START, eos_id=EOS, use_cache=False)
    ended = np.arange(out.sequences.shape[1]) >= out.lengths[:, None]  # (B, T') after the row's <eos>
    return np.where(ended, EOS, out.sequences)


# ---- a tiny model and a few dozen training steps ----------------------------------------------------
def tiny_task(name: str = "copy"):
    return get_task(name, min_len=3, max_len=6, n_symbols=6)


def tiny_model(task, *, d_model=32, n_encoder_layers=1, n_decoder_layers=1, seed=0, dtype="float32", **kw):
    cfg = default_model_config(task, d_model=d_model, n_heads=2, d_ff=2 * d_model, n_encoder_layers=n_encoder_layers,
                               n_decoder_layers=n_decoder_layers, seed=seed, dtype=dtype, **kw)
    return EncoderDecoder(cfg)


TRAIN_STEPS, TRAIN_LR, TRAIN_BATCH = 30, 0.1, 32  # plain SGD with momentum: a gradient's scale shows


def training_run(seed: int = 0) -> tuple:
    """``(args, kwargs)`` of :func:`runs.train_losses` for a tiny encoder-decoder on ``copy``:
    ``TRAIN_STEPS`` fixed batches, SGD with momentum.  Same seeds, same batches: two correct
    implementations give the same loss curve up to float32 rounding."""
    task = tiny_task()
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(TRAIN_STEPS):
        batch = task.batch(task.sample(TRAIN_BATCH, rng))
        batches.append((batch.input_ids, batch.labels))
    return (tiny_model(task).config.to_dict(), batches), dict(start_id=START, pad_id=PAD, lr=TRAIN_LR, momentum=0.9)


_REFERENCE_CURVE: list[float] = []


def reference_losses() -> list[float]:
    """The loss curve with minitf's own shift_right, causal_mask and cross_entropy (computed once)."""
    if not _REFERENCE_CURVE:
        args, kwargs = training_run()
        _REFERENCE_CURVE.extend(runs.train_losses(*args, **kwargs))
    return _REFERENCE_CURVE


def student_losses(submission, **plugged) -> list[float]:
    """The same run in the student's process, with the student's functions ``plugged`` in
    (``shift=Student("shift_right")``)."""
    args, kwargs = training_run()
    losses = submission.run("train_losses", *args, **kwargs, **plugged)
    if not isinstance(losses, list) or len(losses) != TRAIN_STEPS:
        fail(f"the training run with your code did not return {TRAIN_STEPS} losses")
    return [as_float(f"the loss at step {i}", x) for i, x in enumerate(losses)]


def expect_same_curve(what: str, received: list[float], expected: list[float], rtol: float = 1e-3) -> None:
    """Fail unless two loss curves agree step by step within ``rtol`` (float32 training)."""
    for step, (r, e) in enumerate(zip(received, expected)):
        if not math.isfinite(r) or abs(r - e) > rtol * abs(e):
            fail(f"training a tiny model on 'copy' ({TRAIN_STEPS} SGD steps) with {what}: the loss at step {step} "
                 f"is {r:.6g}, the run with minitf's own is {e:.6g} (rtol {rtol:g}); "
                 f"final loss {received[-1]:.4g} vs {expected[-1]:.4g}")
    if not received[-1] < 0.8 * received[0]:
        fail(f"training with {what}: the loss did not fall ({received[0]:.4g} -> {received[-1]:.4g})")


def random_labels(rng, B: int, T: int, V: int = 10, min_len: int = 1, low: int = 3) -> np.ndarray:
    """(B, T) int64 labels in [low, V), right-padded with IGNORE_INDEX after a random length
    (row 0 is never padded).  The default ``low`` = 3 keeps the special ids out."""
    labels = rng.integers(low, V, size=(B, T))
    lengths = rng.integers(min_len, T + 1, size=B)
    lengths[0] = T  # one full row
    labels[np.arange(T)[None, :] >= lengths[:, None]] = IGNORE_INDEX
    return labels


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
    if not np.array_equal(labels, original):
        fail("shift_right changed its input labels in place; the loss still needs them: work on a new array")
    if out.dtype != labels.dtype:
        fail(f"decoder_input_ids: expected the dtype of labels ({labels.dtype}), received {out.dtype}")
    mistake = diagnose_shift(labels, out, start_id, pad_id)
    if mistake:
        fail(mistake)
    expect_equal_ids("decoder_input_ids", out, minitf_shift_right(labels, start_id, pad_id),
                     hint=f"labels {labels.tolist()}, start_id={start_id}, pad_id={pad_id}")


@task1
def test_shift_right_docstring_example(submission):
    shift_right = submission.function("shift_right")
    labels = np.array([[5, 4, 6, 2], [7, 2, IGNORE_INDEX, IGNORE_INDEX]], dtype=np.int64)
    check_shift(shift_right, labels, START, PAD)


@task1
def test_shift_right_random_batches(submission):
    shift_right = submission.function("shift_right")
    rng = np.random.default_rng(8)
    for B, T, dtype in [(5, 9, np.int64), (3, 4, np.int32), (4, 1, np.int64), (1, 12, np.int64)]:
        labels = random_labels(rng, B, T).astype(dtype)
        check_shift(shift_right, labels, START, PAD)
    # T5's convention: the pad id is the start token too
    check_shift(shift_right, random_labels(rng, 4, 6), 0, 0)
    check_shift(shift_right, random_labels(rng, 4, 6), 7, 5)


@task1
def test_training_with_your_shift_right(submission):
    shift_right = submission.function("shift_right")
    batch = tiny_task().batch(tiny_task().sample(8, np.random.default_rng(0)))
    out = as_array("decoder_input_ids", shift_right(batch.labels.copy(), START, PAD), shape=batch.labels.shape,
                   kind="i")
    mistake = diagnose_shift(batch.labels, out, START, PAD)
    if mistake:
        fail(mistake)
    losses = student_losses(submission, shift=Student("shift_right"))
    reference = reference_losses()
    if losses[-1] < 0.5 * reference[-1]:
        fail(f"with your shift_right the training loss collapses to {losses[-1]:.4g} (minitf's run: "
             f"{reference[-1]:.4g}): the decoder is being shown the answer, which is label leakage")
    expect_same_curve("your shift_right", losses, reference)


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
def test_causal_mask_values(submission):
    causal_mask = submission.function("causal_mask")
    for T, dtype in [(5, np.float32), (1, np.float32), (7, np.float64)]:
        check_causal_mask(causal_mask(T, dtype=dtype), T, dtype)


@task2
def test_causal_mask_blocks_the_future_in_the_model(submission):
    """Changing the decoder input after position t must leave the logits at t unchanged."""
    causal_mask = submission.function("causal_mask")
    check_causal_mask(causal_mask(6, dtype=np.float64), 6, np.float64)
    task = tiny_task()
    model = tiny_model(task, d_model=16, n_decoder_layers=2, dtype="float64", seed=2)
    rng = np.random.default_rng(3)
    batch = task.batch(task.sample(4, rng))
    B, T = batch.labels.shape
    changed = []
    for t in range(T - 1):
        inputs = batch.decoder_input_ids.copy()
        inputs[:, t + 1:] = rng.integers(3, task.tokenizer.vocab_size, size=(B, T - t - 1))  # the future
        changed.append(inputs)
    # the forward passes with the student's mask run in the student's process
    out = submission.run("forward_logits", model, batch.input_ids, [batch.decoder_input_ids] + changed,
                         Student("causal_mask"))
    logits = as_array("logits with your mask", out[0], shape=(B, T, None), kind="f")
    expected, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # minitf's mask
    expect_close("logits with your mask", logits, expected, rtol=1e-9, atol=1e-9,
                 hint="the model's output with your causal_mask should equal its output with minitf's")
    for t, logits2 in enumerate(out[1:]):
        logits2 = as_array("logits with your mask", logits2, shape=logits.shape, kind="f")
        diff = float(np.abs(logits2[:, :t + 1] - logits[:, :t + 1]).max())
        if diff > 1e-9:
            fail(f"with your mask, changing the decoder inputs after position {t} changed the logits at position "
                 f"{t} (by up to {diff:.3g} > 1e-9): position t sees the future, which is label leakage")


@task2
def test_training_with_your_causal_mask(submission):
    causal_mask = submission.function("causal_mask")
    check_causal_mask(causal_mask(4, dtype=np.float32), 4, np.float32)
    losses = student_losses(submission, mask_fn=Student("causal_mask"))
    expect_same_curve("your causal_mask", losses, reference_losses())


# =====================================================================================
# Task 8.3 -- masked cross-entropy
# =====================================================================================
def loss_problem(seed: int, B=3, T=6, V=7, dtype=np.float64):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 2.0, size=(B, T, V)).astype(dtype)
    labels = random_labels(rng, B, T, V=V, min_len=2, low=0)  # every class may be a label
    return logits, labels


def call_loss(fn, logits, labels):
    given_logits, given_labels = logits.copy(), labels.copy()
    out = fn(logits, labels)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"masked_cross_entropy: expected a pair (loss, dlogits), received {type(out).__name__}"
             + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    if not np.array_equal(logits, given_logits) or not np.array_equal(labels, given_labels):
        fail("masked_cross_entropy changed its inputs in place; work on new arrays")
    if np.ndim(out[0]) == 0 and np.isreal(out[0]) and not np.isfinite(out[0]):
        fail(f"the loss is {float(out[0])} for logits up to {np.abs(logits).max():.3g}: exp overflowed? Compute the "
             f"log-softmax stably, subtracting each row's maximum before exp")
    loss = as_float("loss", out[0])
    dlogits = as_array("dlogits", out[1], shape=logits.shape, kind="f")
    if not np.isfinite(dlogits).all():
        fail(f"dlogits holds non-finite values for logits up to {np.abs(logits).max():.3g}: exp overflowed? "
             f"Subtract each row's maximum before exp")
    return loss, dlogits


def per_position_nll(logits, labels):
    """(B, T) -log softmax(z)[y], with label 0 at ignored positions (what a forgotten mask computes)."""
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    y = np.where(labels == IGNORE_INDEX, 0, labels)
    return -np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]


def diagnose_loss(loss, logits, labels) -> str | None:
    ref, _ = minitf_cross_entropy(logits, labels)
    real = labels != IGNORE_INDEX
    n_real, n_all, B = int(real.sum()), labels.size, labels.shape[0]
    total = ref * n_real
    tol = dict(rtol=1e-6, atol=1e-9)
    if close(loss, ref, **tol):
        return None
    if close(loss, total / n_all, **tol):
        return (f"the loss is divided by the padded length B*T = {n_all} instead of the number of real target "
                f"tokens n_real = {n_real}: expected {ref:.6g}, received {loss:.6g}")
    if close(loss, per_position_nll(logits, labels).mean(), **tol):
        return (f"the loss is averaged over the padding positions too: expected the mean over the {n_real} real "
                f"tokens, {ref:.6g}; received {loss:.6g}, the mean over all {n_all} positions. Padding must add "
                f"nothing to the sum and nothing to the count")
    if close(loss, total, **tol):
        return f"the loss is the sum over real tokens ({total:.6g}), not their mean: divide by n_real = {n_real}"
    if close(loss, total / B, **tol):
        return f"the loss is divided by the batch size B = {B}, not by the number of real tokens n_real = {n_real}"
    if close(loss, -ref, **tol):
        return "the loss has the wrong sign: cross-entropy is -log p_hat[y], a positive number"
    return None


def diagnose_grad(dlogits, logits, labels) -> str | None:
    _, ref = minitf_cross_entropy(logits, labels)
    real = labels != IGNORE_INDEX
    n_real, n_all = int(real.sum()), labels.size
    tol = dict(rtol=1e-6, atol=1e-12)
    if close(dlogits, ref, **tol):
        return None
    pad_grad = np.abs(dlogits[~real]).max() if (~real).any() else 0.0
    if close(dlogits, ref * n_real, **tol):
        return (f"the gradient is missing the 1/n_real: it is n_real = {n_real} times too large. The loss is the "
                f"mean over real tokens, so each real position's gradient is (p_hat - y) / n_real")
    if close(dlogits, ref * n_real / n_all, **tol):
        return (f"the gradient is divided by the padded length B*T = {n_all} instead of n_real = {n_real}: "
                f"(p_hat - y) / n_real at each real position")
    if close(dlogits, -ref, **tol):
        return "the gradient has the wrong sign: dL/dz = p_hat - y, not y - p_hat"
    if pad_grad > 1e-12:
        b, t = np.argwhere(~real)[int(np.argmax(np.abs(dlogits[~real]).max(axis=-1)))]
        return (f"padding positions get a gradient (dlogits[{b}, {t}] is nonzero, up to {pad_grad:.3g}): an ignored "
                f"label contributes no loss, so its gradient must be exactly 0")
    if close(dlogits[real], ref[real] * n_real / n_all, **tol) or close(dlogits[real], ref[real] * n_real, **tol):
        return f"the gradient at real positions is scaled wrong: each is (p_hat - y) / n_real, n_real = {n_real}"
    return None


@task3
def test_loss_value(submission):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    for seed in range(3):
        logits, labels = loss_problem(seed)
        loss, _ = call_loss(masked_cross_entropy, logits, labels)
        mistake = diagnose_loss(loss, logits, labels)
        if mistake:
            fail(mistake)
        expected, _ = minitf_cross_entropy(logits, labels)
        expect_close("loss", loss, expected, rtol=1e-7, atol=1e-12,
                     hint="the mean of -log softmax(z)[y] over the real target tokens")


@task3
def test_gradient_is_p_hat_minus_y(submission):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    for seed in range(3):
        logits, labels = loss_problem(seed)
        _, dlogits = call_loss(masked_cross_entropy, logits, labels)
        mistake = diagnose_grad(dlogits, logits, labels)
        if mistake:
            fail(mistake)
        _, expected = minitf_cross_entropy(logits, labels)
        expect_close("dlogits", dlogits, expected, rtol=1e-7, atol=1e-12,
                     hint="(p_hat - onehot(y)) / n_real at real positions, 0 at padding")


@task3
def test_gradient_against_finite_differences(submission):
    """Your gradient must be the derivative of your loss (float64 finite differences)."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(5, B=2, T=4, V=5)
    _, dlogits = call_loss(masked_cross_entropy, logits, labels)
    x = logits.copy()
    numeric = numerical_gradient(lambda: float(masked_cross_entropy(x, labels)[0]), x, h=1e-3)
    expect_close("dlogits vs finite differences of your loss", dlogits, numeric, rtol=1e-6, atol=1e-9,
                 hint="the fourth-order centred difference of your own loss; a gradient must be the derivative "
                      "of the loss it comes with")


@task3
def test_padding_changes_nothing(submission):
    """A padded batch gives the loss and gradients of its real tokens, whatever the padding."""
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(7)
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    B, T, V = logits.shape
    rng = np.random.default_rng(0)
    more_logits = np.concatenate([logits, rng.normal(0, 5, size=(B, 4, V))], axis=1)  # (B, T+4, V)
    more_labels = np.concatenate([labels, np.full((B, 4), IGNORE_INDEX)], axis=1)  # 4 more padding columns
    loss2, dlogits2 = call_loss(masked_cross_entropy, more_logits, more_labels)
    if not close(loss2, loss, rtol=1e-9, atol=1e-12):
        fail(f"adding 4 padding positions to every row changed the loss from {loss:.8g} to {loss2:.8g}: padding "
             f"must add nothing to the sum and nothing to the count (divide by n_real, not by B*T)")
    expect_close("dlogits at the real positions after adding padding", dlogits2[:, :T], dlogits, rtol=1e-9,
                 atol=1e-14, hint="padding must not change the gradient of real tokens")
    expect_close("dlogits at the added padding positions", dlogits2[:, T:], np.zeros((B, 4, V)), rtol=0,
                 atol=1e-14, hint="an ignored label gets exactly zero gradient")


@task3
def test_float32_in_float32_out(submission):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(9, dtype=np.float32)
    logits *= 30  # large logits: a softmax without the max subtracted overflows
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    as_array("dlogits", dlogits, dtype=np.float32)
    expected_loss, expected = minitf_cross_entropy(logits, labels)
    expect_close("loss (float32, logits up to ~200)", loss, expected_loss, rtol=1e-4, atol=1e-5,
                 hint="compute the softmax stably: subtract each row's maximum before exp")
    expect_close("dlogits (float32, logits up to ~200)", dlogits, expected, rtol=1e-4, atol=1e-6)


@task3
def test_training_with_your_loss(submission):
    masked_cross_entropy = submission.function("masked_cross_entropy")
    logits, labels = loss_problem(1)
    loss, dlogits = call_loss(masked_cross_entropy, logits, labels)
    mistake = diagnose_loss(loss, logits, labels) or diagnose_grad(dlogits, logits, labels)
    if mistake:
        fail(mistake)
    expect_same_curve("your masked_cross_entropy", student_losses(submission, loss_fn=Student("masked_cross_entropy")),
                      reference_losses())


# =====================================================================================
# Task 8.4 -- through cross-attention into the encoder
# =====================================================================================
def cross_attention_problem(seed: int, B=2, T=3, S=5, D=8, H=2):
    """A float64 cross-attention, its forward on random inputs with source padding, and dy."""
    rng = np.random.default_rng(seed)
    attn = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    for name in ("b_q", "b_k", "b_v", "b_o"):  # nonzero biases, so that they are not silently 0
        attn.params[name][:] = rng.normal(0, 0.5, size=D)
    x_q = rng.normal(size=(B, T, D))
    H_enc = rng.normal(size=(B, S, D))
    mask = key_padding_mask(lengths=np.array([S] + [S - 2] * (B - 1)), max_len=S, dtype=np.float64)
    _, cache = attn.forward(x_q, H_enc, mask)
    dy = rng.normal(size=(B, T, D))
    return attn, dy, cache


def snapshot(cache) -> list[np.ndarray]:
    return [cache.x_q.copy(), cache.x_kv.copy(), cache.o.copy()] + [a.copy() for a in cache.attn]


def call_cross_backward(fn, attn, dy, cache):
    before = snapshot(cache)
    dy_before = dy.copy()
    out = fn(attn, dy, cache)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"cross_attention_backward: expected a pair (dx_q, dH_enc), received {type(out).__name__}")
    for name, a, b in zip(["x_q", "x_kv", "o", "attn.Q", "attn.K", "attn.V", "attn.A"], before, snapshot(cache)):
        if not np.array_equal(a, b):
            fail(f"cross_attention_backward changed cache.{name} in place: a cache is read-only "
                 f"(compute new arrays instead of writing into it)")
    if not np.array_equal(dy, dy_before):
        fail("cross_attention_backward changed dy in place; work on new arrays")
    B, T, D = cache.x_q.shape
    S = cache.x_kv.shape[1]
    dx_q, dH_enc = out
    if getattr(dx_q, "shape", None) == (B, S, D) and getattr(dH_enc, "shape", None) == (B, T, D) and S != T:
        fail(f"the two gradients come back swapped: dx_q should be (B, T, D) = {(B, T, D)} like the decoder "
             f"stream, dH_enc (B, S, D) = {(B, S, D)} like the encoder output")
    dx_q = as_array("dx_q", dx_q, shape=(B, T, D), kind="f")
    dH_enc = as_array("dH_enc", dH_enc, shape=(B, S, D), kind="f")
    return dx_q, dH_enc


def cross_attention_parts(attn, dy, cache):
    """minitf's answer, and the pieces a wrong answer is often made of."""
    p, H = attn.params, attn.n_heads
    dheads = split_heads(dy @ p["W_o"].T, H)  # (B, H, T, Dh)
    dQ, dK, dV = scaled_dot_product_attention_backward(dheads, cache.attn)
    return {
        "dx_q": merge_heads(dQ) @ p["W_q"].T,
        "through_K": merge_heads(dK) @ p["W_k"].T,
        "through_V": merge_heads(dV) @ p["W_v"].T,
        "Dh": cache.attn.Q.shape[-1],
    }


@task4
def test_cross_attention_backward(submission):
    cross_attention_backward = submission.function("cross_attention_backward")
    for seed in range(2):
        attn, dy, cache = cross_attention_problem(seed)
        dx_q, dH_enc = call_cross_backward(cross_attention_backward, attn, dy, cache)
        parts = cross_attention_parts(attn, dy, cache)
        expected_enc = parts["through_K"] + parts["through_V"]
        tol = dict(rtol=1e-7, atol=1e-10)
        if not close(dH_enc, expected_enc, **tol):
            if close(dH_enc, parts["through_K"], **tol):
                fail("dH_enc is only the gradient through the keys: the values are computed from H_enc too, so "
                     "dH_enc = dK W_k^T + dV W_v^T (merged over heads)")
            if close(dH_enc, parts["through_V"], **tol):
                fail("dH_enc is only the gradient through the values: the keys are computed from H_enc too, so "
                     "dH_enc = dK W_k^T + dV W_v^T (merged over heads)")
            scale = math.sqrt(parts["Dh"])
            if close(dH_enc, parts["through_K"] * scale + parts["through_V"], **tol):
                fail("the gradient through the scores misses the 1/sqrt(Dh) of the forward "
                     "(scores = Q K^T / sqrt(Dh)): dK is sqrt(Dh) times too large")
        expect_close("dH_enc", dH_enc, expected_enc, **tol,
                     hint="dH_enc = merge(dK) W_k^T + merge(dV) W_v^T, with dK, dV from the attention backward")
        if not close(dx_q, parts["dx_q"], **tol) and close(dx_q, parts["dx_q"] * math.sqrt(parts["Dh"]), **tol):
            fail("dx_q misses the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh))")
        expect_close("dx_q", dx_q, parts["dx_q"], **tol, hint="dx_q = merge(dQ) W_q^T")


@contextlib.contextmanager
def recording_cross_attention(model, record):
    """Record, for every decoder block, the gradient arriving at its cross-attention and its cache."""
    for l, block in enumerate(model.decoder_layers):
        attn = block.cross_attn

        def backward(dy, cache, _attn=attn, _l=l):
            record.append((_l, dy.copy(), cache))
            return type(_attn).backward(_attn, dy, cache)

        attn.backward = backward  # an instance attribute shadows the method
    try:
        yield record
    finally:
        for block in model.decoder_layers:
            del block.cross_attn.backward


@contextlib.contextmanager
def plugged_cross_attention(model, fn):
    """Every decoder block's cross-attention backward replaced by ``fn(attn, dy, cache)``."""
    for block in model.decoder_layers:
        attn = block.cross_attn
        attn.backward = lambda dy, cache, _attn=attn: tuple(fn(_attn, dy, cache))
    try:
        yield
    finally:
        for block in model.decoder_layers:
            del block.cross_attn.backward


@pytest.fixture(scope="module")
def three_block_model():
    """A float64 encoder-decoder with 3 decoder blocks, its cache, and minitf's backward through it."""
    task = tiny_task()
    model = tiny_model(task, d_model=16, n_encoder_layers=2, n_decoder_layers=3, dtype="float64", seed=5,
                       share_embeddings=False, tie_output=False)
    batch = task.batch(task.sample(3, np.random.default_rng(4)))
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    _, dlogits = minitf_cross_entropy(logits, batch.labels)
    model.zero_grad()
    record: list = []
    with recording_cross_attention(model, record):
        out = model.backward(dlogits, cache)
    grads = {k: v.copy() for k, v in model.gradients().items()}
    record.sort(key=lambda r: r[0])
    return {"model": model, "cache": cache, "dlogits": dlogits, "out": out, "grads": grads,
            "douts": [r[1] for r in record], "caches": [r[2] for r in record]}


@task4
def test_cross_attention_backward_inside_the_model(submission, three_block_model):
    """Your backward in every decoder block: the encoder must get the same gradient as with minitf's."""
    cross_attention_backward = submission.function("cross_attention_backward")
    m = three_block_model
    model = m["model"]
    call_cross_backward(cross_attention_backward, model.decoder_layers[0].cross_attn, m["douts"][0], m["caches"][0])
    model.zero_grad()
    with plugged_cross_attention(model, cross_attention_backward):
        out = model.backward(m["dlogits"], m["cache"])
    for l, (share, expected) in enumerate(zip(out.dH_enc_shares, m["out"].dH_enc_shares)):
        expect_close(f"decoder block {l}'s share of dL/dH_enc, with your backward in every block", share, expected,
                     rtol=1e-7, atol=1e-12)
    expect_close("dL/dH_enc of the model", out.dH_enc, m["out"].dH_enc, rtol=1e-7, atol=1e-12)
    for name, g in model.gradients().items():
        if ".cross_attn." in name:
            continue  # parameter gradients are not part of the task
        hint = ("the encoder learns only from dL/dH_enc" if name.startswith(("encoder", "src_"))
                else "dx_q flows on down the decoder")
        expect_close(f"the gradient of {name}", g, m["grads"][name], rtol=1e-6, atol=1e-12, hint=hint)
    model.zero_grad()


@task4
def test_encoder_output_gradient_sums_every_block(submission, three_block_model):
    encoder_output_gradient = submission.function("encoder_output_gradient")
    m = three_block_model
    model = m["model"]
    attns = [block.cross_attn for block in model.decoder_layers]
    dH_enc = encoder_output_gradient(attns, list(m["douts"]), list(m["caches"]))
    expected = m["out"].dH_enc
    dH_enc = as_array("dH_enc", dH_enc, shape=expected.shape, kind="f")
    shares = m["out"].dH_enc_shares
    tol = dict(rtol=1e-7, atol=1e-12)
    if not close(dH_enc, expected, **tol):
        for l, share in enumerate(shares):
            if close(dH_enc, share, **tol):
                fail(f"dH_enc is decoder block {l}'s share alone (of {len(shares)} blocks): every decoder block's "
                     f"cross-attention reads H_enc, so the encoder's gradient is the SUM of all {len(shares)} "
                     f"blocks' shares")
        if close(dH_enc, expected / len(shares), **tol):
            fail(f"dH_enc is the mean of the {len(shares)} blocks' shares; the chain rule adds them: "
                 f"sum, don't average")
    expect_close("dH_enc", dH_enc, expected, **tol,
                 hint="the sum over decoder blocks of each cross-attention's dH_enc (EncoderDecoder.backward's total)")


# =====================================================================================
# Task 8.5 -- free-running decoding and exposure bias
# =====================================================================================
@pytest.fixture(scope="module")
def reverse_model():
    """A tiny model trained part-way on 'reverse': good teacher-forced, worse free-running."""
    task = tiny_task("reverse")
    model = tiny_model(task, seed=0)
    opt = Adam(model.parameters(), lr=1e-2)
    batches = task.batches(32, np.random.default_rng(0))
    for _ in range(150):
        train_step(model, next(batches), opt, lr=1e-2, clip_norm=1.0)
    model.eval()
    batch = task.batch(task.dataset(48, seed=10_000))
    T = batch.labels.shape[1]
    metrics = evaluate(model, batch, max_len=T)  # teacher-forced accuracy
    # free-running accuracy as the task defines it: <eos> repeated after a row's end
    metrics["free_running_token_accuracy"] = sequence_metrics(greedy_reference(model, batch.input_ids, T),
                                                              batch.labels, EOS)["token_accuracy"]
    gap = metrics["teacher_forced_token_accuracy"] - metrics["free_running_token_accuracy"]
    if not gap > 0.02:  # the tests below need a model whose two numbers differ
        pytest.fail(f"the tests' own model shows no exposure-bias gap ({gap:.3f}); this is a fault of the tests, "
                    "not of your code", pytrace=False)
    return {"model": model, "batch": batch, "metrics": metrics}


LABEL_LIKE = {"labels", "label", "targets", "target", "tgt", "tgt_ids", "y", "decoder_input_ids", "batch"}


def check_generated(out, src_ids, max_len):
    out = as_array("generated", out, kind="i")
    if out.ndim != 2 or out.shape[0] != src_ids.shape[0]:
        fail(f"generated: expected shape (B, T') with B = {src_ids.shape[0]}, received {out.shape}")
    if out.shape[1] > max_len:
        if out.shape[1] == max_len + 1 and (out[:, 0] == START).all():
            fail("the output begins with the start token: return the generated tokens only, prefix[:, 1:]")
        fail(f"generated: expected at most max_len = {max_len} tokens per row, received {out.shape[1]}")
    return out


def call_decode(fn, model, src_ids, max_len):
    src_before = src_ids.copy()
    out = fn(model, src_ids, START, EOS, max_len)
    if not np.array_equal(src_ids, src_before):
        fail("free_running_decode changed src_ids in place")
    return check_generated(out, src_ids, max_len)


@task5
def test_free_running_decode_matches_greedy_decoding(submission, reverse_model):
    free_running_decode = submission.function("free_running_decode")
    model, batch = reverse_model["model"], reverse_model["batch"]
    src = batch.input_ids[:16].copy()
    for max_len in (batch.labels.shape[1] + 2, 3):
        out = call_decode(free_running_decode, model, src, max_len)
        expected = greedy_reference(model, src, max_len)
        if out.shape[1] == expected.shape[1] + 1 and (out[:, 0] == START).all():
            fail("the output begins with the start token: return the generated tokens only, without it")
        if out.shape[1] > expected.shape[1] and (expected == EOS).any(axis=1).all():
            fail(f"decoding went on after every row had produced <eos> ({out.shape[1]} tokens, "
                 f"{expected.shape[1]} needed): stop as soon as every row has finished")
        if out.shape[1] < expected.shape[1]:
            fail(f"decoding stopped after {out.shape[1]} tokens while some rows had not produced <eos> "
                 f"(max_len = {max_len}; a row is finished only when it has produced <eos>)")
        expect_equal_ids(f"generated (max_len={max_len})", out, expected,
                         hint="greedy decoding: the argmax at the last position, fed back as the next input; "
                              "<eos> again after a row has finished")


@task5
def test_free_running_decode_feeds_its_own_outputs(submission, reverse_model):
    submission.function("free_running_decode")
    model, batch = reverse_model["model"], reverse_model["batch"]
    src = batch.input_ids[:16].copy()
    max_len = batch.labels.shape[1]
    # the student's decoder runs in the student's process, which records what it feeds the model
    out = submission.run("decode_and_record", model, src, START, EOS, max_len, Student("free_running_decode"))
    generated, inputs = out
    check_generated(generated, src, max_len)
    params = set(submission.parameters("free_running_decode"))
    if params & LABEL_LIKE:
        fail(f"free_running_decode takes {sorted(params & LABEL_LIKE)}: generation has no target to read; "
             f"keep the signature (model, src_ids, start_id, eos_id, max_len)")
    for prefix in inputs:
        if not isinstance(prefix, np.ndarray) or prefix.ndim != 2 or prefix.shape[0] != src.shape[0]:
            continue
        if not (prefix[:, 0] == START).all():
            fail(f"the decoder's first input must be the start token {START}; it was fed {prefix[:, 0].tolist()}")
        logits, _ = model.forward(src, prefix)  # (B, t, V) computed here, from what was fed
        own = logits.argmax(axis=-1)  # (B, t) the model's prediction after each position
        for j in range(1, prefix.shape[1]):
            finished = (prefix[:, 1:j] == EOS).any(axis=1)
            wrong = (~finished) & (prefix[:, j] != own[:, j - 1])
            if wrong.any():
                r = int(np.argmax(wrong))
                fail(f"at step {j} row {r} was fed token {prefix[r, j]}, but the model's own prediction at step "
                     f"{j - 1} was {own[r, j - 1]}: free-running generation feeds y-hat_(t-1), the model's own "
                     f"output, never the ground truth")


@task5
def test_exposure_bias_measures_both_sides(submission, reverse_model):
    exposure_bias = submission.function("exposure_bias")
    model, batch, metrics = reverse_model["model"], reverse_model["batch"], reverse_model["metrics"]
    given = Batch(batch.input_ids.copy(), batch.decoder_input_ids.copy(), batch.labels.copy())
    out = exposure_bias(model, given, START, EOS)
    if not isinstance(out, dict):
        fail(f"exposure_bias: expected a dict, received {type(out).__name__}")
    keys = {"teacher_forced_accuracy", "free_running_accuracy", "gap"}
    if not keys <= set(out):
        fail(f"exposure_bias: expected the keys {sorted(keys)}, missing {sorted(keys - set(out))}")
    tf = as_float("teacher_forced_accuracy", out["teacher_forced_accuracy"])
    fr = as_float("free_running_accuracy", out["free_running_accuracy"])
    gap = as_float("gap", out["gap"])
    want_tf, want_fr = metrics["teacher_forced_token_accuracy"], metrics["free_running_token_accuracy"]
    tol = dict(rtol=0, atol=1e-9)  # fractions of the same integer count
    if close(fr, want_tf, **tol) and not close(want_fr, want_tf, atol=0.02, rtol=0):
        fail(f"your free-running accuracy ({fr:.4f}) equals the teacher-forced accuracy: the 'free-running' run "
             f"was fed the true prefix (batch.decoder_input_ids or the labels). At generation there is no teacher: "
             f"generate with free_running_decode and compare its tokens with the labels (expected {want_fr:.4f})")
    expect_close("teacher_forced_accuracy", tf, want_tf, **tol,
                 hint="argmax of the teacher-forced logits against the labels, over real label positions")
    expect_close("free_running_accuracy", fr, want_fr, **tol,
                 hint="generated token t against label t (max_len = T), over real label positions")
    expect_close("gap", gap, tf - fr, **tol, hint="gap = teacher-forced minus free-running")
