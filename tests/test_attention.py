"""Tests for minitf/attention.py: scaled dot-product attention and multi-head attention.

Every backward is checked against float64 centred finite differences, with no mask, a
causal mask and key-padding masks -- including *fully masked* query rows (a query whose
every key is padding), which must give a zero output and a zero gradient, never NaN.
Multi-head attention is checked both as self-attention (one input feeds x_q and x_kv, so
its gradient is dx_q + dx_kv) and as cross-attention (separate x_q and x_kv).
"""
from __future__ import annotations

import ast
import inspect
import math
import textwrap

import numpy as np
import pytest

from minitf.attention import (MultiHeadAttention, merge_heads, scaled_dot_product_attention,
                              scaled_dot_product_attention_backward, split_heads)
from minitf.gradcheck import check_layer, numerical_gradient
from minitf.masks import MASK_VALUE, causal_mask, key_padding_mask
from minitf.module import Module

B, T, S, D, H = 2, 4, 5, 8, 2
Dh = D // H
PAD = 0


# ---- helpers ------------------------------------------------------------------------
class SDPA(Module):
    """scaled_dot_product_attention as a parameter-free layer with inputs (Q, K, V)."""

    def __init__(self):
        super().__init__(np.float64)

    def forward(self, Q, K, V, mask=None):
        return scaled_dot_product_attention(Q, K, V, mask)

    def backward(self, dout, cache):
        return scaled_dot_product_attention_backward(dout, cache)[:3]


class SelfAttention(Module):
    """Multi-head attention with x_q is x_kv.  The one input fed both roles, so its
    gradient is the sum of the two returned by the backward."""

    def __init__(self, mha: MultiHeadAttention):
        super().__init__(mha.dtype)
        self.mha = mha

    def forward(self, x, mask=None):
        return self.mha.forward(x, x, mask)

    def backward(self, dy, cache):
        dx_q, dx_kv = self.mha.backward(dy, cache)
        return dx_q + dx_kv


def make_mha(rng, dtype=np.float64, d_model=D, n_heads=H) -> MultiHeadAttention:
    """Multi-head attention with random (non-zero) biases, so every bias path is exercised."""
    mha = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        mha.params[name][:] = 0.5 * rng.standard_normal(d_model)
    return mha


def self_attention_masks():
    """Masks for self-attention over T positions, B=2.  Batch row 0 is *left*-padded, so
    under the causal mask its queries 0 and 1 see only padding: fully masked rows."""
    ids = np.array([[PAD, PAD, 5, 6], [3, 4, 7, PAD]])  # (B, T)
    pad = key_padding_mask(ids, pad_id=PAD, dtype=np.float64)  # (B, 1, 1, T)
    causal = causal_mask(T, dtype=np.float64)  # (T, T)
    return {"none": None, "causal": causal, "key_padding": pad, "causal+key_padding": causal + pad}


def cross_attention_masks():
    """Masks for cross-attention (T queries over S keys), B=2.  Batch row 1 has *no* real
    key (length 0), so all of its queries are fully masked."""
    pad = key_padding_mask(lengths=[3, 0], max_len=S, dtype=np.float64)  # (B, 1, 1, S)
    causal = causal_mask(T, S, dtype=np.float64)  # (T, S)
    return {"none": None, "causal": causal, "key_padding": pad, "causal+key_padding": causal + pad}


def fully_masked_rows(mask, T_, S_):
    """(B, T) bool: query rows whose every key is blocked."""
    if mask is None:
        return np.zeros((B, T_), bool)
    full = np.broadcast_to(mask, (B, 1, T_, S_))[:, 0]  # (B, T, S)
    return (full <= MASK_VALUE / 2).all(axis=-1)


# ---- scaled dot-product attention ---------------------------------------------------------
@pytest.mark.parametrize("mask_name", list(cross_attention_masks()))
def test_sdpa_backward_matches_finite_differences(rng, assert_grads_ok, mask_name):
    mask = cross_attention_masks()[mask_name]
    Q, K, V = (rng.standard_normal((B, H, n, Dh)) for n in (T, S, S))
    report = check_layer(SDPA(), [Q, K, V], forward_kwargs={"mask": mask}, max_entries=None)
    assert set(report) == {"input0", "input1", "input2"}
    assert_grads_ok(report)


