"""Homework 3, task 3.4 (the leak, measured): the public tests."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from minitf.course.kit.runs import copy_model
from minitf.data import SPECIAL_TOKENS
from minitf.grading.asserts import as_array, close, expect_close, fail
from minitf.models import EncoderDecoder
from minitf.data.tasks import get_task
from minitf.training import default_model_config

from .common import expect_inputs_unchanged

HOMEWORK = "hw03"
task4 = pytest.mark.hw03_task4
TOL = {"rtol": 1e-7, "atol": 1e-10}  # the same float64 model in both processes: only summation order differs


# =====================================================================================
# Task 3.4 -- a tiny encoder-decoder, with and without the mask, and what the leak must be
# =====================================================================================
@pytest.fixture
def leak_setup(homework_seed):
    return _leak_setup(int(homework_seed))


@functools.lru_cache(maxsize=None)
def _leak_setup(homework_seed: int) -> dict:
    """A float64 encoder-decoder (dropout 0.1, eval mode), its twin built with causal=False (same
    weights), a batch of the 'copy' task, and replacement tokens that differ from every input
    (built once per seed)."""
    task = get_task("copy", min_len=4, max_len=7, n_symbols=6)
    config = default_model_config(task, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=2,
                                  dropout=0.1, seed=3, dtype="float64")
    masked = EncoderDecoder(config).eval()
    unmasked = copy_model(masked, causal=False).eval()
    rng = np.random.default_rng(homework_seed + 80)
    batch = task.batch(task.sample(4, rng))
    dec = batch.decoder_input_ids  # (B, T)
    n_special, V = len(SPECIAL_TOKENS), config.tgt_vocab_size
    shift = rng.integers(1, V - n_special, size=dec.shape)  # never 0: every replaced token differs
    replacement = (np.maximum(dec, n_special) - n_special + shift) % (V - n_special) + n_special  # (B, T)
    return {"masked": masked, "unmasked": unmasked, "src": batch.input_ids, "dec": dec, "replacement": replacement}


def leak_of(model, src, dec, replacement, first_changed: int = 1, measured: int = 0, reduce=np.max) -> np.ndarray:
    """leak[t]: ``reduce |logits' - logits|`` at position t + ``measured`` after replacing the inputs
    from t + ``first_changed`` on (1 and 0: the task; other values: what the classic mistakes
    compute; ``measured`` = None: over every position)."""
    T = dec.shape[1]
    leak = np.zeros(T)
    with model.evaluating():
        logits, _ = model.forward(src, dec)  # (B, T, V)
        for t in range(T - 1):
            changed = dec.copy()
            changed[:, t + first_changed:] = replacement[:, t + first_changed:]
            changed_logits, _ = model.forward(src, changed)
            diff = np.abs(changed_logits - logits)  # (B, T, V)
            leak[t] = reduce(diff) if measured is None else (reduce(diff[:, t + measured]) if t + measured < T else 0)
    return leak


def call_leak(fn, model, setup) -> np.ndarray:
    src, dec, replacement = setup["src"], setup["dec"], setup["replacement"]
    sent = [("model", None), ("src_ids", src.copy()), ("decoder_input_ids", dec.copy()),
            ("replacement_ids", replacement.copy())]
    leak = fn(model, src, dec, replacement)
    expect_inputs_unchanged(fn, "future_leak", sent,
                            "copy it (decoder_input_ids.copy()) before replacing the future, or every later t "
                            "starts from a sequence already changed")
    T = dec.shape[1]
    leak = as_array("leak", leak, shape=(T,), kind="f")
    if not np.isfinite(leak).all():
        fail(f"leak holds non-finite values: {leak.tolist()}")
    return leak


def diagnose_leak(leak, model, setup, masked: bool, generic: bool = True) -> str | None:
    """Name the classic mistake behind a wrong ``leak`` (measured on ``model`` in eval mode);
    ``generic``: also say what is wrong when no classic mistake matches."""
    src, dec, replacement = setup["src"], setup["dec"], setup["replacement"]
    expected = leak_of(model, src, dec, replacement)
    if close(leak, expected, **TOL):
        return None
    T = dec.shape[1]
    if close(leak, leak_of(model, src, dec, replacement, first_changed=0), **TOL):
        return ("position t's own input was replaced too: replace positions t+1 .. T-1 only (changed[:, t+1:]). "
                "Position t may see its own input, so changing it moves the logits at t even under the mask"
                + (f" (your leak with the causal mask: {np.round(leak, 4).tolist()})" if masked else ""))
    if close(leak, leak_of(model, src, dec, replacement, measured=None), **TOL):
        return ("the leak was measured over every position, not at position t: the positions after t see the "
                "replaced inputs legitimately. leak[t] is the largest change of logits[:, t] alone")
    if close(leak, leak_of(model, src, dec, replacement, measured=1), **TOL):
        return "the leak was measured at position t+1, not t: leak[t] is the largest change of logits[:, t]"
    if close(leak, leak_of(model, src, dec, replacement, reduce=np.mean), **TOL):
        return "leak[t] is the mean change; the task asks for the largest: max over b and v of |delta logits[b, t, v]|"
    if not generic:
        return None
    if masked and np.abs(leak[:-1]).max() > 1e-9:
        t = int(np.argmax(leak))
        return (f"with the causal mask your leak[{t}] = {leak[t]:.3g}, but the logits at position {t} cannot depend "
                f"on the inputs after it; expected 0 at every position")
    if not masked and np.array_equal(leak, np.zeros(T)):
        return "your leak is 0 everywhere for a decoder without the mask: the inputs after t were never changed?"
    return None


def check_leak(fn, model, setup, masked: bool) -> np.ndarray:
    return judge_leak(call_leak(fn, model, setup), model, setup, masked)


def judge_leak(leak, model, setup, masked: bool) -> np.ndarray:
    """Name a classic mistake in ``leak``, or compare it with what it must be."""
    mistake = diagnose_leak(leak, model, setup, masked)
    if mistake:
        fail(mistake)
    expected = leak_of(model, setup["src"], setup["dec"], setup["replacement"])
    expect_close("leak" + (" (with the causal mask)" if masked else " (the same weights, causal=False)"), leak,
                 expected, **TOL, hint="leak[t] = max over b, v of |logits'[b, t, v] - logits[b, t, v]|, with the "
                                       "inputs t+1 .. T-1 replaced")
    return leak


# =====================================================================================
# Task 3.4 -- the tests
# =====================================================================================
@task4
def test_with_the_causal_mask_nothing_leaks(submission, leak_setup):
    """A zero leak under the mask, from a function that sees a leak where there is one (the same
    weights without the mask): a leak of zero everywhere proves nothing by itself."""
    future_leak = submission.function("future_leak")
    check_leak(future_leak, leak_setup["unmasked"], leak_setup, masked=False)
    leak = check_leak(future_leak, leak_setup["masked"], leak_setup, masked=True)
    if leak.max() > 1e-10:
        fail(f"with the causal mask, leak = {leak.tolist()}; it must be 0 at every position")


@task4
def test_without_the_mask_the_future_leaks_in(submission, leak_setup):
    future_leak = submission.function("future_leak")
    leak = check_leak(future_leak, leak_setup["unmasked"], leak_setup, masked=False)
    if not (leak[:-1] > 1e-6).all() or leak[-1] != 0:
        fail(f"without the mask every position but the last must see its future change; received {leak.tolist()}")


@task4
def test_measured_in_eval_mode(submission, leak_setup):
    """The model handed over in training mode (dropout 0.1): the leak is still measured with dropout off."""
    future_leak = submission.function("future_leak")
    model = leak_setup["masked"]
    model.train()
    try:
        leak = call_leak(future_leak, model, leak_setup)
    finally:
        model.eval()
    mistake = diagnose_leak(leak, model, leak_setup, masked=True, generic=False)
    if mistake:
        fail(mistake)
    if leak[:-1].max() > 1e-9:
        t = int(np.argmax(leak))
        fail(f"the model came in training mode, and your leak with the causal mask is {leak[t]:.3g} at position {t}: "
             f"dropout draws a new random mask at every forward, so the logits move even where nothing changed. "
             f"Measure with dropout off: with model.evaluating(): ...")
    judge_leak(leak, model, leak_setup, masked=True)
    twin = leak_setup["unmasked"]  # and where the future does leak in: the leak of the model with dropout off
    twin.train()
    try:
        leak = call_leak(future_leak, twin, leak_setup)
    finally:
        twin.eval()
    judge_leak(leak, twin, leak_setup, masked=False)


@task4
def test_the_leak_is_float64_for_a_float32_model_and_one_row(submission, leak_setup):
    """The leak is a float64 array whatever the model's dtype (the contract): here the unmasked twin
    in float32, on a batch of one row."""
    future_leak = submission.function("future_leak")
    model = copy_model(leak_setup["unmasked"], dtype="float32").eval()
    setup = {k: (v[:1].copy() if isinstance(v, np.ndarray) else v) for k, v in leak_setup.items()}
    leak = future_leak(model, setup["src"], setup["dec"], setup["replacement"])
    T = setup["dec"].shape[1]
    leak = as_array("leak (a float32 model)", leak, shape=(T,), kind="f")
    if leak.dtype != np.float64:
        fail(f"leak: expected a float64 array (the template's contract, whatever the model's dtype), received "
             f"{leak.dtype}: build it with np.zeros(T) (float64), not in the logits' dtype")
    judge_leak(leak, model, setup, masked=False)
