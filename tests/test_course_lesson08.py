"""Tests for minitf.diagnostics: each measurement computes what it claims."""
from __future__ import annotations

import numpy as np
import pytest

from minitf import diagnostics as dg
from minitf.data import IGNORE_INDEX, Batch, shift_right
from minitf.loss import cross_entropy
from minitf.models import EncoderDecoder
from minitf.tasks import get_task
from minitf.training import forward_loss


# ---- small, fast set-ups ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def task():
    return get_task("reverse", min_len=2, max_len=10, n_symbols=8)


def small_config(task, **overrides):
    base = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=2, n_decoder_layers=3, seed=3)
    base.update(overrides)
    return dg.lesson8_model_config(task, **base)


@pytest.fixture
def model(task):
    return EncoderDecoder(small_config(task))


@pytest.fixture
def model64(task):
    return EncoderDecoder(small_config(task, dtype="float64"))


@pytest.fixture
def batch(task):
    return task.batch(task.dataset(6, seed=11))


# ---- the lesson's set-up ----------------------------------------------------------------------
def test_lesson8_setup_is_small_and_untied():
    task = dg.lesson8_task()
    mc = dg.lesson8_model_config(task, seed=5)
    assert (task.name, task.min_len, task.max_len) == ("reverse", 2, 12)
    assert mc.seed == 5 and not mc.share_embeddings and not mc.tie_output
    assert mc.n_decoder_layers >= 2, "several decoder blocks, so that several shares can be seen"
    assert mc.max_len >= task.max_source_len + task.max_target_len  # room for a decoder-only model
    tc = dg.lesson8_train_config(seed=2, steps=10)
    assert (tc.seed, tc.steps, tc.progress) == (2, 10, False)
    b = dg.lesson8_batch(seed=0, size=5)
    assert b.batch_size == 5
    np.testing.assert_array_equal(b.input_ids, dg.lesson8_batch(seed=0, size=5).input_ids)


def test_to_float64_copies_the_weights(model, batch):
    twin = dg.to_float64(model)
    assert twin.dtype == np.float64 and twin.config.dtype == "float64"
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(twin.parameters()[name], p.astype(np.float64))
    a, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    b, _ = twin.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


# ---- section 1 -------------------------------------------------------------------------------------
def test_parallel_equals_sequential(model, batch):
    check = dg.parallel_vs_sequential(model, batch, repeats=1)
    B, T = batch.labels.shape
    assert check.parallel.shape == check.sequential.shape == (B, T, model.config.tgt_vocab_size)
    assert check.n_positions == T
    np.testing.assert_allclose(check.parallel, check.sequential, rtol=1e-5, atol=1e-5)
    assert check.max_abs_diff == float(np.max(np.abs(check.parallel - check.sequential)))
    assert check.parallel_seconds > 0 and check.sequential_seconds > 0


def test_sequential_logits_only_see_the_prefix(model64, batch):
    """Position t of the sequential computation never receives inputs after t, so the
    parallel pass agrees with it only because of the causal mask."""
    seq = dg.sequential_logits(model64, batch.input_ids, batch.decoder_input_ids)
    par, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_allclose(par, seq, rtol=1e-10, atol=1e-10)
    with dg.without_causal_mask(model64):
        leaky, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
    assert np.abs(leaky - seq)[:, :-1].max() > 1e-3  # earlier positions now see later inputs


def test_parallel_vs_sequential_checks_arguments(model, batch):
    with pytest.raises(TypeError, match="model"):
        dg.parallel_vs_sequential("model", batch)
    with pytest.raises(TypeError, match="batch"):
        dg.parallel_vs_sequential(model, (batch.input_ids, batch.labels))
    with pytest.raises(ValueError, match="repeats"):
        dg.parallel_vs_sequential(model, batch, repeats=0)


# ---- section 2: the leaks ------------------------------------------------------------------------
def test_without_causal_mask_lets_position_t_see_later_inputs(model64, batch):
    changed = batch.decoder_input_ids.copy()
    changed[:, -1] = np.where(changed[:, -1] == 4, 5, 4)  # a different token at the last position
    before, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
    after, _ = model64.forward(batch.input_ids, changed)
    np.testing.assert_array_equal(before[:, :-1], after[:, :-1])  # masked: earlier positions unaffected
    with dg.without_causal_mask(model64):
        before, _ = model64.forward(batch.input_ids, batch.decoder_input_ids)
        after, _ = model64.forward(batch.input_ids, changed)
    assert np.abs(before[:, 0] - after[:, 0]).max() > 1e-6  # position 0 now reads position T-1