def test_sdpa_forward_matches_the_formula(rng):
    Q, K, V = (rng.standard_normal((B, H, n, Dh)) for n in (T, S, S))
    mask = cross_attention_masks()["causal"]
    out, cache = scaled_dot_product_attention(Q, K, V, mask)
    scores = np.einsum("bhtd,bhsd->bhts", Q, K) / math.sqrt(Dh) + mask
    A = np.exp(scores - scores.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    np.testing.assert_allclose(cache.A, A, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(out, np.einsum("bhts,bhsd->bhtd", A, V), rtol=1e-12)
    assert np.all(cache.A[..., np.broadcast_to(mask, (T, S)) < 0] == 0.0)  # blocked keys: weight 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("which", ["self", "cross"])
def test_fully_masked_rows_give_zero_output_and_zero_gradient(rng, dtype, which):
    if which == "self":
        mask, T_, S_ = self_attention_masks()["causal+key_padding"], T, T
    else:
        mask, T_, S_ = cross_attention_masks()["key_padding"], T, S
    mask = mask.astype(dtype)
    dead = fully_masked_rows(mask, T_, S_)  # (B, T)
    assert dead.any() and not dead.all()  # the test is about a real mix of both
    Q, K, V = (rng.standard_normal((B, H, n, Dh)).astype(dtype) for n in (T_, S_, S_))
    out, cache = scaled_dot_product_attention(Q, K, V, mask)
    assert out.dtype == dtype
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(cache.A))
    np.testing.assert_array_equal(out.transpose(0, 2, 1, 3)[dead], 0.0)  # (n_dead, H, Dh)
    np.testing.assert_array_equal(cache.A.transpose(0, 2, 1, 3)[dead], 0.0)
    live_sums = cache.A.sum(-1).transpose(0, 2, 1)[~dead]  # (n_live, H)
    np.testing.assert_allclose(live_sums, 1.0, rtol=1e-6 if dtype == np.float32 else 1e-14)

    dout = rng.standard_normal(out.shape).astype(dtype)
    dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(dout, cache)
    for g in (dQ, dK, dV):
        assert g.dtype == dtype and np.all(np.isfinite(g))
    np.testing.assert_array_equal(dQ.transpose(0, 2, 1, 3)[dead], 0.0)
    # the dead queries contribute nothing to dK, dV: zeroing their upstream changes nothing
    dout_live = dout * ~dead[:, None, :, None]
    _, dK2, dV2, _, _ = scaled_dot_product_attention_backward(dout_live, cache)
    np.testing.assert_array_equal(dK, dK2)
    np.testing.assert_array_equal(dV, dV2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mha_fully_masked_rows_are_zero_before_the_output_projection(rng, dtype):
    mha = make_mha(rng, dtype)
    mask = cross_attention_masks()["causal+key_padding"].astype(dtype)
    dead = fully_masked_rows(mask, T, S)
    x_q = rng.standard_normal((B, T, D)).astype(dtype)
    x_kv = rng.standard_normal((B, S, D)).astype(dtype)
    y, cache = mha.forward(x_q, x_kv, mask)
    assert y.dtype == dtype and np.all(np.isfinite(y))
    np.testing.assert_array_equal(cache.o[dead], 0.0)  # merged heads of the attention output
    np.testing.assert_array_equal(y[dead], np.broadcast_to(mha.params["b_o"], y[dead].shape))
    dx_q, dx_kv = mha.backward(rng.standard_normal(y.shape).astype(dtype), cache)
    assert all(np.all(np.isfinite(g)) for g in (dx_q, dx_kv, *mha.grads.values()))
    np.testing.assert_array_equal(dx_q[dead], 0.0)
    np.testing.assert_array_equal(dx_kv[1], 0.0)  # batch row 1: every key is padding


# ---- multi-head attention: gradients ------------------------------------------------------
B_K_NOTE = """
The key bias b_k has an exactly zero gradient in theory: it adds q . b_k to *every* score
of a query's row, and softmax is invariant to adding one constant to a whole row.  Its
analytic gradient is a sum that cancels to rounding (~1e-16) and its finite difference is
rounding noise (~1e-12), so their *relative* error is meaningless (of order 1).  For b_k
we therefore assert that both are tiny in absolute terms; every other parameter and input
is held to the usual relative error.
"""


def assert_b_k_gradient_vanishes(layer: Module, inputs, mask, seed=5):
    """Analytic dL/db_k ~ 0 (abs < 1e-12) and its finite difference tiny (abs < 1e-8)."""
    name = next(k for k in layer.parameters() if k.endswith("b_k"))
    b_k = layer.parameters()[name]
    y, _ = layer.forward(*inputs, mask=mask)
    G = np.random.default_rng(seed).standard_normal(y.shape)

    def f():
        return float(np.sum(layer.forward(*inputs, mask=mask)[0] * G))

    layer.zero_grad()
    layer.backward(G, layer.forward(*inputs, mask=mask)[1])
    analytic = layer.gradients()[name]
    numeric = numerical_gradient(f, b_k)
    assert np.max(np.abs(analytic)) < 1e-12, f"analytic d{name} should vanish, got {analytic}"
    assert np.max(np.abs(numeric)) < 1e-8, f"numeric d{name} should vanish, got {numeric}"


@pytest.mark.parametrize("mask_name", list(self_attention_masks()))
def test_mha_self_attention_backward_matches_finite_differences(rng, assert_grads_ok, mask_name):
    # See B_K_NOTE: b_k is checked in absolute terms, everything else to rel error 1e-6.
    mask = self_attention_masks()[mask_name]
    layer = SelfAttention(make_mha(rng))
    x = rng.standard_normal((B, T, D))
    report = check_layer(layer, [x], forward_kwargs={"mask": mask}, max_entries=None)
    expected = {"input0"} | {f"param:mha.{n}" for n in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")}
    assert set(report) == expected
    assert_grads_ok(report, ignore={"param:mha.b_k"})
    assert_b_k_gradient_vanishes(layer, [x], mask)


@pytest.mark.parametrize("mask_name", list(cross_attention_masks()))
def test_mha_cross_attention_backward_matches_finite_differences(rng, assert_grads_ok, mask_name):
    # See B_K_NOTE: b_k is checked in absolute terms, everything else to rel error 1e-6.
    mask = cross_attention_masks()[mask_name]
    mha = make_mha(rng)
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    report = check_layer(mha, [x_q, x_kv], forward_kwargs={"mask": mask}, max_entries=None)
    assert {"input0", "input1", "param:W_k", "param:b_k"} <= set(report)
    assert_grads_ok(report, ignore={"param:b_k"})
    assert_b_k_gradient_vanishes(mha, [x_q, x_kv], mask)


def test_self_attention_gradient_is_the_sum_of_both_roles(rng):
    """dx for x_q is x_kv equals dx_q + dx_kv of the same call with two (equal) arrays."""
    mha = make_mha(rng)
    x = rng.standard_normal((B, T, D))
    dy = rng.standard_normal((B, T, D))
    _, cache = mha.forward(x, x)
    dx_q, dx_kv = mha.backward(dy, cache)
    assert np.abs(dx_q).max() > 0 and np.abs(dx_kv).max() > 0  # both roles carry gradient
    _, cache2 = mha.forward(x, x.copy())
    dx_q2, dx_kv2 = mha.backward(dy, cache2)
    np.testing.assert_allclose(dx_q + dx_kv, dx_q2 + dx_kv2, rtol=1e-13)


# ---- multi-head attention: heads ------------------------------------------------------------
@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_heads_equal_separate_sdpa_on_sliced_projections(rng, n_heads):
    """H heads at once == each head computed alone on its slice of the projections."""
    mha = make_mha(rng, n_heads=n_heads)
    p, dh = mha.params, D // n_heads
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    mask = cross_attention_masks()["causal+key_padding"]
    y, _ = mha.forward(x_q, x_kv, mask)

    q = x_q @ p["W_q"] + p["b_q"]  # (B, T, D)
    k = x_kv @ p["W_k"] + p["b_k"]  # (B, S, D)
    v = x_kv @ p["W_v"] + p["b_v"]  # (B, S, D)
    heads = []
    for h in range(n_heads):  # the test loops; the code must not
        cols = slice(h * dh, (h + 1) * dh)
        q_h, k_h, v_h = q[:, None, :, cols], k[:, None, :, cols], v[:, None, :, cols]  # (B, 1, *, Dh)
        out_h, _ = scaled_dot_product_attention(q_h, k_h, v_h, mask)  # (B, 1, T, Dh)
        heads.append(out_h[:, 0])  # (B, T, Dh)
    expected = np.concatenate(heads, axis=-1) @ p["W_o"] + p["b_o"]  # (B, T, D)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-13)


def test_split_and_merge_heads_are_inverse(rng):
    x = rng.standard_normal((B, T, D))
    xs = split_heads(x, H)
    assert xs.shape == (B, H, T, Dh)
    np.testing.assert_array_equal(xs[:, 1, 2], x[:, 2, Dh:2 * Dh])  # head 1 = columns Dh..2Dh
    np.testing.assert_array_equal(merge_heads(xs), x)


@pytest.mark.parametrize("fn", [scaled_dot_product_attention, scaled_dot_product_attention_backward,
                                split_heads, merge_heads, MultiHeadAttention.forward,
                                MultiHeadAttention.backward, MultiHeadAttention.project_q,
                                MultiHeadAttention.project_kv], ids=lambda f: f.__qualname__)
def test_attention_code_has_no_python_loops(fn):
    """Heads and batch rows are vectorised: no for/while loop (or comprehension) in the code."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    loops = [type(n).__name__ for n in ast.walk(tree)
             if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.DictComp))]
    assert not loops, f"{fn.__qualname__} contains {loops}"


def test_projections_match_forward_cache(rng):
    mha = make_mha(rng)
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    _, cache = mha.forward(x_q, x_kv)
    K, V = mha.project_kv(x_kv)
    np.testing.assert_array_equal(mha.project_q(x_q), cache.attn.Q)
    np.testing.assert_array_equal(K, cache.attn.K)
    np.testing.assert_array_equal(V, cache.attn.V)
    assert K.shape == V.shape == (B, H, S, Dh)


# ---- multi-head attention: state ----------------------------------------------------------
def test_mha_backward_accumulates_and_zero_grad_resets(rng):
    mha = make_mha(rng)
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    dy = rng.standard_normal((B, T, D))
    _, cache = mha.forward(x_q, x_kv)
    mha.backward(dy, cache)
    once = {k: g.copy() for k, g in mha.gradients().items()}
    assert all(np.abs(g).max() > 0 for k, g in once.items() if k != "b_k")
    mha.backward(dy, cache)
    for k, g in mha.gradients().items():
        np.testing.assert_allclose(g, 2 * once[k], rtol=1e-14, atol=1e-15, err_msg=k)
    mha.zero_grad()
    assert all(np.all(g == 0) for g in mha.gradients().values())


def test_mha_cache_is_returned_not_stored(rng):
    """Two forwards before any backward (as tied or step-by-step use needs) change nothing."""
    mha = make_mha(rng)
    x1, x2 = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, D))
    dy = rng.standard_normal((B, T, D))
    _, c1 = mha.forward(x1, x1)
    ref = mha.backward(dy, c1)
    ref_grads = {k: g.copy() for k, g in mha.gradients().items()}
    mha.zero_grad()
    _, c1 = mha.forward(x1, x1)
    mha.forward(x2, x2)  # a second call in between
    got = mha.backward(dy, c1)
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)
    for k, g in mha.gradients().items():
        np.testing.assert_array_equal(g, ref_grads[k])


def test_mha_parameter_names_and_shapes(rng):
    mha = MultiHeadAttention(D, H, rng=rng)
    assert list(mha.parameters()) == ["W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"]
    assert all(mha.params[n].shape == (D, D) for n in ("W_q", "W_k", "W_v", "W_o"))
    assert all(mha.params[n].shape == (D,) and np.all(mha.params[n] == 0) for n in ("b_q", "b_k", "b_v", "b_o"))
    assert all(p.dtype == np.float32 for p in mha.parameters().values())


# ---- bad input --------------------------------------------------------------------------------
def test_mha_rejects_d_model_not_divisible_by_n_heads(rng):
    with pytest.raises(ValueError, match=r"^n_heads: expected a divisor of d_model=8, got n_heads=3"):
        MultiHeadAttention(8, 3, rng=rng)


def test_mha_rejects_bad_x_q_and_x_kv(rng):
    mha = MultiHeadAttention(D, H, rng=rng)
    x = np.zeros((B, T, D), np.float32)
    with pytest.raises(ValueError, match=r"^x_q: expected shape \(\*, \*, 8\).*got \(2, 4, 6\)"):
        mha.forward(np.zeros((B, T, 6), np.float32), x)
    with pytest.raises(ValueError, match=r"^x_kv: expected shape \(2, \*, 8\).*B=2.*got \(3, 5, 8\)"):
        mha.forward(x, np.zeros((3, S, D), np.float32))
    with pytest.raises(ValueError, match=r"^x_kv: expected shape \(2, \*, 8\).*got \(2, 5, 4\)"):
        mha.forward(x, np.zeros((B, S, 4), np.float32))


@pytest.mark.parametrize("bad_shape", [(T, S + 1), (3, 1, 1, S), (B, H, T, S, 1), (S, T)])
def test_attention_rejects_a_mask_of_the_wrong_shape(rng, bad_shape):
    mha = MultiHeadAttention(D, H, rng=rng)
    x_q, x_kv = np.zeros((B, T, D), np.float32), np.zeros((B, S, D), np.float32)
    pattern = r"^mask: expected a shape that broadcasts to the scores \(B, H, T, S\) = \(2, 2, 4, 5\).*got " \
              + re_shape(bad_shape)
    with pytest.raises(ValueError, match=pattern):
        mha.forward(x_q, x_kv, np.zeros(bad_shape, np.float32))
    Q, K = np.zeros((B, H, T, Dh)), np.zeros((B, H, S, Dh))
    with pytest.raises(ValueError, match=pattern):
        scaled_dot_product_attention(Q, K, K, np.zeros(bad_shape))


def re_shape(shape) -> str:
    return r"\(" + r", ".join(map(str, shape)) + r"\)"


@pytest.mark.parametrize("mask, error, message", [
    (np.triu(np.ones((T, S), bool), 1), TypeError, "expected an additive float mask"),
    (np.where(np.triu(np.ones((T, S)), 1) > 0, -np.inf, 0.0), ValueError, "expected finite values"),
    (np.full((T, S), np.nan), ValueError, "expected finite values"),
    (np.ones((T, S)), ValueError, r"expected values <= 0 .*got 1.0; a 1/0 'keep' mask"),  # Hugging Face's 1 = keep
])
def test_attention_refuses_masks_it_would_misread(rng, mask, error, message):
    mha = make_mha(rng)
    x_q, x_kv = np.zeros((B, T, D)), np.zeros((B, S, D))
    with pytest.raises(error, match="^mask: " + message):
        mha.forward(x_q, x_kv, mask)


def test_unchecked_attention_computes_what_the_checked_one_does(rng):
    """check_args=False (for a caller that checked its masks at its own boundary: a decoding step)
    skips the checks and nothing else: the same output and cache, bit for bit."""
    Q, K = rng.standard_normal((B, H, T, Dh)), rng.standard_normal((B, H, S, Dh))
    V = rng.standard_normal((B, H, S, Dh))
    mask = key_padding_mask(np.array([[5, 5, 5, 0, 0], [5, 5, 5, 5, 0]]), pad_id=0, dtype=np.float64)  # (B, 1, 1, S)
    checked, c1 = scaled_dot_product_attention(Q, K, V, mask)
    unchecked, c2 = scaled_dot_product_attention(Q, K, V, mask, check_args=False)
    np.testing.assert_array_equal(checked, unchecked)
    for a, b in zip(c1, c2):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="^mask: expected values <= 0"):
        scaled_dot_product_attention(Q, K, V, -mask)
    scaled_dot_product_attention(Q, K, V, -mask, check_args=False)  # unchecked: the caller's responsibility
