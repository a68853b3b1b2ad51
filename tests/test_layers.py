"""Tests for minitf/layers: every backward against float64 centred finite differences,
the forward maths on hand values, and the error messages for bad input.

Shapes are kept tiny (B=2, T=3..5, D=8) so the finite differences run in well under a
second; ``max_entries=None`` checks *every* entry of every input and parameter.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.gradcheck import check_layer, numerical_gradient, rel_error
from minitf.layers import (ACTIVATIONS, Dropout, Embedding, FeedForward, LayerNorm, Linear,
                           PositionalEncoding, gelu_backward, gelu_forward, gelu_tanh_backward,
                           gelu_tanh_forward, get_activation, log_softmax,
                           relu_backward, relu_forward, sinusoidal_table, softmax, softmax_backward)
from minitf.layers.reductions import mean, scatter_add_rows, sum_last, sum_rows
from minitf.module import Module

B, T, D, F, V = 2, 4, 8, 12, 10


# ---- Linear ---------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
def test_linear_backward_matches_finite_differences(rng, assert_grads_ok, bias):
    layer = Linear(D, 5, bias=bias, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, T, D))
    report = check_layer(layer, [x], max_entries=None)
    assert set(report) == {"input0", "param:W"} | ({"param:b"} if bias else set())
    assert_grads_ok(report)


def test_linear_forward_is_x_W_plus_b(rng):
    layer = Linear(3, 2, rng=rng, dtype=np.float64)
    x = rng.standard_normal((4, 3))
    y, _ = layer.forward(x)
    np.testing.assert_allclose(y, x @ layer.params["W"] + layer.params["b"], rtol=0, atol=1e-15)
    assert layer.params["W"].shape == (3, 2)  # (D_in, D_out): the x @ W layout


def test_linear_rejects_wrong_last_dim(rng):
    layer = Linear(D, 5, rng=rng)
    with pytest.raises(ValueError, match=r"^x: expected shape \(\*, \*, 8\).*D_in=8.*got \(2, 3, 7\)"):
        layer.forward(np.zeros((2, 3, 7), np.float32))


# ---- Embedding ------------------------------------------------------------------------
def test_embedding_backward_matches_finite_differences(rng, assert_grads_ok):
    emb = Embedding(V, D, rng=rng, dtype=np.float64)
    ids = np.array([[1, 3, 3, 9], [0, 1, 7, 3]])  # repeated ids: gradients must add up
    report = check_layer(emb, [ids], max_entries=None)
    assert set(report) == {"param:W_E"}  # integer ids have no gradient
    assert_grads_ok(report)


def test_embedding_padding_row_gets_no_gradient(rng, assert_grads_ok):
    pad = 0
    emb = Embedding(V, D, padding_idx=pad, rng=rng, dtype=np.float64)
    np.testing.assert_array_equal(emb.params["W_E"][pad], 0.0)  # the pad vector starts at zero
    ids = np.array([[pad, 3, 3, 9], [4, pad, pad, 3]])
    G = rng.standard_normal((B, T, D))

    x, cache = emb.forward(ids)
    assert emb.backward(G, cache) is None
    dW_E = emb.grads["W_E"]
    np.testing.assert_array_equal(dW_E[pad], 0.0)  # used three times, still no gradient

    # Every other row agrees with finite differences of f = sum(x * G).
    def f():
        return float(np.sum(emb.forward(ids)[0] * G))

    others = [idx for idx in np.ndindex(V, D) if idx[0] != pad]
    num = numerical_gradient(f, emb.params["W_E"], indices=others)
    assert_grads_ok({"param:W_E (rows != padding_idx)": rel_error(dW_E[1:], num[1:])})
    # and the rows hold exactly the scattered upstream gradient
    np.testing.assert_allclose(dW_E[3], G[0, 1] + G[0, 2] + G[1, 3], rtol=1e-14)


def test_embedding_rejects_out_of_range_and_float_ids(rng):
    emb = Embedding(V, D, rng=rng)
    with pytest.raises(ValueError, match=r"^ids: expected token ids in \[0, 10\), got 10"):
        emb.forward(np.array([[1, 10]]))
    with pytest.raises(ValueError, match=r"^ids: expected token ids in \[0, 10\), got -1"):
        emb.forward(np.array([[-1, 2]]))
    with pytest.raises(TypeError, match=r"^ids: expected an integer array.*got dtype float64"):
        emb.forward(np.array([[1.0, 2.0]]))


def test_embedding_rejects_bad_padding_idx(rng):
    with pytest.raises(ValueError, match=r"^padding_idx: expected an id in \[0, 10\), got 10"):
        Embedding(V, D, padding_idx=10, rng=rng)


# ---- LayerNorm ------------------------------------------------------------------------
def test_layernorm_backward_matches_finite_differences(rng, assert_grads_ok):
    ln = LayerNorm(D, dtype=np.float64)
    # random gamma / beta: with gamma = 1 and a uniform upstream the input check is vacuous
    ln.params["gamma"][:] = rng.uniform(0.5, 1.5, D) * rng.choice([-1.0, 1.0], D)
    ln.params["beta"][:] = rng.standard_normal(D)
    x = 3.0 * rng.standard_normal((B, T, D)) + 1.5
    assert_grads_ok(check_layer(ln, [x], max_entries=None))


def test_layernorm_forward_normalises(rng):
    ln = LayerNorm(D, dtype=np.float64)
    x = 5.0 * rng.standard_normal((B, T, D)) - 2.0
    y, _ = ln.forward(x)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    expected_var = x.var(axis=-1) / (x.var(axis=-1) + ln.eps)  # biased variance, eps inside the sqrt
    np.testing.assert_allclose(y.var(axis=-1), expected_var, rtol=1e-12)


def test_layernorm_rejects_wrong_last_dim():
    ln = LayerNorm(D)
    with pytest.raises(ValueError, match=r"^x: expected shape \(\*, \*, 8\).*d_model=8.*got \(2, 3, 6\)"):
        ln.forward(np.zeros((2, 3, 6), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 128), (2, 5, 96), (2, 3, 4, 33)])
def test_reductions_equal_numpy_sums(rng, dtype, shape):
    """sum_last, mean and sum_rows are BLAS products with constant vectors; they must
    compute NumPy's sums and means (to rounding), whatever the leading axes and n."""
    x = rng.standard_normal(shape).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for got, want in [(sum_last(x), x.sum(axis=-1, keepdims=True)),
                      (mean(x), x.mean(axis=-1, keepdims=True)),
                      (sum_rows(x.reshape(-1, shape[-1])), x.reshape(-1, shape[-1]).sum(axis=0))]:
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **tol)


