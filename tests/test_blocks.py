"""Tests for minitf/blocks.py: the encoder block and the decoder block, pre-LN and post-LN.

Every input and parameter gradient is checked against float64 finite differences (all
entries: the shapes are tiny), with masks in place, GELU (smooth, unlike ReLU), and random
LayerNorm gammas/betas and attention biases.  Then the structure: a pre-LN block whose
branches output zero is the identity, a post-LN one is its LayerNorms; the causal mask and
the source padding mask really cut the paths they should.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.blocks import DecoderBlock, EncoderBlock
from minitf.gradcheck import randomize_norms_and_biases
from minitf.layers import Dropout
from minitf.masks import causal_mask, key_padding_mask
from minitf.module import Module

B, S, T, D, H, F = 2, 5, 4, 8, 2, 12
SRC_IDS = np.array([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])  # row 1: two padded source positions
SRC_MASK = key_padding_mask(SRC_IDS, pad_id=0, dtype=np.float64)  # (B, 1, 1, S)
CAUSAL = causal_mask(T, dtype=np.float64)  # (T, T)




def encoder_block(norm_first: bool, dropout: float = 0.0, seed: int = 0) -> EncoderBlock:
    return randomize_norms_and_biases(EncoderBlock(D, H, F, dropout, "gelu", norm_first, rng=np.random.default_rng(seed),
                                  dtype=np.float64), seed)


def decoder_block(norm_first: bool, cross_attention: bool = True, dropout: float = 0.0,
                  seed: int = 0) -> DecoderBlock:
    return randomize_norms_and_biases(DecoderBlock(D, H, F, dropout, "gelu", norm_first, cross_attention=cross_attention,
                                  rng=np.random.default_rng(seed), dtype=np.float64), seed)


def assert_key_bias_gradients_vanish(block: Module) -> list[str]:
    """dL/db_k is exactly zero in theory (b_k shifts a whole row of scores by q . b_k, which the
    softmax ignores); the analytic value must be rounding noise only.  Returns the report keys
    to leave out of the relative check, which would compare noise with noise."""
    keys = [name for name in block.parameters() if name.endswith(".b_k")]
    for name in keys:
        assert np.max(np.abs(block.gradients()[name])) < 1e-12, name
    return [f"param:{name}" for name in keys]


# ---- gradient checks ---------------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_encoder_block_gradients(norm_first, rng, assert_grads_ok):
    from minitf.gradcheck import check_layer

    block = encoder_block(norm_first)
    x = rng.standard_normal((B, S, D))
    report = check_layer(block, [x], forward_kwargs={"src_mask": SRC_MASK}, max_entries=None)
    assert len(report) == 1 + len(block.parameters())
    assert_grads_ok(report, ignore=assert_key_bias_gradients_vanish(block))


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_decoder_block_gradients(norm_first, rng, assert_grads_ok):
    """Both inputs: the decoder stream x and the encoder output h_enc (through cross-attention)."""
    from minitf.gradcheck import check_layer

    block = decoder_block(norm_first)
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    report = check_layer(block, [x, h_enc], forward_kwargs={"self_mask": CAUSAL, "cross_mask": SRC_MASK},
                         max_entries=None)
    assert {"input0", "input1", "param:cross_attn.W_k"} <= set(report)
    assert_grads_ok(report, ignore=assert_key_bias_gradients_vanish(block))


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_decoder_block_without_cross_attention_gradients(norm_first, rng, assert_grads_ok):
    from minitf.gradcheck import check_layer

    block = decoder_block(norm_first, cross_attention=False)
    x = rng.standard_normal((B, T, D))
    y, cache = block.forward(x, None, CAUSAL)
    assert cache.cross_attn is None
    # h_enc = None: backward still returns (dx, None), one entry per input
    report = check_layer(block, [x, None], forward_kwargs={"self_mask": CAUSAL}, max_entries=None)
    assert "input0" in report and "input1" not in report
    assert_grads_ok(report, ignore=assert_key_bias_gradients_vanish(block))


class Reseeded(Module):
    """Runs ``block`` with every Dropout re-seeded before each forward, so that repeated
    forwards draw the same masks and finite differences see one fixed function."""

    def __init__(self, block: Module, seed: int):
        super().__init__(np.float64)
        self.block, self.seed = block, seed

    def forward(self, *inputs, **kwargs):
        for _, m in self.block.named_modules():
            if isinstance(m, Dropout):
                m.rng = np.random.default_rng(self.seed)
        return self.block.forward(*inputs, **kwargs)

    def backward(self, dy, cache):
        return self.block.backward(dy, cache)


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_blocks_with_dropout_gradients(norm_first, rng, assert_grads_ok):
    """With dropout on, backward must push the gradient through the same masks the forward drew."""
    from minitf.gradcheck import check_layer

    enc = Reseeded(encoder_block(norm_first, dropout=0.3), seed=4)
    x = rng.standard_normal((B, S, D))
    y, cache = enc.forward(x, SRC_MASK)
    assert cache.ff.drop is not None and np.any(cache.ff.drop == 0)  # something was dropped
    report = check_layer(enc, [x], forward_kwargs={"src_mask": SRC_MASK}, max_entries=None)
    assert_grads_ok(report, ignore=assert_key_bias_gradients_vanish(enc))

    dec = Reseeded(decoder_block(norm_first, dropout=0.3), seed=5)
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    report = check_layer(dec, [x, h_enc], forward_kwargs={"self_mask": CAUSAL, "cross_mask": SRC_MASK},
                         max_entries=None)
    assert_grads_ok(report, ignore=assert_key_bias_gradients_vanish(dec))


# ---- structure -----------------------------------------------------------------------------------
def silence_branches(block: Module) -> None:
    """Zero the last linear map of every branch: each sub-layer's f(h) is then exactly 0."""
    for name, p in block.parameters().items():
        if name.endswith((".W_o", ".b_o", "ff.linear2.W", "ff.linear2.b")):
            p[...] = 0.0


