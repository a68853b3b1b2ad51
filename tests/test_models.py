"""Tests for minitf/models: the encoder-decoder and the decoder-only transformer.

What Lesson 8 claims, checked on the real model: a padded batch gives the same loss and
gradients as its examples run one by one; the encoder learns only through cross-attention
(cut it and the encoder's gradient is exactly zero); dL/dH_enc is the sum of one share per
decoder block; encoder-decoder training keeps more activations than a decoder-only model.
Then the bookkeeping: seeds, parameter names, parameter counts, errors that name the argument.
(Finite-difference checks of the whole model are in test_model_gradcheck.py.)
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import IGNORE_INDEX, make_batch
from minitf.gradcheck import randomize_norms_and_biases, rel_error
from minitf.loss import cross_entropy
from minitf.models import DecoderOnly, EncoderDecoder, EncoderDecoderGrads

PAD, BOS, EOS = 0, 1, 2
V_SRC, V_TGT, D, H, F, MAX_LEN = 11, 13, 8, 2, 12, 9


def config(**overrides) -> ModelConfig:
    base = dict(src_vocab_size=V_SRC, tgt_vocab_size=V_TGT, d_model=D, n_heads=H, d_ff=F, n_encoder_layers=2,
                n_decoder_layers=2, max_len=MAX_LEN, dtype="float64", pad_id=PAD, seed=11)
    base.update(overrides)
    return ModelConfig(**base)




def examples(cfg: ModelConfig, src_lengths=(5, 2, 4), tgt_lengths=(3, 6, 1), seed: int = 0):
    rng = np.random.default_rng(seed)
    sources = [rng.integers(3, cfg.src_vocab_size, n).tolist() for n in src_lengths]
    targets = [rng.integers(3, cfg.tgt_vocab_size, n - 1).tolist() + [EOS] for n in tgt_lengths]
    return sources, targets


def loss_and_grads(model: EncoderDecoder, batch):
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    out = model.backward(dlogits, cache)
    return loss, {k: g.copy() for k, g in model.gradients().items()}, out


def is_encoder_side(name: str) -> bool:
    return name.startswith(("src_embed.", "src_pos.", "encoder_layers.", "encoder_norm."))


# ---- padding invariance --------------------------------------------------------------------------
PADDING_CASES = {
    "pre_ln": dict(),
    "post_ln_learned_tied": dict(norm_first=False, positional="learned", src_vocab_size=V_TGT,
                                 share_embeddings=True, tie_output=True),
}


@pytest.mark.parametrize("case", sorted(PADDING_CASES))
def test_padded_batch_equals_examples_run_one_by_one(case):
    """Loss and every gradient of a padded batch equal the token-weighted mean of the
    unpadded examples': L = sum_i n_i L_i / sum_i n_i, and the same for each gradient."""
    cfg = config(**PADDING_CASES[case], activation="gelu")
    model = randomize_norms_and_biases(EncoderDecoder(cfg))
    sources, targets = examples(cfg)
    batch = make_batch(sources, targets, pad_id=PAD, start_id=BOS)
    assert (batch.input_ids == PAD).any() and (batch.labels == IGNORE_INDEX).any()
    loss, grads, _ = loss_and_grads(model, batch)

    n = np.array([len(t) for t in targets])
    assert batch.n_tokens == n.sum()
    ref_loss, ref_grads = 0.0, {k: np.zeros_like(g) for k, g in grads.items()}
    for i, (src, tgt) in enumerate(zip(sources, targets)):
        single = make_batch([src], [tgt], pad_id=PAD, start_id=BOS)  # no padding at all
        assert not (single.input_ids == PAD).any()
        loss_i, grads_i, _ = loss_and_grads(model, single)
        ref_loss += n[i] * loss_i / n.sum()
        for k in ref_grads:
            ref_grads[k] += n[i] * grads_i[k] / n.sum()

    assert rel_error(loss, ref_loss) <= 1e-12
    for name in grads:
        if name.endswith(".b_k"):  # exactly zero in theory (see test_model_gradcheck): noise on both sides
            assert np.abs(grads[name]).max() < 1e-12 and np.abs(ref_grads[name]).max() < 1e-12
            continue
        err = rel_error(grads[name], ref_grads[name])
        assert err <= 1e-10, f"{name}: relative error {err:.2e}"


