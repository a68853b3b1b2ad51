"""Appendix B's measurements (minitf.course.appendix_b_architectures): each checked against an independent
count, so that a wrong formula, a wrong cache reading or a wrong label layout fails here.
No training: the quality runs are exercised by the notebook (tests/test_lessons.py)."""
import numpy as np
import pytest

from minitf.course import appendix_b_architectures as ab
from minitf.course import l06_encoder_decoder as lesson06
from minitf.course.l06_encoder_decoder.experiments import _affine_flops, _attention_flops, _ff_flops
from minitf.data import IGNORE_INDEX
from minitf.models.common import head_weight
from minitf.training import decoder_only_attention_mask, decoder_only_batch


def test_parameter_counts_match_lesson6_formulas_and_the_models():
    counts = ab.parameter_counts()
    assert list(counts) == list(ab.ARCHITECTURES)
    for name in ("encoder-decoder", "decoder-only"):
        assert counts[name]["formula"] == counts[name]["parameters"]
    # the decoder-only formula also holds untied, with learned positions
    cfg = ab.model_config("decoder-only").replace(tie_output=False, positional="learned")
    from minitf.models import DecoderOnly
    from minitf.course.appendix_b_architectures.experiments import _decoder_only_parameters

    assert _decoder_only_parameters(cfg) == DecoderOnly(cfg).num_parameters()


def _live_transformer_flops(model, cache, name):
    """Matrix products of a live forward, counted from its cache with Lesson 6's helpers."""
    if name == "decoder-only":
        total = sum(sum(_attention_flops(layer.self_attn, c.self_attn.f).values()) + _ff_flops(layer.ff, c.ff.f)
                    for layer, c in zip(model.decoder_layers, cache.layers))
        return total + _affine_flops(cache.H_dec, head_weight(model))
    enc, head = cache
    total = sum(sum(_attention_flops(layer.self_attn, c.self_attn.f).values()) + _ff_flops(layer.ff, c.ff.f)
                for layer, c in zip(model.encoder_layers, enc.layers))
    return total + _affine_flops(head.transform.x, model.mlm_transform.params["W"]) \
        + _affine_flops(head.h, model.head_weight())


@pytest.mark.parametrize("name", ["decoder-only", "encoder-only"])
def test_forward_flops_equal_the_products_of_a_live_forward(name):
    from minitf.training import forward_loss

    B, S, T = ab.COST_SHAPE
    model = ab.build_model(name)
    _, _, cache, _, _ = forward_loss(model, ab.cost_batch(), rng=0)
    assert ab.forward_flops(name, B, S, T) == _live_transformer_flops(model, cache, name)


def test_encoder_decoder_flops_are_lesson6s():
    B, S, T = ab.COST_SHAPE
    assert ab.forward_flops("encoder-decoder", B, S, T) == lesson06.forward_flops(ab.model_config("encoder-decoder"),
                                                                                   B, S, T)["total"]


def test_rnn_flops_by_hand():
    """One-layer LSTM pair, E = H = 32, dot attention feeding the output (Luong)."""
    B, S, T = ab.COST_SHAPE
    c = ab.model_config("RNN encoder-decoder")
    E, H, V = c.embedding_size, c.hidden_size, c.tgt_vocab_size
    lstm = 2 * (E + H) * 4 * H  # [x; h] @ W, four gates
    per_target = lstm + 2 * (H + H) * H + 2 * H * V + 2 * 2 * S * H  # cell, W_c, W_U, scores + context
    assert ab.forward_flops("RNN encoder-decoder", B, S, T) == B * S * lstm + B * T * per_target


def test_cost_rows_per_scored_token():
    B, S, T = ab.COST_SHAPE
    rows = {n: ab.cost_row(n) for n in ab.ARCHITECTURES}
    for n in ("encoder-decoder", "decoder-only", "RNN encoder-decoder"):
        assert rows[n].scored == B * T  # no padding: every target position, <eos> included
    assert rows["encoder-only"].scored == B * round(0.15 * S)  # BERT's 15 % of each row
    ed = ab.model_config("encoder-decoder")
    assert rows["encoder-decoder"].activation_bytes_per_token == pytest.approx(
        lesson06.activation_formula(ed, B, S, T)["total"] / (B * T), rel=1e-12)
    for n, r in rows.items():
        assert r.train_flops_per_token == pytest.approx(3 * ab.forward_flops(n, B, S, T) / r.scored, rel=1e-12)
        assert r.parameters == ab.build_model(n).num_parameters()