def test_pre_ln_block_with_silent_branches_is_the_identity(rng):
    """Pre-LN keeps the residual stream un-normalised: y = x + f(norm(x)) = x when f = 0."""
    x = rng.standard_normal((B, T, D))
    enc = encoder_block(norm_first=True)
    dec = decoder_block(norm_first=True)
    silence_branches(enc)
    silence_branches(dec)
    np.testing.assert_array_equal(enc.forward(x, None)[0], x)
    np.testing.assert_array_equal(dec.forward(x, rng.standard_normal((B, S, D)), CAUSAL, SRC_MASK)[0], x)


def test_post_ln_block_with_silent_branches_is_its_layernorms(rng):
    """Post-LN normalises after every residual add: y = norm(x + f(x)) = norm(x) when f = 0."""
    x = rng.standard_normal((B, T, D))
    enc = encoder_block(norm_first=False)
    silence_branches(enc)
    expected = enc.norm2.forward(enc.norm1.forward(x)[0])[0]
    np.testing.assert_allclose(enc.forward(x, None)[0], expected, rtol=1e-14, atol=1e-14)
    dec = decoder_block(norm_first=False)
    silence_branches(dec)
    expected = dec.norm3.forward(dec.norm2.forward(dec.norm1.forward(x)[0])[0])[0]
    np.testing.assert_allclose(dec.forward(x, rng.standard_normal((B, S, D)), CAUSAL, SRC_MASK)[0], expected,
                               rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_decoder_block_is_causal(norm_first, rng):
    block = decoder_block(norm_first)
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    y, _ = block.forward(x, h_enc, CAUSAL, SRC_MASK)
    x2 = x.copy()
    x2[:, 2:] += rng.standard_normal((B, T - 2, D))  # change the future of position 1
    y2, _ = block.forward(x2, h_enc, CAUSAL, SRC_MASK)
    np.testing.assert_array_equal(y2[:, :2], y[:, :2])
    assert not np.allclose(y2[:, 2:], y[:, 2:])
    y3, _ = block.forward(x2, h_enc, None, SRC_MASK)  # without the mask the past sees the future
    assert not np.allclose(y3[:, :2], y[:, :2])


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre_ln", "post_ln"])
def test_padded_source_positions_are_invisible(norm_first, rng):
    """Through cross-attention (decoder) and self-attention (encoder), padded source positions
    change no real output, and get exactly zero gradient back."""
    pad = SRC_IDS == 0  # (B, S)
    dec = decoder_block(norm_first)
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    y, cache = dec.forward(x, h_enc, CAUSAL, SRC_MASK)
    h2 = h_enc.copy()
    h2[pad] = 100.0 * rng.standard_normal((int(pad.sum()), D))
    np.testing.assert_array_equal(dec.forward(x, h2, CAUSAL, SRC_MASK)[0], y)
    _, dh_enc = dec.backward(rng.standard_normal((B, T, D)), cache)
    assert np.all(dh_enc[pad] == 0.0) and np.all(np.abs(dh_enc[~pad]).sum(axis=-1) > 0)

    enc = encoder_block(norm_first)
    x = rng.standard_normal((B, S, D))
    y, cache = enc.forward(x, SRC_MASK)
    x2 = x.copy()
    x2[pad] = 100.0 * rng.standard_normal((int(pad.sum()), D))
    np.testing.assert_array_equal(enc.forward(x2, SRC_MASK)[0][~pad], y[~pad])
    G = rng.standard_normal((B, S, D))
    G[pad] = 0.0  # no loss on padded positions...
    dx = enc.backward(G, cache)
    assert np.all(dx[pad] == 0.0)  # ...so nothing flows back into them


def test_backward_accumulates_into_grads(rng):
    block = decoder_block(norm_first=True)
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    G = rng.standard_normal((B, T, D))
    block.zero_grad()
    _, cache = block.forward(x, h_enc, CAUSAL, SRC_MASK)
    block.backward(G, cache)
    once = {k: g.copy() for k, g in block.gradients().items()}
    _, cache = block.forward(x, h_enc, CAUSAL, SRC_MASK)
    block.backward(G, cache)
    for name, g in block.gradients().items():
        np.testing.assert_allclose(g, 2 * once[name], rtol=1e-15, atol=0, err_msg=name)


def test_block_parameter_names():
    enc = EncoderBlock(D, H, F, rng=np.random.default_rng(0))
    attn = [f"self_attn.{p}" for p in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")]
    ff = ["ff.linear1.W", "ff.linear1.b", "ff.linear2.W", "ff.linear2.b"]
    norms = lambda ks: [f"norm{k}.{p}" for k in ks for p in ("gamma", "beta")]  # noqa: E731
    assert list(enc.parameters()) == attn + ff + norms((1, 2))
    dec = DecoderBlock(D, H, F, rng=np.random.default_rng(0))
    cross = [n.replace("self_attn", "cross_attn") for n in attn]
    assert list(dec.parameters()) == attn + cross + ff + norms((1, 2, 3))


def test_decoder_block_without_cross_attention_has_no_cross_attention_parameters():
    """A decoder-only block has two sub-layers, so two LayerNorms (norm1 before/after self-attention,
    norm3 around the feed-forward), and no parameter that the forward never uses."""
    block = DecoderBlock(D, H, F, cross_attention=False, rng=np.random.default_rng(0))
    assert not hasattr(block, "cross_attn")
    names = set(block.parameters())
    assert not any(n.startswith("cross_attn.") for n in names)
    assert {n.split(".")[0] for n in names if n.startswith("norm")} == {"norm1", "norm3"}


def test_blocks_reject_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match="n_heads"):
        EncoderBlock(10, 3, F, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_heads"):
        DecoderBlock(10, 4, F, rng=np.random.default_rng(0))


def test_a_decoder_block_with_cross_attention_needs_h_enc(rng):
    block = DecoderBlock(D, H, F, rng=rng, dtype=np.float64)
    with pytest.raises(ValueError, match=r"^h_enc: expected the encoder output \(B, S, d_model\) .*got None"):
        block.forward(np.zeros((B, T, D)), None)