def test_mean_of_integers_is_their_float_mean():
    x = np.array([[1, 2, 3, 4], [5, 5, 5, 6]])
    np.testing.assert_array_equal(mean(x), [[2.5], [5.25]])


def test_mean_is_exact_for_a_power_of_two(rng):
    """With n = 2^k, multiplying by 1/n is exact, so x @ (1/n) is the sum divided by n to the bit."""
    x = rng.standard_normal((4, 6, 128))
    np.testing.assert_array_equal(mean(x), sum_last(x) / 128)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ids_shape", [(0,), (6,), (3, 40)])
def test_scatter_add_rows_equals_np_add_at(rng, dtype, ids_shape):
    """scatter_add_rows sorts and sums runs; it must add what np.add.at adds (to rounding), with
    repeated ids adding up, into what the array already held, and leave unread rows alone."""
    A = rng.standard_normal((V, D)).astype(dtype)
    ids = rng.integers(0, V // 2, size=ids_shape)  # ids < V/2 only: the upper rows are never read
    rows = rng.standard_normal((*ids_shape, D)).astype(dtype)
    want = A.copy()
    np.add.at(want, ids, rows)
    got = A.copy()
    assert scatter_add_rows(got, ids, rows) is None  # in place
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_array_equal(got[V // 2:], A[V // 2:])


# ---- activations -----------------------------------------------------------------------
def _away_from_zero(rng, shape, gap=0.05):
    """Inputs with |x| >= gap, so ReLU's kink is never inside the finite-difference step."""
    x = rng.standard_normal(shape)
    return np.sign(x) * (np.abs(x) + gap)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_backward_matches_finite_differences(rng, assert_grads_ok, FunctionLayer, name):
    fwd, bwd = get_activation(name)
    # |x| >= 0.075 keeps ReLU's kink out of the stencil's reach (x +- 2h, h = 1e-3).
    # |x| <= 3: far in the negative tail GELU(x) ~ -1e-7 is itself computed with cancellation
    # (1 + tanh u, 1 + erf), so a difference quotient there measures rounding, not the backward.
    x = np.clip(1.5 * _away_from_zero(rng, (B, T, F)), -3.0, 3.0)
    assert_grads_ok(check_layer(FunctionLayer(fwd, bwd), [x], max_entries=None))


def test_activation_registry_maps_names_to_pairs():
    assert ACTIVATIONS["relu"] == (relu_forward, relu_backward)
    assert ACTIVATIONS["gelu"] == (gelu_forward, gelu_backward)
    assert ACTIVATIONS["gelu_tanh"] == (gelu_tanh_forward, gelu_tanh_backward)
    with pytest.raises(ValueError, match=r"^activation: expected one of .*'gelu'.*got 'swish'"):
        get_activation("swish")


def test_relu_forward_and_backward_values():
    x = np.array([-2.0, -0.5, 0.5, 3.0])
    y, cache = relu_forward(x)
    np.testing.assert_array_equal(y, [0.0, 0.0, 0.5, 3.0])
    np.testing.assert_array_equal(relu_backward(np.array([1.0, 2.0, 3.0, 4.0]), cache), [0, 0, 3.0, 4.0])


def test_gelu_forward_hand_values():
    x = np.array([-2.0, 0.0, 1.0, 3.0])
    exact = [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x]
    np.testing.assert_allclose(gelu_forward(x)[0], exact, rtol=1e-15, atol=0)
    assert gelu_forward(np.array([1.0]))[0][0] == pytest.approx(0.8413447460685429, rel=1e-15)
    assert gelu_tanh_forward(np.array([1.0]))[0][0] == pytest.approx(0.8411919906082768, rel=1e-15)
    # the tanh form approximates the exact one to ~1e-3 and keeps the dtype
    xs = np.linspace(-4, 4, 101, dtype=np.float32)
    assert gelu_forward(xs)[0].dtype == np.float32 and gelu_tanh_forward(xs)[0].dtype == np.float32
    assert np.max(np.abs(gelu_forward(xs)[0] - gelu_tanh_forward(xs)[0])) < 1e-3


# ---- softmax and log-softmax ------------------------------------------------------------
def test_softmax_backward_matches_finite_differences(rng, assert_grads_ok, FunctionLayer):
    layer = FunctionLayer(lambda z: (p := softmax(z), p), softmax_backward)
    assert_grads_ok(check_layer(layer, [3.0 * rng.standard_normal((B, T, 6))], max_entries=None))


def test_softmax_is_stable_for_huge_logits():
    z = np.array([[1000.0, 1001.0, 1002.0], [-1e9, 0.0, -1e9]])
    p = softmax(z)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(p[0], softmax(np.array([0.0, 1.0, 2.0])), rtol=1e-14)
    np.testing.assert_array_equal(p[1], [0.0, 1.0, 0.0])
    lp = log_softmax(z)
    assert np.all(np.isfinite(lp))
    np.testing.assert_allclose(np.exp(lp[0]), p[0], rtol=1e-14)


# ---- Dropout --------------------------------------------------------------------------
class FixedMaskDropout(Module):
    """Dropout whose mask is the same on every call: each forward builds a *fresh* layer
    from the same seed, so finite differences see one fixed function of x."""

    def __init__(self, p: float, seed: int):
        super().__init__(np.float64)
        self.p, self.seed = p, seed

    def _layer(self) -> Dropout:
        return Dropout(self.p, rng=np.random.default_rng(self.seed), dtype=np.float64)

    def forward(self, x):
        return self._layer().forward(x)

    def backward(self, dy, mask):
        return self._layer().backward(dy, mask)


def test_dropout_backward_matches_finite_differences(rng, assert_grads_ok):
    layer = FixedMaskDropout(0.4, seed=7)
    x = rng.standard_normal((B, T, F))
    _, mask = layer.forward(x)
    assert 0 < np.count_nonzero(mask) < mask.size  # something dropped, something kept
    assert_grads_ok(check_layer(layer, [x], max_entries=None))


def test_dropout_mask_is_inverted_and_seeded():
    p = 0.25
    x = np.ones((200, 500), np.float32)
    y, mask = Dropout(p, rng=np.random.default_rng(3)).forward(x)
    assert y.dtype == np.float32
    assert set(np.unique(mask).tolist()) == {0.0, np.float32(1.0 / (1.0 - p))}
    assert abs(np.mean(mask == 0) - p) < 0.01  # 100 000 draws: 4 sigma is 0.0055
    y2, _ = Dropout(p, rng=np.random.default_rng(3)).forward(x)
    np.testing.assert_array_equal(y, y2)  # same seed, same mask
    y3, _ = Dropout(p, rng=np.random.default_rng(4)).forward(x)
    assert not np.array_equal(y, y3)


def test_dropout_is_identity_in_eval_and_for_p_zero(rng):
    x = rng.standard_normal((B, T, F)).astype(np.float32)
    drop = Dropout(0.5, rng=rng).eval()
    y, mask = drop.forward(x)
    assert y is x and mask is None
    np.testing.assert_array_equal(drop.backward(x, mask), x)
    y, mask = Dropout(0.0, rng=rng).forward(x)
    assert y is x and mask is None


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_dropout_rejects_p_out_of_range(rng, p):
    with pytest.raises(ValueError, match=rf"^p: expected a finite number in \[0, 1\), got {p}$"):
        Dropout(p, rng=rng)


# ---- FeedForward ----------------------------------------------------------------------
class SeededFeedForward(Module):
    """FeedForward whose dropout rng is re-seeded before every forward: a fixed mask."""

    def __init__(self, ffn: FeedForward, seed: int):
        super().__init__(np.float64)
        self.ffn, self.seed = ffn, seed

    def forward(self, x):
        self.ffn.dropout.rng = np.random.default_rng(self.seed)
        return self.ffn.forward(x)

    def backward(self, dy, cache):
        return self.ffn.backward(dy, cache)


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_feedforward_backward_matches_finite_differences(rng, assert_grads_ok, activation, dropout):
    ffn = FeedForward(D, F, activation=activation, dropout=dropout, rng=rng, dtype=np.float64)
    layer = SeededFeedForward(ffn, seed=11)
    x = rng.standard_normal((B, T, D))
    # The finite-difference stencil reaches x +- 2h; a ReLU kink inside that reach breaks it.
    # Use a small h and make sure every pre-activation stays clear of the kink.
    h = 1e-4
    if activation == "relu":
        a = x @ ffn.linear1.params["W"] + ffn.linear1.params["b"]  # (B, T, F) pre-activation
        assert np.abs(a).min() > 10 * h, "a pre-activation sits on ReLU's kink: pick another seed"
    report = check_layer(layer, [x], max_entries=None, h=h)
    assert set(report) == {"input0", "param:ffn.linear1.W", "param:ffn.linear1.b",
                           "param:ffn.linear2.W", "param:ffn.linear2.b"}
    assert_grads_ok(report)


def test_feedforward_forward_composition(rng):
    ffn = FeedForward(D, F, activation="gelu", rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, T, D))
    p1, p2 = ffn.linear1.params, ffn.linear2.params
    a = x @ p1["W"] + p1["b"]
    expected = gelu_forward(a)[0] @ p2["W"] + p2["b"]
    np.testing.assert_allclose(ffn.forward(x)[0], expected, rtol=1e-13)
    assert list(ffn.parameters()) == ["linear1.W", "linear1.b", "linear2.W", "linear2.b"]
    assert ffn.parameters()["linear1.W"].shape == (D, F)


# ---- PositionalEncoding -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["learned", "sinusoidal"])
@pytest.mark.parametrize("offset", [0, 2])
def test_positional_backward_matches_finite_differences(rng, assert_grads_ok, kind, offset):
    pe = PositionalEncoding(8, D, kind=kind, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, T, D))
    report = check_layer(pe, [x], forward_kwargs={"offset": offset}, max_entries=None)
    assert set(report) == ({"input0", "param:W_pos"} if kind == "learned" else {"input0"})
    assert_grads_ok(report)


def test_learned_positional_gradient_lands_on_the_used_rows(rng):
    pe = PositionalEncoding(8, D, kind="learned", rng=rng, dtype=np.float64)
    dy = rng.standard_normal((B, 3, D))
    _, cache = pe.forward(np.zeros((B, 3, D)), offset=4)
    pe.backward(dy, cache)
    g = pe.grads["W_pos"]
    np.testing.assert_allclose(g[4:7], dy.sum(axis=0), rtol=1e-15)
    np.testing.assert_array_equal(g[:4], 0.0)
    np.testing.assert_array_equal(g[7:], 0.0)


def test_sinusoidal_table_values():
    max_len, d = 7, 6
    P = sinusoidal_table(max_len, d)
    assert P.shape == (max_len, d) and P.dtype == np.float64
    for t in range(max_len):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            assert P[t, 2 * i] == pytest.approx(math.sin(angle), abs=1e-15)
            assert P[t, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-15)
    np.testing.assert_array_equal(sinusoidal_table(4, 5)[:, 4], np.sin(np.arange(4) / 10000 ** (4 / 5)))


def test_positional_forward_adds_rows_from_offset(rng):
    pe = PositionalEncoding(10, D, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, 3, D))
    y, _ = pe.forward(x, offset=5)
    np.testing.assert_allclose(y, x + sinusoidal_table(10, D)[5:8], rtol=1e-15)
    assert pe.parameters() == {}  # sinusoidal: a constant table, nothing to learn


def test_positional_rejects_sequences_longer_than_max_len(rng):
    pe = PositionalEncoding(6, D, rng=rng)
    with pytest.raises(ValueError, match=r"x: expected at most max_len=6 positions .*got 7"):
        pe.forward(np.zeros((1, 7, D), np.float32))
    with pytest.raises(ValueError, match=r"x: expected at most max_len=6 positions .*got 8"):
        pe.forward(np.zeros((1, 3, D), np.float32), offset=5)


def test_positional_rejects_unknown_kind(rng):
    with pytest.raises(ValueError, match=r"^kind: expected one of 'sinusoidal', 'learned', got 'rotary'$"):
        PositionalEncoding(6, D, kind="rotary", rng=rng)
