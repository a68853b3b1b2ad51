"""Homework 8, task 8.5 (free-running decoding): the public tests."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import Batch
from minitf.decoding import greedy_search
from minitf.grading.asserts import (as_array, as_float, close, expect_close, expect_equal_ids, fail, returned_arg,
                                    same_array)
from minitf.grading.wire import Student
from minitf.optim import Adam
from minitf.models import EncoderDecoder
from minitf.training import evaluate, train_step

from .common import EOS, START, greedy_reference, tiny_model, tiny_task

HOMEWORK = "hw08"
task5 = pytest.mark.hw08_task5


# =====================================================================================
# Task 8.5 -- free-running decoding and exposure bias
# =====================================================================================
@functools.lru_cache(maxsize=None)
def _trained_reverse_model():
    """A tiny model trained part-way on 'reverse' (fixed seeds: the same model on every run)."""
    task = tiny_task("reverse")
    model = tiny_model(task, seed=0)
    opt = Adam(model.parameters(), lr=1e-2)
    batches = task.batches(32, np.random.default_rng(0))
    for _ in range(150):
        train_step(model, next(batches), opt, lr=1e-2, clip_norm=1.0)
    return model.eval()


@functools.lru_cache(maxsize=None)
def _reverse_model(homework_seed: int) -> dict:
    task = tiny_task("reverse")
    model = _trained_reverse_model()
    batch = task.batch(task.dataset(48, seed=homework_seed + 10_000))
    T = batch.labels.shape[1]
    metrics = evaluate(model, batch, max_len=T)  # both accuracies, free-running as the task defines it
    return {"model": model, "batch": batch, "metrics": metrics}


@pytest.fixture
def reverse_model(homework_seed):
    """A tiny model trained part-way on 'reverse': good teacher-forced, worse free-running, and a
    batch drawn from the test's seed."""
    out = _reverse_model(int(homework_seed))
    gap = out["metrics"]["teacher_forced_token_accuracy"] - out["metrics"]["free_running_token_accuracy"]
    if not gap > 0.02:  # the tests below need a model whose two numbers differ
        pytest.fail(f"the tests' own model shows no exposure-bias gap ({gap:.3f}); this is a fault of the tests, "
                    "not of your code", pytrace=False)
    return out


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
    if not same_array(returned_arg(fn, 1), src_before):
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
                              "the pad id after a row's <eos>")


@task5
def test_free_running_decode_feeds_its_own_outputs(submission, reverse_model):
    submission.function("free_running_decode")
    model, batch = reverse_model["model"], reverse_model["batch"]
    src = batch.input_ids[:16].copy()
    max_len = batch.labels.shape[1]
    # the student's decoder runs in the student's process, which records what it feeds the model
    out = submission.run("decode_and_record", model, src, START, EOS, max_len, Student("free_running_decode"))
    generated, inputs = out
    generated = check_generated(generated, src, max_len)
    fed = [p for p in inputs if isinstance(p, np.ndarray) and p.ndim == 2 and p.shape[0] == src.shape[0]]
    if not fed or max(p.shape[1] for p in fed) < generated.shape[1]:
        fail(f"free_running_decode generated {generated.shape[1]} tokens per row but fed the model's decoder at most "
             f"{max((p.shape[1] for p in fed), default=0)} positions: every generated token must come from the "
             f"model, run on the prefix generated so far")
    params = set(submission.parameters("free_running_decode"))
    if params & LABEL_LIKE:
        fail(f"free_running_decode takes {sorted(params & LABEL_LIKE)}: generation has no target to read; "
             f"keep the signature (model, src_ids, start_id, eos_id, max_len)")
    for prefix in fed:
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
    # and what it returns is what it generated (feeding the right prefixes and returning other tokens is no decoder)
    expect_equal_ids("generated", generated, greedy_reference(model, src, max_len),
                     hint="the tokens generated, the pad id after a row's <eos>")


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


@functools.lru_cache(maxsize=None)
def _other_ids_model(pad_id: int) -> EncoderDecoder:
    """The trained model with another padding id in its configuration (the same weights)."""
    model = _trained_reverse_model()
    other = EncoderDecoder(ModelConfig.from_dict({**model.config.to_dict(), "pad_id": pad_id}))
    for name, p in other.parameters().items():
        p[...] = model.parameters()[name]
    return other.eval()