def test_decoder_only_right_padding_changes_nothing():
    cfg = config(positional="learned")
    model = randomize_norms_and_biases(DecoderOnly(cfg))
    rng = np.random.default_rng(3)
    ids = rng.integers(3, V_TGT, size=(1, 5))
    labels = np.roll(ids, -1, axis=1)
    labels[:, -1] = EOS
    padded_ids = np.concatenate([ids, np.full((1, 3), PAD)], axis=1)
    padded_labels = np.concatenate([labels, np.full((1, 3), IGNORE_INDEX)], axis=1)

    def run(x, y):
        logits, cache = model.forward(x)
        loss, dlogits = cross_entropy(logits, y)
        model.zero_grad()
        model.backward(dlogits, cache)
        return loss, logits, {k: g.copy() for k, g in model.gradients().items()}

    loss, logits, grads = run(ids, labels)
    loss_p, logits_p, grads_p = run(padded_ids, padded_labels)
    assert rel_error(loss_p, loss) <= 1e-12
    assert rel_error(logits_p[:, :5], logits) <= 1e-12
    for name in grads:
        if not name.endswith(".b_k"):
            assert rel_error(grads_p[name], grads[name]) <= 1e-10, name


# ---- the encoder's only learning signal ------------------------------------------------------------
def test_zeroed_cross_attention_leaves_the_encoder_with_exactly_zero_gradient():
    cfg = config(positional="learned", activation="gelu")
    model = randomize_norms_and_biases(EncoderDecoder(cfg))
    batch = make_batch(*examples(cfg), pad_id=PAD, start_id=BOS)

    _, grads, _ = loss_and_grads(model, batch)  # first the normal model: the encoder does learn
    encoder_names = [k for k in grads if is_encoder_side(k)]
    assert len(encoder_names) == 2 + 2 * 16 + 2
    assert all(np.any(grads[k] != 0) for k in encoder_names if not k.endswith(".b_k"))

    for layer in model.decoder_layers:  # cut every cross-attention's output
        layer.cross_attn.params["W_o"][...] = 0.0
        layer.cross_attn.params["b_o"][...] = 0.0
    _, grads, out = loss_and_grads(model, batch)
    for name in encoder_names:
        assert np.all(grads[name] == 0), f"{name} still gets a gradient"
    assert np.all(out.dH_enc == 0) and all(np.all(s == 0) for s in out.dH_enc_shares)
    # the decoder still learns, including the cross-attention's output projection
    assert np.any(grads["decoder_layers.0.cross_attn.W_o"] != 0)
    assert np.any(grads["tgt_embed.W_E"] != 0) and np.any(grads["W_U"] != 0)


@pytest.mark.parametrize("norm_first", [True, False])
def test_dH_enc_is_the_sum_of_one_share_per_decoder_block(norm_first):
    cfg = config(norm_first=norm_first, n_decoder_layers=3)
    model = randomize_norms_and_biases(EncoderDecoder(cfg))
    batch = make_batch(*examples(cfg), pad_id=PAD, start_id=BOS)
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    _, dlogits = cross_entropy(logits, batch.labels)
    out = model.backward(dlogits, cache)
    assert isinstance(out, EncoderDecoderGrads)

    B, S = batch.input_ids.shape
    assert len(out.dH_enc_shares) == 3
    assert all(s.shape == (B, S, D) for s in out.dH_enc_shares) and out.dH_enc.shape == (B, S, D)
    np.testing.assert_allclose(sum(out.dH_enc_shares), out.dH_enc, rtol=1e-13, atol=1e-17)
    real = batch.input_ids != PAD  # (B, S)
    for l, share in enumerate(out.dH_enc_shares):
        assert np.all(share[~real] == 0), f"block {l} sends gradient to padded source positions"
        assert np.all(np.abs(share[real]).sum(axis=-1) > 0), f"block {l}'s share vanishes somewhere"
    for a in range(3):
        for b in range(a + 1, 3):
            assert rel_error(out.dH_enc_shares[a], out.dH_enc_shares[b]) > 0.1  # distinct contributions
    # the gradient entering the decoder from the head: dH_dec = dlogits W_U^T
    np.testing.assert_allclose(out.dH_dec, dlogits @ model.params["W_U"].T, rtol=1e-13, atol=1e-17)


def test_forward_is_encode_then_decode():
    model = randomize_norms_and_biases(EncoderDecoder(config()))
    batch = make_batch(*examples(model.config), pad_id=PAD, start_id=BOS)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    H_enc, _ = model.encode(batch.input_ids)
    logits2, _ = model.decode(batch.decoder_input_ids, H_enc, model.source_mask(batch.input_ids))
    np.testing.assert_array_equal(logits, logits2)


