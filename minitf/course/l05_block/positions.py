"""Lesson 5, section 5 (*positions*): what attention sees without them, and two kinds of them trained.

:func:`encode_without_positions` and :func:`permutation_check` show that an encoder without a
position term shuffles its outputs with its inputs; :func:`sinusoid_offsets`, that a sinusoidal
encoding's dot products depend on the distance only; :func:`position_runs` trains sinusoidal and
learned positions on short strings, :func:`accuracy_by_position` tests them on longer ones, and
:func:`learned_rows_change` and :func:`weight_decay_shrink` say what happened to the learned
rows training never read.  Re-exported by :mod:`minitf.course.l05_block.experiments`, the
lesson's index of its measurements.

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...data import IGNORE_INDEX
from ...data.tasks import Task, get_task
from ...layers.positional import sinusoidal_table
from ...models import EncoderDecoder
from ..kit.runs import Trained, check_model, once_per_process, train_fresh
from .configs import lesson5_model_config, lesson5_task, lesson5_train_config

__all__ = ["encode_without_positions", "PermutationCheck", "permutation_check", "sinusoid_offsets",
           "TRAIN_MAX_LEN", "TEST_MAX_LEN", "POSITION_STEPS", "position_task", "position_runs", "PositionAccuracy",
           "accuracy_by_position", "weight_decay_shrink", "learned_rows_change"]


def encode_without_positions(model: EncoderDecoder, src_ids: np.ndarray) -> np.ndarray:
    """H_enc (B, S, D) of ``model``'s encoder with the position term left out: its own
    embedding (scaled by sqrt(D)), blocks (source padding mask) and final norm, in eval mode."""
    check_model(model)
    with model.evaluating():
        x, _ = model.src_embed.forward(src_ids)  # (B, S, D)
        if model.config.scale_embeddings:
            x = x * math.sqrt(model.config.d_model)
        mask = model.source_mask(src_ids)  # (B, 1, 1, S)
        for layer in model.encoder_layers:
            x, _ = layer.forward(x, mask)
        H_enc, _ = model.encoder_norm.forward(x)
    return H_enc


class PermutationCheck(NamedTuple):
    """The encoder's output for a source and for the same source shuffled (:func:`permutation_check`)."""

    source: str
    permuted: str
    order: np.ndarray  # (S,) permuted[i] = source[order[i]]
    without_positions: float  # max |H(shuffled) - H(source)[order]|, no position term
    with_positions: float  # the same with the model's sinusoidal positions
    scale: float  # max |H|, for scale


def permutation_check(seed: int = 0, length: int = 8) -> PermutationCheck:
    """An untrained lesson model (weights from ``seed``); one random source of ``length``
    letters (no padding) and a random shuffle of it.  Without positions each output row
    is a function of its token and of the *set* of tokens, so shuffling the input
    shuffles the output the same way and changes nothing else."""
    task = lesson5_task()
    model = EncoderDecoder(lesson5_model_config(task, seed))
    rng = np.random.default_rng(seed)
    letters = task.tokenizer.alphabet
    source = "".join(rng.choice(list(letters), size=length))
    order = rng.permutation(length)
    permuted = "".join(source[i] for i in order)
    ids = np.array([task.tokenizer.encode(source)])  # (1, S)
    ids_perm = np.array([task.tokenizer.encode(permuted)])  # (1, S)
    H = encode_without_positions(model, ids)[0]  # (S, D)
    H_perm = encode_without_positions(model, ids_perm)[0]
    with model.evaluating():
        P = model.encode(ids)[0][0]  # (S, D) with positions
        P_perm = model.encode(ids_perm)[0][0]
    return PermutationCheck(source, permuted, order, float(np.abs(H_perm - H[order]).max()),
                            float(np.abs(P_perm - P[order]).max()), float(np.abs(H).max()))


def sinusoid_offsets(d_model: int = 32, max_len: int = 64, offsets=(1, 2, 5, 20)) -> dict[int, tuple[float, float]]:
    """offset k -> (P[t] . P[t+k] for t = 0, the largest deviation from it over every t):
    the dot product of two sinusoidal encodings depends only on their distance, since
    sum_i sin(a_i t) sin(a_i (t+k)) + cos(a_i t) cos(a_i (t+k)) = sum_i cos(a_i k)."""
    P = sinusoidal_table(max_len, d_model)  # (max_len, D)
    out = {}
    for k in offsets:
        dots = np.einsum("td,td->t", P[:-k], P[k:])  # (max_len - k,)
        out[int(k)] = (float(dots[0]), float(np.abs(dots - dots[0]).max()))
    return out


TRAIN_MAX_LEN = 8  # the position runs train on strings of 1 .. 8 letters
TEST_MAX_LEN = 16  # and are tested on strings of 1 .. 16


