"""Tests for minitf.course.l08_teacher_forcing.gap: Lesson 8's section 5 (training vs inference) and the
learned / config / state table."""
from __future__ import annotations

import numpy as np
import pytest

from .fixtures import batch, model, small_config, task  # noqa: F401 (pytest fixtures)
from minitf.course import l08_teacher_forcing as l8
from minitf.data import IGNORE_INDEX
from minitf.models import EncoderDecoder


# ---- section 5: training vs inference -------------------------------------------------------------
def test_error_compounding_by_length(model, batch, task):
    big = task.batch(task.dataset(40, seed=5))
    c = l8.error_compounding(model, big)
    lengths = (big.labels != IGNORE_INDEX).sum(axis=1)
    np.testing.assert_array_equal(c.lengths, np.unique(lengths))
    assert c.counts.sum() == 40
    # a free-running output is exactly right iff every teacher-forced argmax is
    np.testing.assert_array_equal(c.free_running_error, c.teacher_forced_error)
    np.testing.assert_allclose(c.predicted, 1 - (1 - c.epsilon) ** c.lengths)
    np.testing.assert_allclose(c.predicted_by_length, 1 - (1 - c.epsilon_by_length) ** c.lengths)
    assert 0 <= c.epsilon <= 1 and c.teacher_forced_token_accuracy == pytest.approx(1 - c.epsilon)
    assert ((0 <= c.free_running_error) & (c.free_running_error <= 1)).all()


def test_exposure_example_picks_the_largest_difference(model, task):
    big = task.batch(task.dataset(30, seed=8))
    ex = l8.exposure_example(model, big, task.tokenizer)
    i, n = ex["index"], int((big.labels[ex["index"]] != IGNORE_INDEX).sum())
    assert ex["target"] == [task.tokenizer.id_to_token(int(t)) for t in big.labels[i, :n]]
    assert len(ex["teacher_forced"]) == len(ex["free_running"]) == len(ex["free_running_right"]) == n
    assert ex["source"] == task.tokenizer.decode(big.input_ids[i])
    diff = ex["teacher_forced_right"].count(True) - ex["free_running_right"].count(True)
    # no other example loses more tokens to free running
    tf_pred, fr_pred = l8.predict_both_ways(model, big)
    real = big.labels != IGNORE_INDEX
    fr = np.full(big.labels.shape, -1)
    k = min(fr.shape[1], fr_pred.shape[1])
    fr[:, :k] = fr_pred[:, :k]
    diffs = ((tf_pred == big.labels) & real).sum(1) - ((fr == big.labels) & real).sum(1)
    assert diff == diffs.max()


def test_free_running_positions_after_eos_are_nothing_generated(task):
    """greedy_search pads a finished row; a padded position is never a match, and the
    example shows it as nothing generated."""
    model = EncoderDecoder(small_config(task))
    b = task.batch([("abcd", "dcba")])  # labels: d c b a <eos>
    eos, pad = model.config.eos_id, model.config.pad_id
    labels = b.labels
    tf_pred = labels.copy()  # teacher-forced: all right
    fr_pred = np.array([[labels[0, 0], labels[0, 1], eos, pad, pad, pad]])  # stops after two tokens
    ex = l8.exposure_example(model, b, task.tokenizer, predictions=(tf_pred, fr_pred))
    assert ex["free_running"] == ["d", "c", "<eos>", "", ""]
    assert ex["free_running_right"] == [True, True, False, False, False]
    assert all(ex["teacher_forced_right"])
    c = l8.error_compounding(model, b, predictions=(tf_pred, fr_pred))
    assert c.free_running_token_accuracy == pytest.approx(2 / 5)  # the <eos> label is not matched by padding
    assert c.free_running_exact_match == 0.0 and c.teacher_forced_token_accuracy == 1.0


# ---- the table -------------------------------------------------------------------------------------
def test_learned_config_state_reads_the_live_objects():
    run = l8.lesson8_run(0)
    rows = l8.learned_config_state(run)
    kinds = [r.kind for r in rows]
    assert kinds == sorted(kinds, key=["LEARNED", "CONFIG", "CONFIG/STATE", "STATE"].index)
    learned = [r for r in rows if r.kind == "LEARNED" and r.item != "total"]
    counted = sum(int(r.value.split(", ")[1].split()[0].replace(",", "")) for r in learned)
    assert counted == run.model.num_parameters()
    items = {r.item: r.value for r in rows}
    key_biases = [p for name, p in run.model.parameters().items() if name.endswith(".b_k")]
    assert f"except the {sum(p.size for p in key_biases):,} of the {len(key_biases)} key biases b_k" in items["total"]
    assert "at most 0.0e+00" not in items["total"], "the key biases' gradients read before they were zeroed"
    assert items["teacher-forcing policy"].endswith("True)")
    assert "<bos>" in items["start token"]
    assert str(run.train_config.batch_size) in items["batch size"]
    assert "WarmupCosine" in items["LR schedule"]
    assert f"total = steps + 1 = {run.train_config.steps + 1}" in items["LR schedule"]  # why total is not steps
    assert f"d_model={run.model_config.d_model}" in items["ModelConfig"]
    assert {"optimizer moment m", "optimizer moment v", "optimizer step"} <= set(items)
    assert items["optimizer step"].startswith(str(run.train_config.steps))
    assert "encoder" in items["cached activations"] and "decoder" in items["cached activations"]
    assert not any(g.any() for g in run.model.gradients().values()), "the table leaves no gradients behind"
    text = l8.format_rows(rows, width=90)
    assert text.count("\n") >= len(rows) - 1 and "LEARNED" in text


# ---- the references the checks compare against are what they claim ------------------------------
def test_epsilon_by_length_is_measured_among_the_examples_of_each_length(task, model):
    big = task.batch(task.dataset(40, seed=5))
    tf, fr = l8.predict_both_ways(model, big)
    c = l8.error_compounding(model, big, predictions=(tf, fr))
    real = big.labels != IGNORE_INDEX
    right = (tf == big.labels) & real
    n = real.sum(axis=1)
    want = [1 - right[n == T].sum() / real[n == T].sum() for T in c.lengths]
    np.testing.assert_allclose(c.epsilon_by_length, want, rtol=1e-12)
    assert len(set(np.round(want, 6))) > 1  # lengths differ, so a pooled value would fail


def test_edit_distance_counts_one_dropped_token_once():
    assert l8.edit_distance("kitten", "sitting") == 3  # two substitutions and an insertion
    assert l8.edit_distance([], [1, 2]) == 2 and l8.edit_distance([1, 2], []) == 2
    target = [5, 6, 7, 8, 9, 2]
    dropped = [5, 7, 8, 9, 2]  # one token dropped: every later position is off by one
    assert sum(a != b for a, b in zip(target, dropped + [-1])) == 5 and l8.edit_distance(target, dropped) == 1