def test_logits_at_t_do_not_see_decoder_inputs_after_t():
    model = randomize_norms_and_biases(EncoderDecoder(config()))
    batch = make_batch(*examples(model.config), pad_id=PAD, start_id=BOS)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    changed = batch.decoder_input_ids.copy()
    changed[:, 3:] = (changed[:, 3:] + 1) % V_TGT
    logits2, _ = model.forward(batch.input_ids, changed)
    np.testing.assert_array_equal(logits2[:, :3], logits[:, :3])
    assert not np.allclose(logits2[:, 3:], logits[:, 3:])


# ---- memory --------------------------------------------------------------------------------------
def test_activation_bytes_encoder_decoder_exceeds_decoder_only():
    cfg = config()
    B, S, T = 4, 7, 6
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(3, V_SRC, (B, S)), rng.integers(3, V_TGT, (B, T))
    ed = EncoderDecoder(cfg)
    do = DecoderOnly(cfg)  # the same decoder size: D, H, F, n_decoder_layers
    ed_bytes = ed.activation_bytes(ed.forward(src, tgt)[1])
    do_bytes = do.activation_bytes(do.forward(tgt)[1])
    assert set(ed_bytes) == {"encoder", "decoder", "head", "total"}
    assert ed_bytes["total"] == ed_bytes["encoder"] + ed_bytes["decoder"] + ed_bytes["head"]
    assert ed_bytes["total"] > do_bytes["total"]
    assert ed_bytes["encoder"] > 0
    assert ed_bytes["decoder"] > do_bytes["decoder"]  # cross-attention caches Q, K, V, A per block
    assert ed_bytes["head"] == do_bytes["head"] == B * T * D * 8  # H_dec in float64

    # every cached array grows with the batch: twice the examples, exactly twice the bytes
    ed2 = ed.activation_bytes(ed.forward(np.concatenate([src, src]), np.concatenate([tgt, tgt]))[1])
    assert all(ed2[k] == 2 * ed_bytes[k] for k in ed_bytes)


# ---- seeds, names, counts ------------------------------------------------------------------------
def test_same_seed_gives_identical_parameters_and_another_seed_does_not():
    a, b = EncoderDecoder(config(seed=5)), EncoderDecoder(config(seed=5))
    c = EncoderDecoder(config(seed=6))
    for name, p in a.parameters().items():
        np.testing.assert_array_equal(p, b.parameters()[name], err_msg=name)
    random_names = [n for n, p in a.parameters().items() if np.ptp(p) > 0]  # not the constant inits
    assert random_names and all(not np.array_equal(a.parameters()[n], c.parameters()[n]) for n in random_names)
    d, e = DecoderOnly(config(seed=5)), DecoderOnly(config(seed=5))
    for name, p in d.parameters().items():
        np.testing.assert_array_equal(p, e.parameters()[name], err_msg=name)