def position_task(max_len: int = TRAIN_MAX_LEN) -> Task:
    """``copy`` of 1 .. ``max_len`` letters (12 symbols): target position t reads source position t."""
    return get_task("copy", min_len=1, max_len=max_len)


POSITION_STEPS = 300  # training steps of each position run


@once_per_process
def position_runs(seed: int = 0) -> dict[str, Trained]:
    """``copy`` on strings of 1 .. :data:`TRAIN_MAX_LEN` letters, one encoder and one decoder
    block, trained twice, ``"sinusoidal"`` and ``"learned"`` positions -> run.  Both models
    have rows for 24 positions (``max_len``), enough for the test lengths: the learned one's
    rows past the training lengths are never read in training."""
    task = position_task()
    return {kind: train_fresh(task, lesson5_model_config(task, seed, n_encoder_layers=1, n_decoder_layers=1,
                                                         positional=kind, max_len=24),
                              lesson5_train_config(seed, steps=POSITION_STEPS, batch_size=32))
            for kind in ("sinusoidal", "learned")}


class PositionAccuracy(NamedTuple):
    """Teacher-forced accuracy on the letters, by target position (:func:`accuracy_by_position`)."""

    accuracy: np.ndarray  # (T - 1,) share of the letters at target position t predicted right
    count: np.ndarray  # (T - 1,) letters at position t
    trained_positions: int  # TRAIN_MAX_LEN: training put letters at positions 0 .. TRAIN_MAX_LEN - 1 only
    seen: float  # accuracy over every letter at positions 0 .. trained_positions - 1
    beyond: float  # accuracy over every letter at the positions after them
    eos_beyond: float  # share of those letters where the model predicts <eos> instead: "the string has ended"
    chance: float  # 1 / (number of letters): guessing a letter


def accuracy_by_position(model: EncoderDecoder, n: int = 400, seed: int = 0) -> PositionAccuracy:
    """``model`` (trained on :func:`position_task`) on ``n`` copy pairs of 1 ..
    :data:`TEST_MAX_LEN` letters (drawn with ``seed + 40_000``), teacher-forced, eval mode.
    Only the letters are scored: the ``<eos>`` that ends each target is left out, so every
    position asks the same question, "which letter is at source position t?"."""
    check_model(model)
    test = position_task(TEST_MAX_LEN)
    batch = test.batch(test.dataset(n, seed=seed + 40_000))
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    letter = (batch.labels != IGNORE_INDEX) & (batch.labels != test.tokenizer.eos_id)  # (B, T)
    letter, labels, pred = letter[:, :-1], batch.labels[:, :-1], logits[:, :-1].argmax(-1)  # the last is <eos> only
    right = (pred == labels) & letter
    count = letter.sum(0)
    past = letter.copy()
    past[:, :TRAIN_MAX_LEN] = False  # letters at positions training never filled with a letter
    trained = TRAIN_MAX_LEN  # from position TRAIN_MAX_LEN on, training had <eos> at most, never a letter
    return PositionAccuracy(right.sum(0) / np.maximum(count, 1), count, trained,
                            float(right[:, :trained].sum() / letter[:, :trained].sum()),
                            float(right[:, trained:].sum() / letter[:, trained:].sum()),
                            float(np.mean(pred[past] == test.tokenizer.eos_id)), 1.0 / test.n_symbols)


def weight_decay_shrink(run: Trained) -> float:
    """How much AdamW's decoupled weight decay alone shrinks a weight over ``run``:
    ``1 - prod_t (1 - lr_t * weight_decay)``, with the learning rate of every step.  A
    weight whose gradient was zero at every step moved by exactly this fraction."""
    lrs = np.asarray(run.history.lr)
    return float(1.0 - np.prod(1.0 - lrs * run.optimizer.weight_decay))


def learned_rows_change(run: Trained) -> dict[str, tuple[np.ndarray, int]]:
    """For a run with learned positions: ``side -> (change, used)``, ``change`` (max_len,) the
    relative change of each row of its ``W_pos`` from the initial value,
    ``|W_pos[t] - W_pos0[t]| / |W_pos0[t]|`` (the initial table rebuilt from the config's
    seed), ``used`` the number of rows training read: :data:`TRAIN_MAX_LEN` source positions,
    one more on the target side (the ``<eos>`` after the longest string)."""
    model = run.model
    check_model(model)
    if model.config.positional != "learned":
        raise ValueError(f"run: expected a model with learned positions, got {model.config.positional!r}")
    initial = EncoderDecoder(model.config)
    out = {}
    for side, attr, used in (("source", "src_pos", TRAIN_MAX_LEN), ("target", "tgt_pos", TRAIN_MAX_LEN + 1)):
        W, W0 = getattr(model, attr).params["W_pos"], getattr(initial, attr).params["W_pos"]
        out[side] = (np.linalg.norm(W - W0, axis=1) / np.linalg.norm(W0, axis=1), used)
    return out
