"""Tests for minitf.course.l08_teacher_forcing: Lesson 8's set-up, sections 1-2 and the reference run
(sections 3-4: tests/course/l08/test_loss.py; section 5 and the table: tests/course/l08/test_gap.py)."""
from __future__ import annotations

import numpy as np
import pytest

from .fixtures import batch, model, model64, task  # noqa: F401 (pytest fixtures)
from minitf.course import l08_teacher_forcing as l8
from minitf.course.kit.runs import copy_model
from minitf.data import IGNORE_INDEX, shift_right
from minitf.models import EncoderDecoder


# ---- the lesson's set-up ----------------------------------------------------------------------
def test_lesson8_setup_is_small_and_untied():
    task = l8.lesson8_task()
    mc = l8.lesson8_model_config(task, seed=5)
    assert (task.name, task.min_len, task.max_len) == ("reverse", 2, 12)
    assert mc.seed == 5 and not mc.share_embeddings and not mc.tie_output
    assert mc.n_decoder_layers >= 2, "several decoder blocks, so that several shares can be seen"
    assert mc.max_len >= task.max_source_len + task.max_target_len  # room for a decoder-only model
    tc = l8.lesson8_train_config(seed=2, steps=10)
    assert (tc.seed, tc.steps, tc.progress) == (2, 10, False)
    b = l8.lesson8_batch(seed=0, size=5)
    assert b.batch_size == 5
    np.testing.assert_array_equal(b.input_ids, l8.lesson8_batch(seed=0, size=5).input_ids)


def test_to_float64_copies_the_weights(model, batch):
    twin = l8.to_float64(model)
    assert twin.dtype == np.float64 and twin.config.dtype == "float64"
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(twin.parameters()[name], p.astype(np.float64))
    a, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    b, _ = twin.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


# ---- section 1 -------------------------------------------------------------------------------------
def test_parallel_equals_sequential(model, batch):
    check = l8.parallel_vs_sequential(model, batch, repeats=1)
    B, T = batch.labels.shape
    assert check.parallel.shape == check.sequential.shape == (B, T, model.config.tgt_vocab_size)
    assert check.n_positions == T
    np.testing.assert_allclose(check.parallel, check.sequential, rtol=1e-5, atol=1e-5)
    assert check.max_abs_diff == float(np.max(np.abs(check.parallel - check.sequential)))
    assert check.parallel_seconds > 0 and check.sequential_seconds > 0


def test_sequential_logits_only_see_the_prefix(model64, batch):
    """Position t of the sequential computation never receives inputs after t, so the
    parallel pass agrees with it only because of the causal mask."""
    seq = l8.sequential_logits(model64, batch.input_ids, batch.decoder_input_ids)
    par, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_allclose(par, seq, rtol=1e-10, atol=1e-10)
    leaky, _ = copy_model(model64, causal=False).forward(batch.input_ids, batch.decoder_input_ids)
    assert np.abs(leaky - seq)[:, :-1].max() > 1e-3  # earlier positions now see later inputs


def test_parallel_vs_sequential_checks_arguments(model, batch):
    with pytest.raises(TypeError, match="model"):
        l8.parallel_vs_sequential("model", batch)
    with pytest.raises(TypeError, match="batch"):
        l8.parallel_vs_sequential(model, (batch.input_ids, batch.labels))
    with pytest.raises(ValueError, match="repeats"):
        l8.parallel_vs_sequential(model, batch, repeats=0)


# ---- section 2: the leaks ------------------------------------------------------------------------
def test_a_non_causal_decoder_lets_position_t_see_later_inputs(model64, batch):
    changed = batch.decoder_input_ids.copy()
    changed[:, -1] = np.where(changed[:, -1] == 4, 5, 4)  # a different token at the last position
    before, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
    after, _ = model64.forward(batch.input_ids, changed)
    np.testing.assert_array_equal(before[:, :-1], after[:, :-1])  # masked: earlier positions unaffected
    unmasked = copy_model(model64, causal=False)  # the same weights, no causal mask
    before, _ = unmasked.forward(batch.input_ids, batch.decoder_input_ids)
    after, _ = unmasked.forward(batch.input_ids, changed)
    assert np.abs(before[:, 0] - after[:, 0]).max() > 1e-6  # position 0 now reads position T-1


def test_the_unmasked_copy_leaves_the_model_as_it_was(model, batch):
    """The leak is a parameter of the model's config, not a patch: the original keeps its
    mask, its methods and its weights."""
    ref, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    unmasked = copy_model(model, causal=False)
    assert unmasked.config.causal is False and model.config.causal is True
    leaky, _ = unmasked.forward(batch.input_ids, batch.decoder_input_ids)
    assert np.abs(leaky - ref).max() > 1e-6
    assert not any("forward" in vars(b) for b in model.decoder_layers + unmasked.decoder_layers)
    assert "forward" not in vars(model.encoder_layers[0])
    again, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_array_equal(ref, again)
    assert list(model.parameters()) == list(EncoderDecoder(model.config).parameters())  # no stray modules
    for name, p in unmasked.parameters().items():  # same weights, separate arrays
        np.testing.assert_array_equal(p, model.parameters()[name])
        assert not np.shares_memory(p, model.parameters()[name])


