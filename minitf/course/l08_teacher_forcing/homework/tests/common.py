"""What every task's tests of homework 8 share: the special ids, a tiny model, the training
run a student's function is plugged into, and comparisons of loss curves.

The test problems (labels, logits, batches) are drawn from the run's ``homework_seed``
(the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand; the tiny models' weights have fixed seeds, so what the tests rely on about them
(a model that has learned something, an exposure-bias gap) holds on every run."""
from __future__ import annotations

import math

import numpy as np

from minitf.data import IGNORE_INDEX, CharTokenizer
from minitf.decoding import greedy_search
from minitf.grading.asserts import as_float, fail
from minitf.course.l08_teacher_forcing.homework import runs
from minitf.models import EncoderDecoder
from minitf.data.tasks import get_task
from minitf.training import default_model_config

START, PAD, EOS = CharTokenizer.bos_id, CharTokenizer.pad_id, CharTokenizer.eos_id  # the tasks' tokenizer's


def greedy_reference(model, src_ids, max_len):
    """What free_running_decode must return: minitf's greedy search, re-running the decoder on
    the whole prefix as the task asks (the pad id after a row's <eos>)."""
    return greedy_search(model, src_ids, max_new_tokens=max_len, start_id=START, eos_id=EOS, use_cache=False).sequences


# ---- a tiny model and a few dozen training steps ----------------------------------------------------
def tiny_task(name: str = "copy"):
    return get_task(name, min_len=3, max_len=6, n_symbols=6)


def tiny_model(task, *, d_model=32, n_encoder_layers=1, n_decoder_layers=1, seed=0, dtype="float32", **kw):
    cfg = default_model_config(task, d_model=d_model, n_heads=2, d_ff=2 * d_model, n_encoder_layers=n_encoder_layers,
                               n_decoder_layers=n_decoder_layers, seed=seed, dtype=dtype, **kw)
    return EncoderDecoder(cfg)


TRAIN_STEPS, TRAIN_LR, TRAIN_BATCH = 30, 0.1, 32  # plain SGD with momentum: a gradient's scale shows


def training_run(seed: int) -> tuple:
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


_REFERENCE_CURVES: dict[int, list[float]] = {}


def reference_losses(seed: int) -> list[float]:
    """The loss curve with minitf's own shift_right, causal_mask and cross_entropy (once per seed)."""
    if seed not in _REFERENCE_CURVES:
        args, kwargs = training_run(seed)
        _REFERENCE_CURVES[seed] = runs.train_losses(*args, **kwargs)
    return _REFERENCE_CURVES[seed]


def student_losses(submission, seed: int, **plugged) -> list[float]:
    """The same run in the student's process, with the student's functions ``plugged`` in
    (``shift=Student("shift_right")``)."""
    args, kwargs = training_run(seed)
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
