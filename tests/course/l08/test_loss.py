"""Tests for minitf.course.l08_teacher_forcing.loss: Lesson 8's sections 3 (the loss) and 4 (the gradient's
journey) measure what they claim."""
from __future__ import annotations

import numpy as np
import pytest

from .fixtures import batch, model, model64, small_config, task  # noqa: F401 (pytest fixtures)
from minitf.course import l08_teacher_forcing as l8
from minitf.course.l08_teacher_forcing import loss as lesson08_loss
from minitf.data import IGNORE_INDEX, Batch
from minitf.loss import cross_entropy
from minitf.models import EncoderDecoder
from minitf.training import forward_loss


# ---- section 3: the loss -------------------------------------------------------------------------
def test_logit_gradient_is_p_hat_minus_y(model, batch):
    logits, _ = model.forward(batch.input_ids[:2], batch.decoder_input_ids[:2])
    labels = batch.labels[:2]
    report = l8.logit_gradient_check(logits, labels, max_entries=60)
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

    monkeypatch.setattr(lesson08_loss, "cross_entropy", unnormalised)
    report = l8.logit_gradient_check(logits, batch.labels[:2], max_entries=20)
    assert report["p_hat_minus_y"] > 0.5 and report["finite_differences"] > 0.5


def test_padded_batch_equals_unpadded_examples(model64, batch):
    check = l8.padding_invariance(model64, batch)
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
    check = l8.padding_invariance(model64, batch)
    assert abs(check.loss_padded - check.loss_unpadded) > 1e-3
    assert check.grad_rel_error > 1e-3


# ---- section 4: the gradient's journey ------------------------------------------------------------
def test_gradient_journey_shares_sum_to_the_total(model, batch):
    j = l8.gradient_journey(model, batch)
    L = len(model.decoder_layers)
    assert len(j.shares) == L and j.dH_enc.shape == (*batch.input_ids.shape, model.config.d_model)
    assert j.sum_max_abs_diff == 0.0  # summed in the backward's order: bit for bit
    np.testing.assert_allclose(sum(j.shares), j.dH_enc, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(j.share_norms, [np.linalg.norm(s) for s in j.shares], rtol=1e-6)
    assert (j.share_norms > 0).all(), "every decoder block sends the encoder a non-zero share"
    assert j.share_fractions.sum() == pytest.approx(1.0, abs=1e-6)  # float32 shares: float32 rounding


def test_share_fractions_add_up_to_one(model64, batch):
    j = l8.gradient_journey(model64, batch)
    assert j.sum_max_abs_diff == 0.0
    assert j.share_fractions.sum() == pytest.approx(1.0, abs=1e-12)
    g = j.dH_enc.ravel()
    for share, f in zip(j.shares, j.share_fractions):
        assert f == pytest.approx(share.ravel() @ g / (g @ g), rel=1e-12)


def test_gradient_journey_stages_follow_the_backward(model, batch):
    j = l8.gradient_journey(model, batch)
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
    names = l8.encoder_parameter_names(model)
    assert names and all(n.startswith(("src_embed", "src_pos", "encoder_")) for n in names)
    with l8.cross_attention_off(model):
        assert all(not b.cross_attn.params["W_o"].any() for b in model.decoder_layers)
        j = l8.gradient_journey(model, batch)
        grads = model.gradients()
        assert not j.dH_enc.any()
        for n in names:
            assert not grads[n].any(), f"{n} got a gradient with cross-attention switched off"
        assert np.abs(grads["decoder_layers.0.ff.linear1.W"]).max() > 0  # the decoder still learns
        assert np.abs(grads["decoder_layers.0.cross_attn.W_o"]).max() > 0  # and so does W_o
    for k, v in model.parameters().items():
        np.testing.assert_array_equal(v, before[k])
    # with the path open, the encoder learns
    l8.gradient_journey(model, batch)
    assert np.abs(model.gradients()["encoder_layers.0.self_attn.W_v"]).max() > 0


def test_cross_attention_off_restores_weights_after_an_error(model):
    W_o = model.decoder_layers[1].cross_attn.params["W_o"].copy()
    with pytest.raises(KeyError):
        with l8.cross_attention_off(model):
            raise KeyError("x")
    np.testing.assert_array_equal(model.decoder_layers[1].cross_attn.params["W_o"], W_o)


def test_encoder_parameter_names_skip_a_shared_embedding(task):
    shared = EncoderDecoder(small_config(task, share_embeddings=True))
    assert not any(n.startswith("src_embed") for n in l8.encoder_parameter_names(shared))
    own = EncoderDecoder(small_config(task))
    assert "src_embed.W_E" in l8.encoder_parameter_names(own)
    assert not any(n.startswith(("tgt_", "decoder")) for n in l8.encoder_parameter_names(own))


def test_activation_memory_compares_with_decoder_only_models(task, batch):
    mc = small_config(task)
    mem = l8.activation_memory(mc, batch)
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
        l8.activation_memory(mc.replace(max_len=12), batch)


def test_activation_memory_of_the_lesson_model_exceeds_the_same_decoder_alone():
    mem = l8.activation_memory(l8.lesson8_model_config(), l8.lesson8_batch())
    assert mem["encoder-decoder"]["total"] > mem["decoder-only, same decoder"]["total"]


# ---- the references the checks compare against are what they claim ------------------------------
def test_padding_invariance_runs_each_example_without_any_padding(task, model, monkeypatch):
    b = task.batch(task.dataset(4, seed=3))
    assert (b.input_ids == model.config.pad_id).any() and (b.labels == IGNORE_INDEX).any()
    seen = []
    real_forward_loss = lesson08_loss.forward_loss

    def recording(m, batch, *args, **kwargs):
        seen.append(batch)
        return real_forward_loss(m, batch, *args, **kwargs)

    monkeypatch.setattr(lesson08_loss, "forward_loss", recording)
    l8.padding_invariance(model, b)
    singles = seen[1:]  # the first call is the padded batch itself
    assert len(singles) == 4
    for s in singles:
        assert s.batch_size == 1 and (s.input_ids != model.config.pad_id).all() and (s.labels != IGNORE_INDEX).all()


def test_gradient_journey_head_stage_is_the_heads_gradient_also_when_tied(task):
    """With W_U tied to the target embedding, the parameter's gradient also holds the input
    lookup's share; the head stage must show dW_U = H_dec^T dlogits alone."""
    model = l8.to_float64(EncoderDecoder(small_config(task, tie_output=True)))
    b = task.batch(task.dataset(6, seed=2))
    journey = l8.gradient_journey(model, b)
    with model.evaluating():
        _, dlogits, cache, _, _ = forward_loss(model, b)
    H_dec = cache.decoder.H_dec
    want = np.linalg.norm(H_dec.reshape(-1, H_dec.shape[-1]).T @ dlogits.reshape(-1, dlogits.shape[-1]))
    head = next(s for s in journey.stages if s.key == "head")
    assert head.norm == pytest.approx(want, rel=1e-12)
    assert not np.isclose(head.norm, np.linalg.norm(model.tgt_embed.grads["W_E"]))  # not the whole table's