def test_labels_as_inputs_feeds_y_t(batch):
    leaky = l8.labels_as_inputs(batch, pad_id=0)
    real = batch.labels != IGNORE_INDEX
    np.testing.assert_array_equal(leaky.decoder_input_ids[real], batch.labels[real])
    assert (leaky.decoder_input_ids[~real] == 0).all()
    np.testing.assert_array_equal(leaky.labels, batch.labels)
    np.testing.assert_array_equal(leaky.input_ids, batch.input_ids)
    # the honest batch is the same labels shifted right
    np.testing.assert_array_equal(batch.decoder_input_ids, shift_right(batch.labels, 1, 0))


def test_labels_as_inputs_task_wraps_a_task(task):
    wrapped = l8.LabelsAsInputs(task)
    assert wrapped.tokenizer is task.tokenizer
    assert wrapped.dataset(3, seed=1) == task.dataset(3, seed=1)
    b = next(wrapped.batches(4, np.random.default_rng(0)))
    np.testing.assert_array_equal(b.decoder_input_ids[b.target_mask], b.labels[b.target_mask])
    with pytest.raises(TypeError, match="task"):
        l8.LabelsAsInputs("reverse")


def test_train_variant_rejects_unknown_variants(task):
    with pytest.raises(ValueError, match="variant.*'no_shift'"):
        l8.train_variant("no_shift", task)


@pytest.fixture(scope="module")
def variant_runs(task):
    """The three variants, small enough to train in a couple of seconds each."""
    mc = l8.lesson8_model_config(task, seed=0, d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                 n_decoder_layers=1)
    tc = l8.lesson8_train_config(seed=0, steps=300, eval_every=0, eval_size=64, lr=5e-3)
    return {v: l8.train_variant(v, task, mc, tc) for v in l8.VARIANTS}


@pytest.mark.parametrize("leak", ["no_causal_mask", "labels_as_inputs"])
def test_leaky_training_loss_collapses_while_free_running_is_garbage(variant_runs, leak):
    honest, leaky = variant_runs["teacher_forced"], variant_runs[leak]
    honest_loss = float(np.mean(honest.history.loss[-10:]))
    leaky_loss = float(np.mean(leaky.history.loss[-10:]))
    assert leaky_loss < 0.05, f"{leak}: the training loss should collapse toward zero, got {leaky_loss:.3f}"
    assert leaky_loss < honest_loss / 5
    assert leaky.history.evals[-1]["free_running_exact_match"] == 0.0
    assert honest.history.evals[-1]["free_running_exact_match"] > 0.3
    assert [s[0] for s in leaky.samples] == [s[0] for s in honest.samples]
    assert all(out != tgt for _, tgt, out in leaky.samples)


def test_train_variant_builds_the_leak_into_the_config(variant_runs):
    run = variant_runs["no_causal_mask"]
    assert run.variant == "no_causal_mask"
    assert run.model.config.causal is False  # a parameter of the model, not a patch
    assert run.optimizer.step_count == 300
    assert all(r.model.config.causal for v, r in variant_runs.items() if v != "no_causal_mask")


# ---- section 5: the reference run, evaluated both ways ---------------------------------------------
def test_lesson8_run_is_cached_and_measures_both_sides():
    run = l8.lesson8_run(0)
    assert l8.lesson8_run(0) is run
    steps = [e["step"] for e in run.history.evals]
    assert steps == list(range(run.train_config.eval_every, run.train_config.steps + 1,
                               run.train_config.eval_every))
    for e in run.history.evals:
        assert {"teacher_forced_token_accuracy", "free_running_token_accuracy", "free_running_exact_match"} <= set(e)
    assert run.midpoint_step == run.train_config.steps // 2
    assert run.eval_batch.batch_size == int(run.final.counts.sum()) == 1000
    # it learned, and the gap is there while it learns
    assert run.final.free_running_exact_match > 0.5
    assert run.final.epsilon < run.midpoint.epsilon
    gaps = [e["teacher_forced_token_accuracy"] - e["free_running_token_accuracy"] for e in run.history.evals]
    assert max(gaps) > 0.05
    assert run.optimizer.step_count == run.train_config.steps
    with pytest.raises(TypeError, match="seed"):
        l8.lesson8_run("0")


def test_lesson8_run_is_one_run_however_the_seed_is_spelt():
    """The notebook calls lesson8_run(seed=0), the figures lesson8_run(0): one training."""
    run = l8.lesson8_run(seed=0)
    assert l8.lesson8_run() is run and l8.lesson8_run(0) is run and l8.lesson8_run(np.int64(0)) is run


# ---- the references the checks compare against are what they claim ------------------------------
def test_sequential_logits_never_see_a_later_input_even_without_the_mask(task, model):
    """Unmasked, the parallel pass would let position t see inputs after t; the sequential
    reference runs each prefix alone, so changing the last input changes only the last column."""
    b = task.batch(task.dataset(4, seed=11))
    changed = b.decoder_input_ids.copy()
    changed[:, -1] = np.where(changed[:, -1] == 4, 5, 4)
    unmasked = copy_model(model, causal=False)
    seq_a = l8.sequential_logits(unmasked, b.input_ids, b.decoder_input_ids)
    seq_b = l8.sequential_logits(unmasked, b.input_ids, changed)
    par_a, _ = unmasked.forward(b.input_ids, b.decoder_input_ids)
    par_b, _ = unmasked.forward(b.input_ids, changed)
    assert not np.allclose(par_a[:, :-1], par_b[:, :-1])  # the leak is there in the parallel pass ...
    np.testing.assert_array_equal(seq_a[:, :-1], seq_b[:, :-1])  # ... and not in the sequential one
