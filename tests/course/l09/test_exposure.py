"""Lesson 9 section 6 (minitf.course.l09_inference.exposure and minitf.course.l09_inference.figures_exposure):
the stored runs against live re-runs, the error by position, the mixing shown position by
position, the schedules, and the two figures.

The re-runs are float64 on one BLAS thread, where a run is deterministic: the errors by
position (multiples of 1/200, stored to 6 digits) must equal the stored ones exactly, the
loss curve (4 digits) within 1e-4.

(Scheduled sampling's pass-2 inputs are checked position by position -- gold where the draw
said gold, else the pass-1 prediction for the previous position -- by
``tests/test_scheduled_sampling_transformer.py::test_pass_two_inputs_position_by_position``;
not repeated here.)
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course.l09_inference import exposure as l9e
from minitf.course.l01_seq2seq import schedule_for
from minitf.course.kit.predictions import predict_both_ways
from minitf.data import IGNORE_INDEX
from minitf.models import EncoderDecoder


@pytest.fixture(scope="module")
def results():
    return l9e.load_results()


# ---- the stored runs -------------------------------------------------------------------------------
def test_results_file_holds_every_variant_and_seed_with_the_modules_settings(results):
    assert set(results["runs"]) == set(l9e.VARIANTS)
    for runs in results["runs"].values():
        assert sorted(int(s) for s in runs) == list(l9e.SEEDS)
        for r in runs.values():
            assert len(r["teacher_forced"]) == len(r["free_running"]) == l9e.LENGTH + 1
            assert len(r["loss_curve"]) > 0
    assert results["settings"] == l9e._settings()
    assert results["positions"] == list(range(1, l9e.LENGTH + 2))
    assert results["openblas_num_threads"] == "1" and results["wall_seconds"] > 0


def test_position_one_is_the_same_both_ways_in_every_stored_run(results):
    """At position 1 both ways see only <bos>: the free-running token is the teacher-forced argmax."""
    for variant, runs in results["runs"].items():
        for seed, r in runs.items():
            assert r["free_running"][0] == r["teacher_forced"][0], (variant, seed)


@pytest.mark.parametrize("variant, seed", [("teacher_forcing", 0), ("ss_linear", 1)])
def test_a_live_rerun_matches_the_stored_run(results, variant, seed):
    match = l9e.compare_with_stored(l9e.run_variant(variant, seed), results)
    assert match.matches, match


@pytest.mark.parametrize("variant, seed", l9e.STORED_MODELS)
def test_stored_weights_are_what_training_gives_and_give_the_stored_numbers(results, variant, seed):
    """The notebook shows these runs from their stored weights, without training: the weights
    must be the training's, and evaluated they must give the results file's numbers."""
    stored = l9e.stored_model_run(variant, seed)
    assert stored.history is None
    assert stored.cpu_seconds == results["runs"][variant][str(seed)]["cpu_seconds"]
    match = l9e.compare_with_stored(stored, results)
    assert match.matches and set(match.differences) == {"errors"}, match
    assert l9e.weight_difference(stored.model, l9e.run_variant(variant, seed).model) <= 1e-9
    with pytest.raises(ValueError, match="stored"):
        l9e.checkpoint_path(variant, seed + 1)


def test_seed_table_pairs_each_seed_with_the_baseline(results):
    table = l9e.seed_table(results)
    values, diffs = table["teacher_forcing"]
    assert (diffs == 0).all() and len(values) == len(l9e.SEEDS)
    values, diffs = table["ss_linear"]
    base = [results["runs"]["teacher_forcing"][str(s)]["free_running_token_error"] for s in l9e.SEEDS]
    np.testing.assert_allclose(values - base, diffs)
    with pytest.raises(KeyError, match="variant: 'nope'"):
        l9e.stored_runs(results, "nope")


def test_largest_difference_reads_every_named_field_and_every_entry():
    """The comparison both lessons' live re-runs use: max |live - stored| over all the fields named."""
    from minitf.course.kit.stored import largest_difference

    stored = {"error": 0.25, "by_position": [0.0, 0.5, 1.0], "loss_curve": [2.0, 1.0]}
    live = {"error": 0.25, "by_position": [0.0, 0.5, 0.75], "loss_curve": [2.0, 1.125]}
    assert largest_difference(live, stored, ("error",)) == 0.0
    assert largest_difference(live, stored, ("error", "by_position")) == 0.25  # the last entry of the second field
    assert largest_difference(live, stored, ("loss_curve",)) == 0.125


