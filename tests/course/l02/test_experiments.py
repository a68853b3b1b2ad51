"""Tests for minitf.course.l02_attention: the measurements behind Lesson 2's notebook and figures."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.attention import AttentionGrads, MultiHeadAttention, merge_heads, scaled_dot_product_attention_backward, \
    split_heads
from minitf.course import l02_attention as l2
from minitf.course.l02_attention import experiments as l2_experiments  # the module whose names the lesson calls
from minitf.layers.softmax import softmax
from minitf.rnn.attention import AdditiveAttention


# ---- 1. queries, keys and values -------------------------------------------------------------
def test_additive_score_is_the_formula_pair_by_pair():
    c = l2.score_contrast(1)
    assert isinstance(c.additive_attention, AdditiveAttention)  # Lesson 1's attention, not a copy
    p = c.additive_attention.params
    W_a, U_a, v_a = p["W_a"], p["U_a"], p["v"]
    for t in range(3):
        for s in range(5):
            assert c.additive[t, s] == pytest.approx(v_a @ np.tanh(c.Q[t] @ W_a + c.K[s] @ U_a), rel=1e-12)


def test_additive_score_is_read_from_the_rnn_attention(monkeypatch):
    """The scores come from AdditiveAttention.score: a change there shows in the contrast."""
    score = AdditiveAttention.score
    monkeypatch.setattr(AdditiveAttention, "score", lambda self, s, keys: (score(self, s, keys)[0] + 1.0, None))
    planted = l2.score_contrast(0)
    monkeypatch.undo()
    np.testing.assert_array_equal(planted.additive, l2.score_contrast(0).additive + 1.0)


def test_score_contrast():
    c = l2.score_contrast(0)
    np.testing.assert_allclose(c.dot, c.Q @ c.K.T / 2.0, rtol=1e-12)  # d = 4
    np.testing.assert_allclose(c.dot_weights.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(c.additive_weights.sum(-1), 1.0, rtol=1e-12)
    assert c.additive_params == 4 * 8 * 2 + 8 and c.additive_hidden == 3 * 5 * 8 and c.dot_products == 3 * 5 * 4


def test_content_lookup_finds_each_querys_key():
    look = l2.content_lookup(0)
    np.testing.assert_array_equal(look.weights.argmax(-1), look.order)
    np.testing.assert_allclose(look.out, look.weights @ look.V, rtol=1e-12)  # a weighted average of V's rows


# ---- 2. scaled dot-product attention ---------------------------------------------------------
def test_score_variance_is_dh_unscaled_one_scaled_and_one_over_dh_over_dh():
    assert l2.SCALES == ("none", "sqrt(Dh)", "Dh")
    for Dh, (raw, scaled, over_dh) in l2.score_variance().items():
        assert raw == pytest.approx(Dh, rel=0.1)
        assert scaled == pytest.approx(1.0, rel=0.1)
        assert over_dh == pytest.approx(1.0 / Dh, rel=0.1)
        assert raw / scaled == pytest.approx(Dh, rel=1e-9) and raw / over_dh == pytest.approx(Dh ** 2, rel=1e-9)


def test_saturation_grows_without_the_scale_only():
    sat = l2.saturation()
    dims = sorted(sat)
    raw_max = [sat[d][0].max_weight for d in dims]
    assert all(a < b for a, b in zip(raw_max, raw_max[1:])), "unscaled softmax must sharpen as Dh grows"
    assert sat[dims[-1]][0].max_weight > 0.9 and sat[dims[-1]][0].jacobian_norm < 0.1
    scaled_max = [sat[d][1].max_weight for d in dims]
    assert max(scaled_max) - min(scaled_max) < 0.05, "scaled softmax must not depend on Dh"
    for d in dims:
        assert 0 <= sat[d][0].entropy <= math.log(16) + 1e-12
    # dividing by Dh overshoots: the weights tend to uniform as Dh grows
    over = [sat[d][2] for d in dims]
    assert all(a.entropy < b.entropy for a, b in zip(over, over[1:]))
    assert over[-1].max_weight < 1 / 16 + 0.01 and over[-1].entropy > math.log(16) - 0.01
    uniform = np.full(16, 1 / 16)
    uniform_jacobian = np.sqrt(np.square(l2.softmax_jacobian(uniform)).sum())
    assert over[-1].jacobian_norm == pytest.approx(uniform_jacobian, rel=0.01)


# ---- 3. the softmax and its backward ---------------------------------------------------------
def test_softmax_jacobian_against_finite_differences():
    rng = np.random.default_rng(2)
    z = rng.standard_normal(5)
    J = l2.softmax_jacobian(softmax(z))
    h = 1e-6
    numeric = np.stack([(softmax(z + h * e) - softmax(z - h * e)) / (2 * h) for e in np.eye(5)], axis=1)
    np.testing.assert_allclose(J, numeric, atol=1e-9)


def test_softmax_backward_check():
    c = l2.softmax_backward_check(0)
    assert c.jacobian_vs_cheap < 1e-12 and c.cheap_vs_numerical < 1e-8 and c.jacobian_row_sums < 1e-15


def test_overflow_demo():
    out = l2.overflow_demo()
    assert np.isnan(out["naive float64"]).all() and np.isnan(out["naive float32, max score 89"]).any()
    np.testing.assert_allclose(out["minitf float64"], softmax(np.array([2.0, 1.0, 0.0])), rtol=1e-12)
    np.testing.assert_allclose(out["minitf float32, max score 89"], out["minitf float64"], rtol=1e-6)


# ---- 4. the attention backward ---------------------------------------------------------------
def test_backward_lines_are_the_librarys_named_results(monkeypatch):
    """Each line of the table is the field of the library's AttentionGrads it is named after:
    doubling one field of the backward's result moves that line's error against finite
    differences to rel_error(2g, g) = 1/3, and no other line."""
    assert list(l2.LINES) == ["dV", "dA", "dscores", "dQ", "dK"]
    assert set(l2.LINES) == set(AttentionGrads._fields)
    honest = l2.attention_backward_check(0)
    for name in l2.LINES:
        def doubled(dout, cache, _name=name):
            grads = scaled_dot_product_attention_backward(dout, cache)
            return grads._replace(**{_name: 2 * getattr(grads, _name)})

        monkeypatch.setattr(l2_experiments, "scaled_dot_product_attention_backward", doubled)
        planted = l2.attention_backward_check(0)
        monkeypatch.undo()
        assert planted[name].numerical == pytest.approx(1 / 3, rel=1e-6), name
        assert all(planted[other].numerical == honest[other].numerical for other in l2.LINES if other != name)


def test_attention_backward_check_against_finite_differences():
    for name, c in l2.attention_backward_check(0).items():
        assert c.numerical < 1e-7, f"{name}: {c}"
    assert "library" not in l2.LineCheck._fields  # no comparison of minitf with itself


def test_forgotten_scale_is_caught():
    assert l2.forgotten_scale_error(0) == pytest.approx((math.sqrt(5) - 1) / (math.sqrt(5) + 1), rel=1e-6)


def test_attention_backward_check_against_torch():
    pytest.importorskip("torch")
    for name, c in l2.attention_backward_check(1).items():
        assert c.torch is not None and c.torch < 1e-10, f"{name}: {c}"


# ---- 5. many heads ---------------------------------------------------------------------------
def test_multi_head_reshape_equals_a_loop_over_heads():
    rng = np.random.default_rng(4)
    mha = MultiHeadAttention(24, 4, rng=rng, dtype=np.float64)
    for name in ("b_q", "b_k", "b_v", "b_o"):  # non-zero biases, so their columns are checked too
        mha.params[name][...] = rng.standard_normal(24)
    x_q, x_kv = rng.standard_normal((2, 3, 24)), rng.standard_normal((2, 5, 24))
    y, _ = mha.forward(x_q, x_kv)
    np.testing.assert_allclose(y, l2.heads_by_loop(mha, x_q, x_kv), rtol=1e-12, atol=1e-12)


def test_split_is_a_view_and_merge_its_inverse():
    x = np.arange(2 * 3 * 8, dtype=np.float64).reshape(2, 3, 8)
    heads = split_heads(x, 2)
    assert heads.shape == (2, 2, 3, 4) and np.shares_memory(heads, x)
    np.testing.assert_array_equal(heads[:, 1], x[..., 4:])
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_lesson2_run_learns_and_is_cached():
    run = l2.lesson2_run(0)
    assert l2.lesson2_run(seed=0) is run and l2.lesson2_run() is run
    assert not run.model.training and run.model.dtype == np.float64
    assert run.token_accuracy > 0.95, "the lesson's model did not learn to reverse"
    A = run.attention["cross-attention"]
    assert A.shape == (l2.EVAL_SIZE, 4, l2.SEQ_LEN + 1, l2.SEQ_LEN)
    np.testing.assert_allclose(A.sum(-1), 1.0, rtol=1e-12)


def test_head_patterns():
    run = l2.lesson2_run(0)
    patterns = l2.head_patterns(run)
    assert list(patterns) == list(l2.ATTENTIONS)
    for name, heads in patterns.items():
        for h, p in enumerate(heads):
            np.testing.assert_allclose(p.mean_map, run.attention[name][:, h].mean(0))
            assert 0 < p.offset_share <= 1 and 0 < p.key_share <= 1
    # reversal: the cross-attention reads source position 7 - t, so its preferred offset is 0
    assert all(p.offset == 0 and p.offset_share > 0.5 for p in patterns["cross-attention"])
    # the decoder self-attention is causal: no weight above the diagonal
    for p in patterns["decoder self-attention"]:
        assert np.triu(p.mean_map, 1).max() < 1e-12