def test_training_views_show_what_forward_loss_feeds():
    views = {v.architecture: v for v in ab.training_views(seed=0)}
    task = ab.appendix_b_task()
    batch = task.batch(task.dataset(2, seed=0))
    ed = views["encoder-decoder"]
    np.testing.assert_array_equal(ed.labels, batch.labels)
    np.testing.assert_array_equal(ed.inputs["decoder_input_ids"][:, 1:], np.where(batch.labels[:, :-1] == IGNORE_INDEX,
                                                                                   0, batch.labels[:, :-1]))
    assert (ed.inputs["decoder_input_ids"][:, 0] == task.tokenizer.bos_id).all()
    c = ab.model_config("decoder-only")
    ids, labels = decoder_only_batch(batch, c.bos_id, c.pad_id)
    np.testing.assert_array_equal(views["decoder-only"].inputs["input_ids"], ids)
    np.testing.assert_array_equal(views["decoder-only"].labels, labels)
    np.testing.assert_array_equal(views["decoder-only"].inputs["attention_mask"],
                                  decoder_only_attention_mask(batch, c.pad_id))
    eo = views["encoder-only"]
    hidden = eo.labels != IGNORE_INDEX
    assert hidden.sum(axis=1).min() >= 1
    np.testing.assert_array_equal(eo.labels[hidden], batch.input_ids[hidden])  # labels: the original tokens
    text = ab.format_training_view(eo)
    assert text.splitlines()[0] == "encoder-only:" and "labels" in text


def test_generation_caches_grow_as_the_formulas_say():
    B, S, T = ab.COST_SHAPE
    caches = {g.architecture: g for g in ab.generation_caches()}
    assert list(caches) == list(ab.GENERATORS)
    q, D = 8, 32  # float64, d_model
    ed, do = ab.model_config("encoder-decoder"), ab.model_config("decoder-only")
    assert caches["encoder-decoder"].bytes_per_token == 2 * ed.n_decoder_layers * D * q
    assert caches["encoder-decoder"].fixed_bytes == 2 * ed.n_decoder_layers * S * D * q  # cross K, V of H_enc
    assert caches["decoder-only"].bytes_per_token == 2 * do.n_decoder_layers * D * q
    assert caches["decoder-only"].fixed_bytes == 2 * do.n_decoder_layers * S * D * q  # the prompt's K, V
    rnn = caches["RNN encoder-decoder"]
    H = ab.model_config("RNN encoder-decoder").hidden_size
    assert rnn.bytes_per_token == 0
    # states, their copy as keys, the mask, the conditioning h and c, the decoder's h and c
    assert rnn.fixed_bytes == q * (2 * S * H + S + 2 * H + 2 * H)


def test_step_latency_is_a_positive_time_and_refuses_the_encoder_only_model():
    assert 0 < ab.step_latency("RNN encoder-decoder", repeats=1) < 1.0
    with pytest.raises(ValueError, match="architecture"):
        ab.step_latency("encoder-only")


def test_format_table_marks_what_does_not_apply():
    row = dict(architecture="encoder-only", parameters=1, train_flops_per_token=2.0, activation_bytes_per_token=3.0,
               cache_bytes_per_token=None, cache_fixed_bytes=None, step_seconds=None, quality=0.1)
    text = ab.format_table([row])
    assert text.splitlines()[-1].count("n/a") == 5


def test_the_table_shows_the_step_times_it_is_given():
    """The notebook measures each generator's step once (section 3) and the table of section 5
    shows those numbers, not a second, different timing of the same thing."""
    with pytest.raises(ValueError, match="missing"):
        ab.comparison_table(step_seconds={"encoder-decoder": 1e-3})
    given = {name: 1e-3 * (i + 1) for i, name in enumerate(ab.GENERATORS)}
    rows = ab.comparison_table(step_seconds=given)
    assert {r["architecture"]: r["step_seconds"] for r in rows} == {**given, "encoder-only": None}
    assert " 1.00" in ab.format_table(rows) and " 3.00" in ab.format_table(rows)
