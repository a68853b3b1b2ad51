"""Homework 9, task 9.5 (scheduled sampling's mixed inputs): the public tests.

Expected values: minitf's ``own_previous_tokens`` and ``mix_decoder_inputs``
(``minitf.scheduled_sampling``), which build pass 2's inputs in minitf's transformer
scheduled sampling.  Token ids are compared exactly, position by position."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, expect_equal_ids, fail
from minitf.grading.problems import shapes
from minitf.scheduled_sampling import mix_decoder_inputs, own_previous_tokens

from .common import first_index

HOMEWORK = "hw09"
task5 = pytest.mark.hw09_task5
PAD, BOS = 0, 1
PAD_OTHER = 99  # another tokenizer's padding id (the tokens here are 3 .. V-1 < 99)


# =====================================================================================
# Task 9.5 -- problems and checks
# =====================================================================================
def mix_problem(seed: int, B=4, T=7, V=20, eps=0.5, pad_id=PAD):
    """Gold inputs <bos> y_1 .. (right-padded), pass 1's predictions (never equal to the gold token
    they stand in for, nor to the one before it: a misplaced token shows), and the draws."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(3, V, size=(B, T))
    ids = np.concatenate([np.full((B, 1), BOS), labels[:, :-1]], axis=1)
    lengths = rng.integers(3, T + 1, size=B)
    lengths[0] = T
    ids[np.arange(T)[None, :] >= lengths[:, None]] = pad_id
    predictions = (labels + rng.integers(1, 5, size=(B, T))) % (V - 3) + 3  # != labels[:, t] = ids[:, t+1]
    same = (predictions == ids) | (predictions == labels)
    predictions[same] = (predictions[same] - 3 + 7) % (V - 3) + 3
    use_gold = rng.random((B, T)) < eps
    use_gold[:, 0] = False  # the draw at position 0 says "model": position 0 must stay gold anyway
    return ids.astype(np.int64), predictions.astype(np.int64), use_gold


def minitf_mix(ids, predictions, use_gold, pad_id=PAD):
    return mix_decoder_inputs(ids, own_previous_tokens(predictions, ids), use_gold, pad_id)


def diagnose(fed, ids, predictions, use_gold) -> str | None:
    exp_fed, exp_gold = minitf_mix(ids, predictions, use_gold)
    pad = ids == PAD
    if (fed[:, 0] != ids[:, 0]).any():
        b = int(np.argmax(fed[:, 0] != ids[:, 0]))
        return (f"position 0 of example {b} is fed {fed[b, 0]}, not its start token {ids[b, 0]}: nothing is predicted "
                f"before position 0, so the start token is always kept, whatever the draw there")
    if (fed[pad] != PAD).any():
        b, t = first_index(pad & (fed != PAD))
        return (f"padding at ({b}, {t}) was replaced by the model's token {fed[b, t]}: padding stays padding "
                f"(the key-padding mask and the ignored labels rely on it)")
    unshifted = np.where(exp_gold, ids, predictions)
    if np.array_equal(fed, unshifted) and not np.array_equal(fed, exp_fed):
        b, t = first_index(~exp_gold)
        return (f"the model's tokens are misaligned by one position: position {t} of example {b} is fed "
                f"predictions[:, {t}] = {predictions[b, t]}, the model's guess of the label AT {t} (the very token "
                f"position {t} must predict: label leakage). The input at t is the prediction made at t - 1, "
                f"predictions[:, {t - 1}] = {predictions[b, t - 1]}")
    inverted = mix_decoder_inputs(ids, own_previous_tokens(predictions, ids), ~use_gold, PAD)[0]
    if np.array_equal(fed, inverted) and not np.array_equal(fed, exp_fed):
        return "gold and the model's tokens are swapped: use_gold True means the gold token is fed"
    return None


def diagnose_gold(gold, fed, ids, exp_gold, pad_id=PAD) -> str | None:
    """What a wrong ``gold`` (with the right ``fed``) was computed from."""
    if np.array_equal(gold, fed == ids):
        b, t = first_index(gold & ~exp_gold)
        return (f"gold is True at ({b}, {t}), where the draw gave the position to the model, whose token {fed[b, t]} "
                f"happens to be the gold one: gold was computed as fed == decoder_input_ids. It marks where the gold "
                f"input was chosen (the draw, position 0, padding), whatever the model predicted: a trained model is "
                f"often right, and comparing the tokens counts its right guesses as gold inputs")
    if np.array_equal(gold, exp_gold | (fed == pad_id)):
        b, t = first_index(gold & ~exp_gold)
        return (f"position ({b}, {t}) is reported as padding because the model predicted <pad> ({pad_id}) there: "
                f"padding is where the gold inputs decoder_input_ids hold pad_id, not where fed does (a model may "
                f"predict <pad> at a real position)")
    return None