def _block_names(prefix: str, attns: tuple, norms: tuple) -> list[str]:
    out = [f"{prefix}.{a}.{p}" for a in attns for p in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")]
    out += [f"{prefix}.ff.{lin}.{p}" for lin in ("linear1", "linear2") for p in ("W", "b")]
    return out + [f"{prefix}.norm{k}.{p}" for k in norms for p in ("gamma", "beta")]


def test_encoder_decoder_parameter_names_are_stable():
    model = EncoderDecoder(config(n_encoder_layers=1, n_decoder_layers=2, positional="learned"))
    expected = (["W_U", "src_embed.W_E", "src_pos.W_pos"]
                + _block_names("encoder_layers.0", ("self_attn",), (1, 2))
                + ["encoder_norm.gamma", "encoder_norm.beta", "tgt_embed.W_E", "tgt_pos.W_pos"]
                + _block_names("decoder_layers.0", ("self_attn", "cross_attn"), (1, 2, 3))
                + _block_names("decoder_layers.1", ("self_attn", "cross_attn"), (1, 2, 3))
                + ["decoder_norm.gamma", "decoder_norm.beta"])
    assert list(model.parameters()) == expected
    assert list(model.gradients()) == expected
    assert list(EncoderDecoder(model.config).parameters()) == expected  # stable across instances
    for name in expected:
        g, p = model.gradients()[name], model.parameters()[name]
        assert g.shape == p.shape and g.dtype == p.dtype and g is not p


def test_tied_and_sinusoidal_models_drop_the_right_names():
    names = set(EncoderDecoder(config(tie_output=True)).parameters())
    assert "W_U" not in names and "tgt_embed.W_E" in names and not any("_pos." in n for n in names)
    model = EncoderDecoder(config(src_vocab_size=V_TGT, share_embeddings=True, tie_output=True))
    assert model.tgt_embed is model.src_embed
    names = set(model.parameters())
    assert "src_embed.W_E" in names and "tgt_embed.W_E" not in names and "W_U" not in names


@pytest.mark.parametrize("model_cls", [EncoderDecoder, DecoderOnly])
def test_parameter_names_are_the_documented_ones(model_cls):
    """The class docstring lists the top-level pieces every parameter name starts with."""
    doc = model_cls.__doc__
    for name in model_cls(config(positional="learned")).parameters():
        assert f"``{name.split('.')[0]}" in doc, f"{name}: not documented in {model_cls.__name__}"


def hand_count_encoder_decoder(c: ModelConfig) -> int:
    D_, F_ = c.d_model, c.d_ff
    attn = 4 * D_ * D_ + 4 * D_  # W_q, W_k, W_v, W_o and their biases
    ff = D_ * F_ + F_ + F_ * D_ + D_  # linear1, linear2
    ln = 2 * D_  # gamma, beta
    encoder = c.n_encoder_layers * (attn + ff + 2 * ln) + ln  # + final encoder norm
    decoder = c.n_decoder_layers * (2 * attn + ff + 3 * ln) + ln  # self + cross attention
    embeddings = c.src_vocab_size * D_ + (0 if c.share_embeddings else c.tgt_vocab_size * D_)
    positions = 2 * c.max_len * D_ if c.positional == "learned" else 0
    head = 0 if c.tie_output else D_ * c.tgt_vocab_size
    return encoder + decoder + embeddings + positions + head


@pytest.mark.parametrize("overrides", [
    dict(),
    dict(positional="learned"),
    dict(tie_output=True),
    dict(src_vocab_size=V_TGT, share_embeddings=True, tie_output=True, positional="learned"),
    dict(n_encoder_layers=0, n_decoder_layers=3),
])
def test_num_parameters_matches_a_hand_count(overrides):
    c = config(**overrides)
    assert EncoderDecoder(c).num_parameters() == hand_count_encoder_decoder(c)


def test_num_parameters_small_config_by_number():
    # D=8, F=12, V=11/13, 2+2 layers, sinusoidal, untied:
    #   attention 288, ff 212, norm 16; encoder 2*(288+212+32)+16 = 1080;
    #   decoder 2*(576+212+48)+16 = 1688; embeddings 88+104; head 104
    assert EncoderDecoder(config()).num_parameters() == 1080 + 1688 + 88 + 104 + 104


def test_tied_weights_are_counted_once():
    untied = EncoderDecoder(config(src_vocab_size=V_TGT)).num_parameters()
    tied = EncoderDecoder(config(src_vocab_size=V_TGT, share_embeddings=True, tie_output=True)).num_parameters()
    assert untied - tied == 2 * V_TGT * D  # one embedding table and W_U gone, nothing counted twice


def test_decoder_only_num_parameters_matches_a_hand_count():
    c = config(positional="learned")
    attn, ff, ln = 4 * D * D + 4 * D, D * F + F + F * D + D, 2 * D
    expected = V_TGT * D + MAX_LEN * D + c.n_decoder_layers * (attn + ff + 2 * ln) + ln + D * V_TGT
    assert DecoderOnly(c).num_parameters() == expected


# ---- modes and dtypes ----------------------------------------------------------------------------
def test_eval_mode_turns_dropout_off_and_train_mode_on():
    batch = make_batch(*examples(config()), pad_id=PAD, start_id=BOS)
    plain = EncoderDecoder(config(dtype="float32"))
    with_dropout = EncoderDecoder(config(dtype="float32", dropout=0.3))
    reference, _ = plain.forward(batch.input_ids, batch.decoder_input_ids)
    assert reference.dtype == np.float32
    trained, _ = with_dropout.forward(batch.input_ids, batch.decoder_input_ids)
    assert not np.allclose(trained, reference)
    evaluated, _ = with_dropout.eval().forward(batch.input_ids, batch.decoder_input_ids)
    np.testing.assert_array_equal(evaluated, reference)


# ---- bad input -----------------------------------------------------------------------------------
@pytest.fixture
def model():
    return EncoderDecoder(config())


def test_token_ids_out_of_range_are_rejected(model):
    src, tgt = np.full((2, 4), 3), np.full((2, 3), 3)
    bad = src.copy()
    bad[1, 2] = V_SRC
    with pytest.raises(ValueError, match=r"^src_ids: expected token ids in \[0, 11\), got 11 at index \(1, 2\)"):
        model.forward(bad, tgt)
    bad = tgt.copy()
    bad[0, 0] = -1
    with pytest.raises(ValueError, match=r"^decoder_input_ids: expected token ids in \[0, 13\), got -1"):
        model.forward(src, bad)
    with pytest.raises(ValueError, match=r"^input_ids: expected token ids in \[0, 13\)"):
        DecoderOnly(config()).forward(np.full((1, 2), V_TGT))


def test_float_ids_are_rejected(model):
    with pytest.raises(TypeError, match=r"^src_ids: expected an integer array"):
        model.forward(np.full((2, 4), 3.0), np.full((2, 3), 3))
    with pytest.raises(TypeError, match=r"^decoder_input_ids: expected an integer array"):
        model.forward(np.full((2, 4), 3), np.full((2, 3), 3.0))
    with pytest.raises(TypeError, match=r"^input_ids: expected an integer array"):
        DecoderOnly(config()).forward(np.full((1, 2), 3.0))


def test_mismatched_batch_sizes_are_rejected(model):
    with pytest.raises(ValueError, match=r"^decoder_input_ids: expected batch size B=2.*got 3"):
        model.forward(np.full((2, 4), 3), np.full((3, 3), 3))
    H_enc, _ = model.encode(np.full((2, 4), 3))
    with pytest.raises(ValueError, match=r"^decoder_input_ids: expected batch size B=2.*got 1"):
        model.decode(np.full((1, 3), 3), H_enc, model.source_mask(np.full((2, 4), 3)))


def test_wrong_number_of_dimensions_is_rejected(model):
    with pytest.raises(ValueError, match=r"^src_ids: expected shape \(B, length\), got \(4,\)"):
        model.forward(np.full(4, 3), np.full((1, 3), 3))


def test_sequences_longer_than_max_len_are_rejected(model):
    with pytest.raises(ValueError, match=rf"^src_ids: expected at most max_len={MAX_LEN} positions, got 10"):
        model.forward(np.full((1, MAX_LEN + 1), 3), np.full((1, 3), 3))
    with pytest.raises(ValueError, match=rf"^decoder_input_ids: expected at most max_len={MAX_LEN} positions"):
        model.forward(np.full((1, 3), 3), np.full((1, MAX_LEN + 1), 3))
    with pytest.raises(ValueError, match=rf"^input_ids: expected at most max_len={MAX_LEN} positions"):
        DecoderOnly(config()).forward(np.full((1, MAX_LEN + 1), 3))


def test_config_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"^share_embeddings: needs src_vocab_size == tgt_vocab_size, got 11 and 13"):
        config(share_embeddings=True)
    with pytest.raises(ValueError, match=r"^n_heads: expected a divisor of d_model=10, got 3"):
        config(d_model=10, n_heads=3)