def test_without_causal_mask_restores_the_model(model, batch):
    ref, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    with pytest.raises(RuntimeError, match="boom"):
        with dg.without_causal_mask(model):
            assert all("forward" in vars(b) for b in model.decoder_layers)
            with pytest.raises(RuntimeError, match="nest"):
                with dg.without_causal_mask(model):
                    pass
            raise RuntimeError("boom")
    assert not any("forward" in vars(b) for b in model.decoder_layers)
    assert "forward" not in vars(model.encoder_layers[0])
    again, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_array_equal(ref, again)
    assert list(model.parameters()) == list(EncoderDecoder(model.config).parameters())  # no stray modules


def test_labels_as_inputs_feeds_y_t(batch):
    leaky = dg.labels_as_inputs(batch, pad_id=0)
    real = batch.labels != IGNORE_INDEX
    np.testing.assert_array_equal(leaky.decoder_input_ids[real], batch.labels[real])
    assert (leaky.decoder_input_ids[~real] == 0).all()
    np.testing.assert_array_equal(leaky.labels, batch.labels)
    np.testing.assert_array_equal(leaky.input_ids, batch.input_ids)
    # the honest batch is the same labels shifted right
    np.testing.assert_array_equal(batch.decoder_input_ids, shift_right(batch.labels, 1, 0))


def test_labels_as_inputs_task_wraps_a_task(task):
    wrapped = dg.LabelsAsInputs(task)
    assert wrapped.tokenizer is task.tokenizer
    assert wrapped.dataset(3, seed=1) == task.dataset(3, seed=1)
    b = next(wrapped.batches(4, np.random.default_rng(0)))
    np.testing.assert_array_equal(b.decoder_input_ids[b.target_mask], b.labels[b.target_mask])
    with pytest.raises(TypeError, match="task"):
        dg.LabelsAsInputs("reverse")


def test_train_variant_rejects_unknown_variants(task):
    with pytest.raises(ValueError, match="variant.*'no_shift'"):
        dg.train_variant("no_shift", task)


@pytest.fixture(scope="module")
def variant_runs(task):
    """The three variants, small enough to train in a couple of seconds each."""
    mc = dg.lesson8_model_config(task, seed=0, d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                 n_decoder_layers=1)
    tc = dg.lesson8_train_config(seed=0, steps=300, eval_every=0, eval_size=64, lr=5e-3)
    return {v: dg.train_variant(v, task, mc, tc) for v in dg.VARIANTS}


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


def test_train_variant_leaves_the_model_masked(variant_runs):
    run = variant_runs["no_causal_mask"]
    assert run.variant == "no_causal_mask"
    assert not any("forward" in vars(b) for b in run.model.decoder_layers)
    assert run.optimizer.step_count == 300


# ---- section 3: the loss -------------------------------------------------------------------------
def test_logit_gradient_is_p_hat_minus_y(model, batch):
    logits, _ = model.forward(batch.input_ids[:2], batch.decoder_input_ids[:2])
    labels = batch.labels[:2]
    report = dg.logit_gradient_check(logits, labels, max_entries=60)
    assert report["p_hat_minus_y"] < 1e-12
    assert report["finite_differences"] < 1e-7
    assert report["ignored_max_abs"] == 0.0
    assert report["n_real"] == int((labels != IGNORE_INDEX).sum())
    assert report["loss"] == pytest.approx(cross_entropy(logits.astype(np.float64), labels)[0])


def test_logit_gradient_check_catches_a_wrong_gradient(model, batch, monkeypatch):
    logits, _ = model.forward(batch.input_ids[:2], batch.decoder_input_ids[:2])

    def unnormalised(z, labels, **kw):  # forgets to divide by the number of real tokens
        loss, dlogits = cross_entropy(z, labels, **kw)
        return loss, dlogits * int((labels != IGNORE_INDEX).sum())

    monkeypatch.setattr(dg, "cross_entropy", unnormalised)
    report = dg.logit_gradient_check(logits, batch.labels[:2], max_entries=20)
    assert report["p_hat_minus_y"] > 0.5 and report["finite_differences"] > 0.5


def test_padded_batch_equals_unpadded_examples(model64, batch):
    check = dg.padding_invariance(model64, batch)
    assert check.n_source_pad > 0 and check.n_positions > check.n_real  # there is padding to ignore
    assert check.loss_padded == pytest.approx(check.loss_unpadded, rel=1e-12)
    assert check.grad_rel_error < 1e-12
    assert check.loss_over_padded_length == pytest.approx(check.loss_padded * check.n_real / check.n_positions)
    # the reference really is the examples alone: one example's loss, by hand
    i = 0
    n = int((batch.labels[i] != IGNORE_INDEX).sum())
    s = int((batch.input_ids[i] != 0).sum())
    one = Batch(batch.input_ids[:1, :s], batch.decoder_input_ids[:1, :n], batch.labels[:1, :n])
    assert np.isfinite(forward_loss(model64, one)[0])


