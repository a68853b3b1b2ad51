"""Parity of the whole encoder-decoder with PyTorch autograd, through minitf/torch_bridge.py.

In float64, on a padded batch (padding in the source *and* the target, labels -100 on
padded target positions): the logits, the loss (``torch.nn.functional.cross_entropy`` with
``ignore_index=-100``) and the gradient of *every* parameter must agree to relative error
1e-8, for pre-LN and post-LN, tied embeddings, learned positions and GELU.  Every position
is compared: with nested tensors and the fused kernels switched off, torch's values at
padded positions are as well defined as minitf's.  Skipped when torch is not installed.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minitf.config import ModelConfig  # noqa: E402
from minitf.data import IGNORE_INDEX, make_batch  # noqa: E402
from minitf.gradcheck import randomize_norms_and_biases, rel_error  # noqa: E402
from minitf.loss import cross_entropy  # noqa: E402
from minitf.models import EncoderDecoder  # noqa: E402
from minitf.torch_bridge import (TorchEncoderDecoder, Transform, grads_from_torch, load_from_torch,  # noqa: E402
                                 to_torch, torch_name)

TOL = 1e-8
PAD, BOS = 0, 1
SRC_LENGTHS, TGT_LENGTHS = (7, 5, 3), (6, 4, 2)  # B = 3, S = 7, T = 6


def tiny_config(**overrides) -> ModelConfig:
    base = dict(src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=2,
                n_decoder_layers=2, max_len=10, dtype="float64", pad_id=PAD, seed=3)
    base.update(overrides)
    return ModelConfig(**base)


def randomised(config: ModelConfig, seed: int = 0) -> EncoderDecoder:
    """A model whose LayerNorm gammas/betas and attention biases are random, not 1 and 0,
    so that every path through them carries a distinct signal."""
    return randomize_norms_and_biases(EncoderDecoder(config), seed)


def padded_batch(config: ModelConfig, seed: int = 1):
    rng = np.random.default_rng(seed)
    first = 3  # real tokens avoid <pad>, <bos> and <eos>
    sources = [rng.integers(first, config.src_vocab_size, n).tolist() for n in SRC_LENGTHS]
    targets = [rng.integers(first, config.tgt_vocab_size, n).tolist() for n in TGT_LENGTHS]
    return make_batch(sources, targets, pad_id=PAD, start_id=BOS)


def run_both(model: EncoderDecoder, batch):
    """minitf forward/backward and torch forward/autograd on the same batch."""
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    ours = {k: g.copy() for k, g in model.gradients().items()}

    tmodel = to_torch(model)
    tlogits = tmodel(torch.from_numpy(batch.input_ids), torch.from_numpy(batch.decoder_input_ids))
    V = tlogits.shape[-1]
    tloss = torch.nn.functional.cross_entropy(tlogits.reshape(-1, V), torch.from_numpy(batch.labels).reshape(-1),
                                              ignore_index=IGNORE_INDEX)
    tloss.backward()
    return (logits, loss, ours), (tlogits.detach().numpy(), tloss.item(), grads_from_torch(tmodel, model))


CASES = {
    "pre_ln": {},
    "post_ln": dict(norm_first=False),
    "tied": dict(src_vocab_size=13, share_embeddings=True, tie_output=True),
    "tie_output_only": dict(tie_output=True, norm_first=False),
    "learned_positions": dict(positional="learned"),
    "gelu": dict(activation="gelu"),
    "gelu_tanh_unscaled": dict(activation="gelu_tanh", scale_embeddings=False, layer_norm_eps=1e-3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_logits_loss_and_every_gradient_match_torch(case):
    config = tiny_config(**CASES[case])
    model = randomised(config)
    batch = padded_batch(config)
    assert (batch.input_ids == PAD).any() and (batch.labels == IGNORE_INDEX).any()
    (logits, loss, ours), (tlogits, tloss, theirs) = run_both(model, batch)

    assert rel_error(logits, tlogits) <= TOL
    assert rel_error(loss, tloss) <= TOL
    assert set(theirs) == set(ours) == set(model.parameters())
    for name in ours:
        if name.endswith(".b_k"):
            # dL/db_k is exactly zero in theory: b_k adds q . b_k to a whole row of scores, which
            # the softmax ignores.  Both sides hold rounding noise, so compare absolutely.
            assert np.max(np.abs(ours[name])) < 1e-12 and np.max(np.abs(theirs[name])) < 1e-12, name
            continue
        assert np.any(ours[name] != 0), f"{name}: an all-zero gradient compares trivially"
        err = rel_error(ours[name], theirs[name])
        assert err <= TOL, f"{name}: relative error {err:.3e} > {TOL:.0e}"


def test_torch_module_keeps_padded_source_positions_out():
    """The parity above is only as strong as its padding: in the torch module too, the
    embedding row that only padded source positions read must not reach the logits."""
    config = tiny_config()
    model = randomised(config)
    batch = padded_batch(config)
    tmodel = to_torch(model)
    base = tmodel(batch.input_ids, batch.decoder_input_ids).detach().numpy()
    with torch.no_grad():
        tmodel.src_embed.weight[PAD] += 5.0  # only padded source positions read this row
    moved = tmodel(batch.input_ids, batch.decoder_input_ids).detach().numpy()
    np.testing.assert_array_equal(moved, base)


def test_eval_mode_with_dropout_matches_without_grad():
    """Dropout configured but switched off (eval): the torch module follows the model's mode,
    and its no-grad inference path (where torch would use fused kernels) gives the same logits."""
    config = tiny_config(dropout=0.3)
    model = randomised(config).eval()
    batch = padded_batch(config)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    tmodel = to_torch(model)
    assert not tmodel.training
    with torch.no_grad():
        tlogits = tmodel(batch.input_ids, batch.decoder_input_ids).numpy()
    assert rel_error(logits, tlogits) <= TOL
    assert torch.backends.mha.get_fastpath_enabled()  # the switch was restored


def test_the_fused_fast_path_is_off_while_the_transformer_runs():
    """torch's fused inference kernels take other numerical routes than the reference layers;
    the bridge turns them off around the transformer call (and only there)."""
    tmodel = to_torch(randomised(tiny_config()).eval())
    seen = []
    hook = tmodel.transformer.register_forward_pre_hook(
        lambda module, args: seen.append(torch.backends.mha.get_fastpath_enabled()))
    try:
        batch = padded_batch(tiny_config())
        with torch.no_grad():
            tmodel(batch.input_ids, batch.decoder_input_ids)
    finally:
        hook.remove()
    assert seen == [False] and torch.backends.mha.get_fastpath_enabled()


def test_float32_model_gives_float32_module_close_to_float64():
    config = tiny_config(dtype="float32")
    model = EncoderDecoder(config)
    tmodel = to_torch(model)
    assert all(p.dtype == torch.float32 for p in tmodel.parameters())
    batch = padded_batch(config)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    tlogits = tmodel(batch.input_ids, batch.decoder_input_ids).detach().numpy()
    assert logits.dtype == tlogits.dtype == np.float32
    np.testing.assert_allclose(logits, tlogits, rtol=1e-4, atol=1e-5)


# ---- the name map ------------------------------------------------------------------------------
def test_torch_name_examples():
    assert torch_name("decoder_layers.1.cross_attn.W_k") == (
        "transformer.decoder.layers.1.multihead_attn.in_proj_weight", Transform(chunk=1, transpose=True))
    assert torch_name("encoder_layers.0.self_attn.b_v") == (
        "transformer.encoder.layers.0.self_attn.in_proj_bias", Transform(chunk=2, transpose=False))
    assert torch_name("encoder_layers.1.ff.linear2.W") == (
        "transformer.encoder.layers.1.linear2.weight", Transform(transpose=True))
    assert torch_name("decoder_layers.0.norm3.gamma") == ("transformer.decoder.layers.0.norm3.weight", Transform())
    assert torch_name("W_U") == ("head.weight", Transform(transpose=True))
    assert torch_name("encoder_norm.beta") == ("transformer.encoder.norm.bias", Transform())


@pytest.mark.parametrize("bad", ["encoder_layers.0.cross_attn.W_q", "encoder_layers.0.norm3.gamma",
                                 "decoder_layers.0.ff.linear3.W", "W_E", "decoder_layers.x.norm1.gamma"])
def test_torch_name_rejects_unknown_names(bad):
    with pytest.raises(KeyError, match="minitf_name"):
        torch_name(bad)


@pytest.mark.parametrize("case", ["pre_ln", "tied", "tie_output_only", "learned_positions"])
def test_name_map_covers_both_sides_exactly(case):
    """Every minitf parameter lands in an existing torch parameter of the right size, and the
    minitf parameters together fill every torch parameter: the same number of scalars."""
    model = EncoderDecoder(tiny_config(**CASES[case]))
    tmodel = to_torch(model)
    tnames = dict(tmodel.named_parameters())
    hit = {torch_name(n)[0] for n in model.parameters()}
    assert hit == set(tnames)
    assert sum(p.numel() for p in tmodel.parameters()) == model.num_parameters()


def test_tied_module_shares_tensors():
    tmodel = to_torch(EncoderDecoder(tiny_config(**CASES["tied"])))
    assert tmodel.tgt_embed is tmodel.src_embed
    assert tmodel.head.weight is tmodel.src_embed.weight


def test_sinusoidal_positions_are_a_buffer_equal_to_minitf_table():
    model = EncoderDecoder(tiny_config())
    tmodel = to_torch(model)
    assert "src_pos" not in dict(tmodel.named_parameters())
    np.testing.assert_array_equal(tmodel.src_pos.numpy(), model.src_pos.table)
    np.testing.assert_array_equal(tmodel.tgt_pos.numpy(), model.tgt_pos.table)


# ---- round trips -------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["pre_ln", "tied", "learned_positions"])
def test_to_torch_then_load_from_torch_gives_identical_weights(case):
    config = tiny_config(**CASES[case])
    source = randomised(config, seed=5)
    target = EncoderDecoder(config.replace(seed=99))
    before = {k: v for k, v in target.parameters().items()}
    assert any(not np.array_equal(v, source.parameters()[k]) for k, v in before.items())
    load_from_torch(to_torch(source), target)
    for name, a in source.parameters().items():
        np.testing.assert_array_equal(target.parameters()[name], a, err_msg=name)
        assert target.parameters()[name] is before[name]  # copied in place
    if config.tie_output and config.share_embeddings:
        assert target.tgt_embed is target.src_embed


def test_load_from_torch_carries_a_torch_update_back():
    """Change the torch weights (one plain SGD step on the torch loss) and load them back:
    minitf's logits must then equal torch's on the updated weights."""
    config = tiny_config(positional="learned")
    model = randomised(config)
    batch = padded_batch(config)
    tmodel = to_torch(model)
    tlogits = tmodel(batch.input_ids, batch.decoder_input_ids)
    V = tlogits.shape[-1]
    torch.nn.functional.cross_entropy(tlogits.reshape(-1, V), torch.from_numpy(batch.labels).reshape(-1)).backward()
    with torch.no_grad():
        for p in tmodel.parameters():
            p -= 0.5 * p.grad
    load_from_torch(tmodel, model)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    assert rel_error(logits, tmodel(batch.input_ids, batch.decoder_input_ids).detach().numpy()) <= TOL


def test_grads_from_torch_gives_zeros_before_any_backward():
    model = EncoderDecoder(tiny_config())
    grads = grads_from_torch(to_torch(model), model)
    assert set(grads) == set(model.parameters())
    assert all(g.shape == model.parameters()[k].shape and not g.any() for k, g in grads.items())


def test_bridge_rejects_wrong_types():
    model = EncoderDecoder(tiny_config())
    with pytest.raises(TypeError, match="model"):
        to_torch(object())
    with pytest.raises(TypeError, match="torch_module"):
        load_from_torch(object(), model)
    with pytest.raises(TypeError, match="model"):
        grads_from_torch(TorchEncoderDecoder(model.config), object())


def test_without_torch_the_import_error_says_how_to_install(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # what an absent package looks like to import
    monkeypatch.delitem(sys.modules, "minitf.torch_bridge")
    with pytest.raises(ImportError, match=r"PyTorch is not installed; pip install 'minitf\[torch\]'"):
        importlib.import_module("minitf.torch_bridge")


def test_to_torch_refuses_an_empty_stack():
    model = EncoderDecoder(ModelConfig(src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=12,
                                       n_encoder_layers=0, n_decoder_layers=1, dtype="float64"))
    with pytest.raises(ValueError, match=r"^model: expected at least one encoder and one decoder layer"):
        to_torch(model)