def check_mix(fn, ids, predictions, use_gold, what):
    out = call(fn, ids, predictions, use_gold, PAD, names=["decoder_input_ids", "predictions", "use_gold"], returns=2)
    fed = as_array("fed", out[0], shape=ids.shape, kind="i")
    gold = as_array("gold", out[1], shape=ids.shape)
    exp_fed, exp_gold = minitf_mix(ids, predictions, use_gold)
    if not np.array_equal(fed, exp_fed):
        mistake = diagnose(fed, ids, predictions, use_gold)
        if mistake:
            fail(f"mix_inputs ({what}): {mistake}")
        b, t = first_index(fed != exp_fed)
        source = "the gold token" if exp_gold[b, t] else f"the prediction made at position {t - 1}"
        fail(f"mix_inputs ({what}): position {t} of example {b} is fed {fed[b, t]}, expected {exp_fed[b, t]} "
             f"({source})")
    if gold.dtype == bool and not np.array_equal(gold, exp_gold):
        mistake = diagnose_gold(gold, fed, ids, exp_gold)
        if mistake:
            fail(f"mix_inputs ({what}): {mistake}")
    if gold.dtype != bool or not np.array_equal(gold, exp_gold):
        b, t = first_index(gold.astype(bool) != exp_gold) if gold.dtype == bool else (0, 0)
        fail(f"mix_inputs ({what}): gold must be a bool array, True where fed holds the gold token (the draw's "
             f"True, position 0 and padding); at ({b}, {t}) received {gold[b, t]!r}, expected {exp_gold[b, t]}")
    return fed, gold


# =====================================================================================
# Task 9.5 -- the tests
# =====================================================================================
@task5
def test_mix_inputs_position_by_position(submission, homework_seed):
    """Gold where the draw said gold, else the pass-1 prediction for the previous position;
    position 0 and padding always gold."""
    fn = submission.function("mix_inputs")
    (B, T, V), = shapes(homework_seed, [(4, 7, 20)], B=(1, 5), T=(3, 9), V=(12, 30))
    ids, predictions, use_gold = mix_problem(homework_seed + 500, B=B, T=T, V=V)
    check_mix(fn, ids, predictions, use_gold, "eps = 0.5")


@task5
@pytest.mark.parametrize("eps", [0.0, 1.0])
def test_mix_inputs_all_model_or_all_gold(submission, homework_seed, eps):
    """eps = 1: teacher forcing (fed = the gold inputs); eps = 0: every position but 0 and padding
    holds the model's previous prediction.  Each also checks the other extreme on a second problem
    (returning the gold inputs unchanged must not pass a test)."""
    fn = submission.function("mix_inputs")
    for e in (eps, 1.0 - eps):
        ids, predictions, use_gold = mix_problem(homework_seed + 510 + int(e) + 2 * (e != eps), eps=e)
        fed, _ = check_mix(fn, ids, predictions, use_gold | (e == 1.0), f"eps = {e:g}")
        if e == 1.0 and not np.array_equal(fed, ids):
            fail("mix_inputs with every draw gold must return the gold inputs unchanged (teacher forcing)")


@task5
def test_mix_inputs_with_another_pad_id_and_one_row(submission, homework_seed):
    """``pad_id`` at another value than 0 (the tokens are 3 .. V-1, the padding here 99), and a batch
    of one row: padding is found by the pad_id given."""
    fn = submission.function("mix_inputs")
    (B, T, V), = shapes(homework_seed, [(3, 6, 15)], B=(1, 5), T=(3, 9), V=(12, 30))
    for k, b in enumerate((B, 1)):
        ids, predictions, use_gold = mix_problem(homework_seed + 520 + k, B=b, T=T, V=V, pad_id=PAD_OTHER)
        if b == 1:
            ids[0, -2:] = PAD_OTHER  # a row of one, with padding
        ids[-1, -1] = PAD_OTHER  # padding in every problem
        use_gold = use_gold & (ids != PAD_OTHER)  # the draw says "model" on the padding: it must stay padding anyway
        out = call(fn, ids, predictions, use_gold, PAD_OTHER, names=["decoder_input_ids", "predictions", "use_gold"],
                   returns=2)
        fed = as_array("fed", out[0], shape=ids.shape, kind="i")
        gold = as_array("gold", out[1], shape=ids.shape)
        exp_fed, exp_gold = minitf_mix(ids, predictions, use_gold, pad_id=PAD_OTHER)
        hint = f"padding is where decoder_input_ids equals the pad_id given ({PAD_OTHER} here), not 0"
        expect_equal_ids(f"fed (pad_id = {PAD_OTHER}, B = {b})", fed, exp_fed, hint=hint)
        expect_equal_ids(f"gold (pad_id = {PAD_OTHER}, B = {b})", gold.astype(np.int64), exp_gold.astype(np.int64),
                         hint=hint)


@task5
def test_mix_inputs_when_the_model_is_right_or_predicts_padding(submission, homework_seed):
    """Pass 1 guessed the gold token at some positions the draw gives to the model (fed is the same token,
    but it is the model's: gold is False there), and chose <pad> at others (fed there, not padding)."""
    fn = submission.function("mix_inputs")
    (B, T, V), = shapes(homework_seed, [(4, 7, 20)], B=(1, 5), T=(3, 9), V=(12, 30))
    ids, predictions, use_gold = mix_problem(homework_seed + 530, B=B, T=T, V=V)
    rng = np.random.default_rng(homework_seed + 531)
    # predictions[:, t - 1] is the model's token for position t: right (= ids[:, t]) or <pad> at some real t >= 1
    real = np.zeros_like(use_gold)
    real[:, 1:] = ids[:, 1:] != PAD
    draw = rng.random((B, T))
    right, pad = real & (draw < 0.3), real & (draw > 0.8)
    right[0, 1], pad[0, 1], pad[0, 2], right[0, 2] = True, False, True, False  # row 0 is not padded, T >= 3
    use_gold[right | pad] = False  # the draw says "model" there
    predictions[:, :-1][right[:, 1:]] = ids[:, 1:][right[:, 1:]]
    predictions[:, :-1][pad[:, 1:]] = PAD
    check_mix(fn, ids, predictions, use_gold, "right guesses and predicted <pad>")
