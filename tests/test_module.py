"""Tests for minitf/module.py: parameters / gradients bookkeeping, accumulation, tied
weights, dtype, train / eval."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import MultiHeadAttention
from minitf.gradcheck import check_layer
from minitf.layers import Dropout, Embedding, FeedForward, LayerNorm, Linear, PositionalEncoding
from minitf.module import Module, check_dtype

B, T, D, V = 2, 3, 8, 10


class TinyNet(Module):
    """An own parameter, a sub-module, a list of sub-modules and a tied weight:
    ``layers.1`` shares ``W`` (and its gradient buffer) with ``layers.0``."""

    def __init__(self, rng, dtype=np.float64):
        super().__init__(dtype)
        self.add_param("scale", rng.standard_normal(D))
        self.emb = Embedding(V, D, rng=rng, dtype=dtype)
        self.layers = [Linear(D, D, rng=rng, dtype=dtype), Linear(D, D, rng=rng, dtype=dtype)]
        self.norm = LayerNorm(D, dtype=dtype)
        self.layers[1].params["W"] = self.layers[0].params["W"]  # tie the weight ...
        self.layers[1].grads["W"] = self.layers[0].grads["W"]  # ... and its gradient buffer

    def forward(self, ids):
        x, c_emb = self.emb.forward(ids)
        x = x * self.params["scale"]
        h0, c0 = self.layers[0].forward(x)
        h1, c1 = self.layers[1].forward(h0)
        y, c_norm = self.norm.forward(h1)
        return y, (c_emb, x, c0, c1, c_norm)

    def backward(self, dy, cache):
        c_emb, x, c0, c1, c_norm = cache
        dh1 = self.norm.backward(dy, c_norm)
        dh0 = self.layers[1].backward(dh1, c1)
        dx = self.layers[0].backward(dh0, c0)
        self.grads["scale"] += (dx * self.emb.forward(c_emb.ids)[0]).reshape(-1, D).sum(axis=0)
        self.emb.backward(dx * self.params["scale"], c_emb)


NAMES = ["scale", "emb.W_E", "layers.0.W", "layers.0.b", "layers.1.b", "norm.gamma", "norm.beta"]


def test_parameter_names_are_stable_and_tied_weights_listed_once(rng):
    net = TinyNet(rng)
    assert list(net.parameters()) == NAMES  # owner first, then sub-modules in assignment order
    assert list(net.gradients()) == NAMES  # exactly the same keys, same order
    assert list(TinyNet(np.random.default_rng(99)).parameters()) == NAMES  # independent of the seed
    assert net.num_parameters() == D + V * D + D * D + D + D + D + D  # tied W counted once
    for name, p in net.parameters().items():
        assert net.gradients()[name].shape == p.shape and net.gradients()[name].dtype == p.dtype


def test_parameters_are_the_arrays_themselves(rng):
    net = TinyNet(rng)
    params = net.parameters()
    assert params["layers.0.W"] is net.layers[0].params["W"] is net.layers[1].params["W"]
    assert net.gradients()["norm.gamma"] is net.norm.grads["gamma"]
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    y0, _ = net.forward(ids)
    params["norm.beta"] += 1.0  # an optimizer updates in place through the flat view
    y1, _ = net.forward(ids)
    np.testing.assert_allclose(y1, y0 + 1.0, rtol=1e-14)


def test_tied_weight_gradient_is_the_sum_of_both_uses(rng):
    net = TinyNet(rng)
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    dy = rng.standard_normal((B, T, D))
    net.backward(dy, net.forward(ids)[1])
    tied = net.gradients()["layers.0.W"].copy()

    # the same computation with two independent copies of W
    lin0, lin1 = Linear(D, D, rng=rng, dtype=np.float64), Linear(D, D, rng=rng, dtype=np.float64)
    for lin, src in ((lin0, net.layers[0]), (lin1, net.layers[1])):
        lin.params["W"][:] = src.params["W"]
        lin.params["b"][:] = src.params["b"]
    x = net.emb.forward(ids)[0] * net.params["scale"]
    h0, c0 = lin0.forward(x)
    h1, c1 = lin1.forward(h0)
    dh1 = net.norm.backward(dy, net.norm.forward(h1)[1])
    lin0.backward(lin1.backward(dh1, c1), c0)
    np.testing.assert_allclose(tied, lin0.grads["W"] + lin1.grads["W"], rtol=1e-12)
    assert np.abs(lin0.grads["W"]).max() > 0 and np.abs(lin1.grads["W"]).max() > 0


def test_tied_net_backward_matches_finite_differences(rng, assert_grads_ok):
    """Perturbing the shared W moves both of its uses; the one gradient buffer must hold both."""
    net = TinyNet(rng)
    net.norm.params["gamma"][:] = rng.uniform(0.5, 1.5, D)
    report = check_layer(net, [np.array([[1, 2, 3], [4, 2, 9]])], max_entries=None)
    assert set(report) == {f"param:{n}" for n in NAMES}
    assert_grads_ok(report)


def _run_layer(name, rng):
    """(layer, run) where run() does one forward + backward with a fixed upstream gradient."""
    f64 = np.float64
    x = rng.standard_normal((B, T, D))
    dy = rng.standard_normal((B, T, D))
    if name == "linear":
        layer = Linear(D, D, rng=rng, dtype=f64)
    elif name == "layernorm":
        layer = LayerNorm(D, dtype=f64)
    elif name == "embedding":
        layer, x = Embedding(V, D, rng=rng, dtype=f64), np.array([[1, 1, 2], [3, 1, 9]])
    elif name == "feedforward":
        layer = FeedForward(D, 16, activation="gelu", rng=rng, dtype=f64)
    elif name == "positional":
        layer = PositionalEncoding(5, D, kind="learned", rng=rng, dtype=f64)
    elif name == "net":
        layer, x = TinyNet(rng), np.array([[1, 1, 2], [3, 1, 9]])
    else:
        mha = MultiHeadAttention(D, 2, rng=rng, dtype=f64)
        layer = mha

        def run():
            mha.backward(dy, mha.forward(x, x)[1])
        return layer, run

    def run():
        layer.backward(dy, layer.forward(x)[1])
    return layer, run


@pytest.mark.parametrize("name", ["linear", "layernorm", "embedding", "feedforward", "positional",
                                  "mha", "net"])
def test_backward_accumulates_and_zero_grad_resets(rng, name):
    layer, run = _run_layer(name, rng)
    buffers = {k: g for k, g in layer.gradients().items()}
    run()
    once = {k: g.copy() for k, g in layer.gradients().items()}
    assert any(np.abs(g).max() > 0 for g in once.values())
    run()
    for k, g in layer.gradients().items():
        np.testing.assert_allclose(g, 2 * once[k], rtol=1e-13, atol=1e-300, err_msg=k)
    layer.zero_grad()
    for k, g in layer.gradients().items():
        assert g is buffers[k], f"zero_grad must reset {k} in place, not replace it"
        assert np.all(g == 0), k


def test_add_param_casts_to_the_module_dtype_and_zeros_the_gradient():
    m = Module(np.float32)
    w = m.add_param("w", np.arange(6, dtype=np.float64).reshape(2, 3).T)  # non-contiguous float64
    assert w.dtype == np.float32 and w.flags.c_contiguous and m.params["w"] is w
    assert m.grads["w"].dtype == np.float32 and m.grads["w"].shape == (3, 2)
    assert np.all(m.grads["w"] == 0)


@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.complex128])
def test_module_rejects_bad_dtype(rng, dtype):
    name = np.dtype(dtype).name
    with pytest.raises(TypeError, match=rf"^dtype: expected float32 or float64, got {name}$"):
        Module(dtype)
    with pytest.raises(TypeError, match=rf"^dtype: expected float32 or float64, got {name}$"):
        Linear(D, D, rng=rng, dtype=dtype)


def test_check_dtype_accepts_float32_and_float64():
    assert check_dtype("float32") == np.float32
    assert check_dtype(np.float64) == np.dtype(np.float64)
    for layer in (Linear(D, D, rng=np.random.default_rng(0)), LayerNorm(D)):
        assert all(p.dtype == np.float32 for p in layer.parameters().values())  # float32 by default


def test_train_and_eval_reach_every_submodule(rng):
    ffn = FeedForward(D, 16, dropout=0.5, rng=rng)
    assert ffn.training and ffn.dropout.training
    assert ffn.eval() is ffn
    assert not any(m.training for _, m in ffn.named_modules())
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    np.testing.assert_array_equal(ffn.forward(x)[0], ffn.forward(x)[0])  # no dropout: deterministic
    ffn.train()
    assert all(m.training for _, m in ffn.named_modules())
    assert [n for n, _ in ffn.named_modules()] == ["", "linear1", "dropout", "linear2"]


def test_dropout_has_no_parameters(rng):
    assert Dropout(0.1, rng=rng).parameters() == {} and Dropout(0.1, rng=rng).num_parameters() == 0