# ---- the measurement ----------------------------------------------------------------------------------
def test_error_by_position_by_hand():
    task = l9e.exposure_task()
    model = EncoderDecoder(l9e.model_config(0, task))
    batch = task.batch(task.dataset(3, seed=1))  # labels (3, 21): 20 letters and <eos>
    labels, eos, pad = batch.labels, model.config.eos_id, model.config.pad_id
    assert (labels != IGNORE_INDEX).all() and (labels[:, -1] == eos).all()
    tf = labels.copy()
    tf[0, 4] = labels[0, 5]  # one teacher-forced error, row 0 position 5
    fr = np.concatenate([labels, np.full((3, 2), pad)], axis=1)  # greedy output: T + 2 tokens, padded
    a, b = task.tokenizer.encode("ab")
    fr[1, 10:13] = np.where(labels[1, 10:13] == a, b, a)  # row 1: three wrong letters at 11..13
    fr[2, 15] = eos  # row 2 stops after 15 letters: 16..21 are "nothing generated"
    fr[2, 16:] = pad
    e = l9e.error_by_position(model, batch, predictions=(tf, fr))
    np.testing.assert_array_equal(e.positions, np.arange(1, 22))
    np.testing.assert_array_equal(e.counts, np.full(21, 3))
    expected_tf = np.zeros(21)
    expected_tf[4] = 1 / 3
    np.testing.assert_allclose(e.teacher_forced, expected_tf)
    expected_fr = np.zeros(21)
    expected_fr[10:13] += 1 / 3
    expected_fr[15:] += 1 / 3  # row 2: its <eos> at 16 is wrong, and nothing after counts as right
    np.testing.assert_allclose(e.free_running, expected_fr)
    assert e.teacher_forced_token_error == pytest.approx(1 / 63)
    assert e.free_running_token_error == pytest.approx(9 / 63)
    assert e.free_running_exact_match == pytest.approx(1 / 3)


# ---- scheduled sampling, shown -------------------------------------------------------------------------
def test_mixing_example_reads_the_mix_off_one_row():
    task = l9e.exposure_task()
    model = EncoderDecoder(l9e.model_config(3, task)).eval()  # untrained: many predictions differ from gold
    batch = task.batch(task.dataset(4, seed=2))
    rows = l9e.mixing_example(model, batch, eps=0.5, seed=0, row=1)
    tok = task.tokenizer
    tf, _ = predict_both_ways(model, batch)  # (B, T) the pass-1 argmax: gold prefix, eval mode
    assert [r.t for r in rows] == list(range(batch.decoder_input_ids.shape[1]))
    assert rows[0].gold == rows[0].fed == "<bos>" and rows[0].coin_gold
    for r in rows[1:]:
        assert r.gold == tok.id_to_token(int(batch.decoder_input_ids[1, r.t]))
        assert r.predicted == tok.id_to_token(int(tf[1, r.t - 1])), f"position {r.t}: the prediction made at t-1"
        assert r.fed == (r.gold if r.coin_gold else r.predicted), f"position {r.t}"
        assert r.label == tok.id_to_token(int(batch.labels[1, r.t]))
    assert 0 < sum(r.coin_gold for r in rows[1:]) < len(rows) - 1, "eps = 0.5: some of each"
    assert any(r.fed != r.gold for r in rows), "the example must show a replaced input"


def test_schedule_curves_fall_from_one_to_the_final_eps():
    curves = l9e.schedule_curves(300)
    assert set(curves) == {"linear", "exponential", "inverse_sigmoid"}
    for name, eps in curves.items():
        assert eps.shape == (300,)
        assert (np.diff(eps) <= 1e-12).all(), name
        assert eps[-1] == pytest.approx(l9e.FINAL_EPS), name
        assert eps[0] > 0.95, name
        assert eps[99] == schedule_for(name, 300)(100)
    assert curves["linear"][0] == curves["exponential"][0] == 1.0


# ---- the figures --------------------------------------------------------------------------------------