def test_padding_invariance_catches_a_loss_that_averages_over_padding(model64, batch, monkeypatch):
    def over_padded_length(z, labels, **kw):  # the mean over B*T positions, padding included
        loss, dlogits = cross_entropy(z, labels, **kw)
        scale = int((labels != IGNORE_INDEX).sum()) / labels.size
        return loss * scale, dlogits * scale

    import minitf.training

    monkeypatch.setattr(minitf.training, "cross_entropy", over_padded_length)
    check = dg.padding_invariance(model64, batch)
    assert abs(check.loss_padded - check.loss_unpadded) > 1e-3
    assert check.grad_rel_error > 1e-3


# ---- section 4: the gradient's journey ------------------------------------------------------------
def test_gradient_journey_shares_sum_to_the_total(model, batch):
    j = dg.gradient_journey(model, batch)
    L = len(model.decoder_layers)
    assert len(j.shares) == L and j.dH_enc.shape == (*batch.input_ids.shape, model.config.d_model)
    assert j.sum_max_abs_diff == 0.0  # summed in the backward's order: bit for bit
    np.testing.assert_allclose(sum(j.shares), j.dH_enc, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(j.share_norms, [np.linalg.norm(s) for s in j.shares], rtol=1e-6)
    assert (j.share_norms > 0).all(), "every decoder block sends the encoder a non-zero share"
    assert j.share_fractions.sum() == pytest.approx(1.0, abs=1e-6)  # float32 shares: float32 rounding


def test_share_fractions_add_up_to_one(model64, batch):
    j = dg.gradient_journey(model64, batch)
    assert j.sum_max_abs_diff == 0.0
    assert j.share_fractions.sum() == pytest.approx(1.0, abs=1e-12)
    g = j.dH_enc.ravel()
    for share, f in zip(j.shares, j.share_fractions):
        assert f == pytest.approx(share.ravel() @ g / (g @ g), rel=1e-12)


def test_gradient_journey_stages_follow_the_backward(model, batch):
    j = dg.gradient_journey(model, batch)
    keys = [s.key for s in j.stages]
    L_dec, L_enc = len(model.decoder_layers), len(model.encoder_layers)
    expected = ["loss", "head", "H_dec"]
    for l in reversed(range(L_dec)):
        expected += [f"decoder.{l}", f"decoder.{l}.cross_kv", f"decoder.{l}.share"]
    expected += ["H_enc"] + [f"encoder.{l}" for l in reversed(range(L_enc))] + ["src_embed"]
    assert keys == expected
    assert {s.part for s in j.stages} == {"loss", "decoder", "cross_attention", "encoder"}
    norms = {s.key: s.norm for s in j.stages}
    # the measured norms are those of the gradients the model computed
    loss, dlogits, _, _, _ = forward_loss(model, batch)
    assert j.loss == pytest.approx(loss)
    assert norms["loss"] == pytest.approx(float(np.linalg.norm(dlogits)), rel=1e-5)
    assert norms["H_enc"] == pytest.approx(float(np.linalg.norm(j.dH_enc)), rel=1e-6)
    assert norms["head"] == pytest.approx(float(np.linalg.norm(model.grads["W_U"])), rel=1e-6)
    assert norms["src_embed"] == pytest.approx(float(np.linalg.norm(model.src_embed.grads["W_E"])), rel=1e-6)
    assert all(n > 0 for n in norms.values())


def test_cross_attention_off_leaves_the_encoder_exactly_zero_gradient(model, batch):
    before = {k: v.copy() for k, v in model.parameters().items()}
    names = dg.encoder_parameter_names(model)
    assert names and all(n.startswith(("src_embed", "src_pos", "encoder_")) for n in names)
    with dg.cross_attention_off(model):
        assert all(not b.cross_attn.params["W_o"].any() for b in model.decoder_layers)
        j = dg.gradient_journey(model, batch)
        grads = model.gradients()
        assert not j.dH_enc.any()
        for n in names:
            assert not grads[n].any(), f"{n} got a gradient with cross-attention switched off"
        assert np.abs(grads["decoder_layers.0.ff.linear1.W"]).max() > 0  # the decoder still learns
        assert np.abs(grads["decoder_layers.0.cross_attn.W_o"]).max() > 0  # and so does W_o
    for k, v in model.parameters().items():
        np.testing.assert_array_equal(v, before[k])
    # with the path open, the encoder learns
    dg.gradient_journey(model, batch)
    assert np.abs(model.gradients()["encoder_layers.0.self_attn.W_v"]).max() > 0


def test_cross_attention_off_restores_weights_after_an_error(model):
    W_o = model.decoder_layers[1].cross_attn.params["W_o"].copy()
    with pytest.raises(KeyError):
        with dg.cross_attention_off(model):
            raise KeyError("x")
    np.testing.assert_array_equal(model.decoder_layers[1].cross_attn.params["W_o"], W_o)


def test_encoder_parameter_names_skip_a_shared_embedding(task):
    shared = EncoderDecoder(small_config(task, share_embeddings=True))
    assert not any(n.startswith("src_embed") for n in dg.encoder_parameter_names(shared))
    own = EncoderDecoder(small_config(task))
    assert "src_embed.W_E" in dg.encoder_parameter_names(own)
    assert not any(n.startswith(("tgt_", "decoder")) for n in dg.encoder_parameter_names(own))


def test_activation_memory_compares_with_decoder_only_models(task, batch):
    mc = small_config(task)
    mem = dg.activation_memory(mc, batch)
    assert list(mem) == ["encoder-decoder", "decoder-only, same decoder", "decoder-only, same depth"]
    for m in mem.values():
        assert m["total"] == m["encoder"] + m["decoder"] + m["head"]
    assert mem["encoder-decoder"]["encoder"] > 0 and mem["decoder-only, same decoder"]["encoder"] == 0
    assert mem["decoder-only, same decoder"]["blocks"] == mc.n_decoder_layers
    assert mem["decoder-only, same depth"]["blocks"] == mc.n_encoder_layers + mc.n_decoder_layers
    # the same numbers as the model's own count
    model = EncoderDecoder(mc)
    _, _, cache, _, _ = forward_loss(model, batch)
    assert mem["encoder-decoder"]["total"] == model.activation_bytes(cache)["total"]
    assert mem["decoder-only, same depth"]["total"] > mem["decoder-only, same decoder"]["total"]
    with pytest.raises(ValueError, match="max_len"):
        dg.activation_memory(mc.replace(max_len=12), batch)


def test_activation_memory_of_the_lesson_model_exceeds_the_same_decoder_alone():
    mem = dg.activation_memory(dg.lesson8_model_config(), dg.lesson8_batch())
    assert mem["encoder-decoder"]["total"] > mem["decoder-only, same decoder"]["total"]


# ---- section 5: training vs inference -------------------------------------------------------------
def test_error_compounding_by_length(model, batch, task):
    big = task.batch(task.dataset(40, seed=5))
    c = dg.error_compounding(model, big)
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
    ex = dg.exposure_example(model, big, task.tokenizer)
    i, n = ex["index"], int((big.labels[ex["index"]] != IGNORE_INDEX).sum())
    assert ex["target"] == [task.tokenizer.id_to_token(int(t)) for t in big.labels[i, :n]]
    assert len(ex["teacher_forced"]) == len(ex["free_running"]) == len(ex["free_running_right"]) == n
    assert ex["source"] == task.tokenizer.decode(big.input_ids[i])
    diff = ex["teacher_forced_right"].count(True) - ex["free_running_right"].count(True)
    # no other example loses more tokens to free running
    tf_pred, fr_pred = dg.predict_both_ways(model, big, 1, 2)
    real = big.labels != IGNORE_INDEX
    fr = np.full(big.labels.shape, -1)
    k = min(fr.shape[1], fr_pred.shape[1])
    fr[:, :k] = fr_pred[:, :k]
    diffs = ((tf_pred == big.labels) & real).sum(1) - ((fr == big.labels) & real).sum(1)
    assert diff == diffs.max()


def test_lesson8_run_is_cached_and_measures_both_sides():
    run = dg.lesson8_run(0)
    assert dg.lesson8_run(0) is run
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
        dg.lesson8_run("0")


# ---- the table -------------------------------------------------------------------------------------
def test_learned_config_state_reads_the_live_objects():
    run = dg.lesson8_run(0)
    rows = dg.learned_config_state(run)
    kinds = [r.kind for r in rows]
    assert kinds == sorted(kinds, key=["LEARNED", "CONFIG", "CONFIG/STATE", "STATE"].index)
    learned = [r for r in rows if r.kind == "LEARNED" and r.item != "total"]
    counted = sum(int(r.value.split(", ")[1].split()[0].replace(",", "")) for r in learned)
    assert counted == run.model.num_parameters()
    items = {r.item: r.value for r in rows}
    assert items["teacher-forcing policy"].endswith("True)")
    assert "<bos>" in items["start token"]
    assert str(run.train_config.batch_size) in items["batch size"]
    assert "WarmupCosine" in items["LR schedule"]
    assert f"d_model={run.model_config.d_model}" in items["ModelConfig"]
    assert {"optimizer moment m", "optimizer moment v", "optimizer step"} <= set(items)
    assert items["optimizer step"].startswith(str(run.train_config.steps))
    assert "encoder" in items["cached activations"] and "decoder" in items["cached activations"]
    assert not any(g.any() for g in run.model.gradients().values()), "the table leaves no gradients behind"
    text = dg.format_rows(rows, width=90)
    assert text.count("\n") >= len(rows) - 1 and "LEARNED" in text


# ---- the references the checks compare against are what they claim ------------------------------
def test_sequential_logits_never_see_a_later_input_even_without_the_mask(task, model):
    """Unmasked, the parallel pass would let position t see inputs after t; the sequential
    reference runs each prefix alone, so changing the last input changes only the last column."""
    b = task.batch(task.dataset(4, seed=11))
    changed = b.decoder_input_ids.copy()
    changed[:, -1] = np.where(changed[:, -1] == 4, 5, 4)
    with dg.without_causal_mask(model):
        seq_a = dg.sequential_logits(model, b.input_ids, b.decoder_input_ids)
        seq_b = dg.sequential_logits(model, b.input_ids, changed)
        par_a, _ = model.forward(b.input_ids, b.decoder_input_ids)
        par_b, _ = model.forward(b.input_ids, changed)
    assert not np.allclose(par_a[:, :-1], par_b[:, :-1])  # the leak is there in the parallel pass ...
    np.testing.assert_array_equal(seq_a[:, :-1], seq_b[:, :-1])  # ... and not in the sequential one


def test_padding_invariance_runs_each_example_without_any_padding(task, model, monkeypatch):
    b = task.batch(task.dataset(4, seed=3))
    assert (b.input_ids == model.config.pad_id).any() and (b.labels == IGNORE_INDEX).any()
    seen = []
    real_forward_loss = dg.forward_loss

    def recording(m, batch, *args, **kwargs):
        seen.append(batch)
        return real_forward_loss(m, batch, *args, **kwargs)

    monkeypatch.setattr(dg, "forward_loss", recording)
    dg.padding_invariance(model, b)
    singles = seen[1:]  # the first call is the padded batch itself
    assert len(singles) == 4
    for s in singles:
        assert s.batch_size == 1 and (s.input_ids != model.config.pad_id).all() and (s.labels != IGNORE_INDEX).all()


def test_epsilon_by_length_is_measured_among_the_examples_of_each_length(task, model):
    big = task.batch(task.dataset(40, seed=5))
    tf, fr = dg.predict_both_ways(model, big, 1, 2)
    c = dg.error_compounding(model, big, predictions=(tf, fr))
    real = big.labels != IGNORE_INDEX
    right = (tf == big.labels) & real
    n = real.sum(axis=1)
    want = [1 - right[n == T].sum() / real[n == T].sum() for T in c.lengths]
    np.testing.assert_allclose(c.epsilon_by_length, want, rtol=1e-12)
    assert len(set(np.round(want, 6))) > 1  # lengths differ, so a pooled value would fail


def test_gradient_journey_head_stage_is_the_heads_gradient_also_when_tied(task):
    """With W_U tied to the target embedding, the parameter's gradient also holds the input
    lookup's share; the head stage must show dW_U = H_dec^T dlogits alone."""
    model = dg.to_float64(EncoderDecoder(small_config(task, tie_output=True)))
    b = task.batch(task.dataset(6, seed=2))
    journey = dg.gradient_journey(model, b)
    with model.evaluating():
        _, dlogits, cache, _, _ = dg.forward_loss(model, b)
    H_dec = cache.decoder.H_dec
    want = np.linalg.norm(H_dec.reshape(-1, H_dec.shape[-1]).T @ dlogits.reshape(-1, dlogits.shape[-1]))
    head = next(s for s in journey.stages if s.key == "head")
    assert head.norm == pytest.approx(want, rel=1e-12)
    assert not np.isclose(head.norm, np.linalg.norm(model.tgt_embed.grads["W_E"]))  # not the whole table's