# ---- accumulation and memory accounting ---------------------------------------------------------
@pytest.mark.parametrize("cls, kw", [(EncoderDecoder, {}), (EncoderDecoder, dict(tie_output=True)), (DecoderOnly, {})])
def test_a_second_backward_adds_exactly_the_same_gradient(cls, kw):
    """Gradients accumulate (+=) everywhere, the head and a tied W_U included: two backward
    calls on one cache give twice the gradient of one (to rounding: a tied table adds two
    contributions per call, so the sums associate differently; "=" instead of "+=" would
    give 1x, far outside the tolerance)."""
    cfg = ModelConfig(src_vocab_size=13, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=12, max_len=8,
                      dtype="float64", **kw)
    model = cls(cfg)
    ids = np.array([[5, 6, 7, 0], [3, 4, 8, 9]])
    labels = np.array([[4, 5, 2, IGNORE_INDEX], [6, 7, 8, 2]])
    logits, cache = model.forward(ids, ids) if cls is EncoderDecoder else model.forward(ids)
    _, dlogits = cross_entropy(logits, labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    once = {k: g.copy() for k, g in model.gradients().items()}
    model.backward(dlogits, cache)
    for k, g in model.gradients().items():
        np.testing.assert_allclose(g, 2 * once[k], rtol=1e-13, atol=0, err_msg=k)


def test_activation_bytes_count_a_slice_as_a_slice():
    """Ids sliced from a big array are a view of it; only the slice is kept by the forward."""
    model = EncoderDecoder(config(dtype="float64"))
    big = np.random.default_rng(0).integers(4, 11, size=(10_000, 5))
    _, cache_view = model.forward(big[:2], big[:2, :4])
    _, cache_copy = model.forward(big[:2].copy(), big[:2, :4].copy())
    assert model.activation_bytes(cache_view) == model.activation_bytes(cache_copy)


def test_decode_names_a_bad_encoder_output():
    model = EncoderDecoder(config())
    with pytest.raises(ValueError, match=rf"^H_enc: expected shape \(\*, \*, {D}\) .*the encoder output"):
        model.decode(np.array([[1, 5]]), np.zeros((1, 3, 7), np.float32), None)