def other_special_ids(model, src, start_id: int, max_len: int) -> int:
    """An end token other than <eos> that some rows of ``src`` produce early and some never: a
    token of the model's own greedy output (decoded without stopping) from ``start_id``."""
    free = greedy_search(model, src, max_new_tokens=max_len, start_id=start_id, eos_id=None,
                         use_cache=False).sequences  # (B, max_len)
    for token in np.unique(free[:, :-1]):
        early = (free[:, :-1] == token).any(axis=1)
        if token not in (START, EOS, start_id, model.config.pad_id) and early.any() and not early.all():
            return int(token)
    raise RuntimeError("the tests' own model offers no end token other than <eos>: a fault of the tests")


@task5
def test_other_start_end_and_padding_ids_and_a_batch_of_one(submission, reverse_model):
    """Every argument at another value: a start token other than <bos>, an end token other than
    <eos>, a model whose padding id is not 0 -- and a batch of one row."""
    free_running_decode = submission.function("free_running_decode")
    batch = reverse_model["batch"]
    src = batch.input_ids[16:28].copy()
    for pad_id, start_id in ((5, 4), (3, 0)):
        model = _other_ids_model(pad_id)
        max_len = batch.labels.shape[1]
        eos_id = other_special_ids(model, src, start_id, max_len)
        for rows in (src, src[:1]):
            out = free_running_decode(model, rows.copy(), start_id, eos_id, max_len)
            out = check_generated(out, rows, max_len)
            expected = greedy_search(model, rows, max_new_tokens=max_len, start_id=start_id, eos_id=eos_id,
                                     use_cache=False).sequences
            expect_equal_ids(f"generated (start_id={start_id}, eos_id={eos_id}, the model's pad_id={pad_id}, "
                             f"B={rows.shape[0]})", out, expected,
                             hint="start from the start_id given, stop a row at the eos_id given, and fill its later "
                                  "places with model.config.pad_id (not with constants)")


def expected_exposure(model, batch, start_id: int, eos_id: int) -> dict:
    """The three numbers of exposure_bias, from minitf: the teacher-forced argmax on the batch's own
    inputs, greedy generation from ``start_id`` stopped at ``eos_id`` (max_len = T)."""
    labels = batch.labels
    real = labels != -100
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    tf = float(((logits.argmax(-1) == labels) & real).sum() / real.sum())
    generated = greedy_search(model, batch.input_ids, max_new_tokens=labels.shape[1], start_id=start_id,
                              eos_id=eos_id, use_cache=False).sequences
    pred = np.full(labels.shape, -1)
    pred[:, :generated.shape[1]] = generated
    fr = float(((pred == labels) & real).sum() / real.sum())
    return {"teacher_forced_accuracy": tf, "free_running_accuracy": fr, "gap": tf - fr}


@task5
def test_exposure_bias_with_other_start_and_end_ids(submission, reverse_model):
    """``start_id`` and ``eos_id`` at other values than <bos> and <eos> (the free-running side starts
    and stops where it is told), on the trained model and on a batch of one row."""
    exposure_bias = submission.function("exposure_bias")
    model, batch = reverse_model["model"], reverse_model["batch"]
    start_id = 4
    eos_id = other_special_ids(model, batch.input_ids[:12], start_id, batch.labels.shape[1])
    for rows in (slice(0, 12), slice(12, 13)):
        given = Batch(batch.input_ids[rows].copy(), batch.decoder_input_ids[rows].copy(), batch.labels[rows].copy())
        out = exposure_bias(model, given, start_id, eos_id)
        if not isinstance(out, dict):
            fail(f"exposure_bias: expected a dict, received {type(out).__name__}")
        want = expected_exposure(model, given, start_id, eos_id)
        for key, value in want.items():
            expect_close(f"{key} (start_id {start_id}, eos_id {eos_id}, B = {given.labels.shape[0]})",
                         as_float(key, out.get(key)), value, rtol=0, atol=1e-9,
                         hint="generate from the start_id given and stop at the eos_id given (pass them on to your "
                              "free_running_decode), not the tokenizer's")
