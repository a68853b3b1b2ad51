"""Tests for minitf.course.l03_causal_mask: the measurements behind Lesson 3's notebook and figure."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course import l03_causal_mask as l3
from minitf.course.l03_causal_mask import experiments as l3_experiments  # the module whose names the lesson calls
from minitf.layers.softmax import softmax
from minitf.masks import MASK_VALUE, causal_mask


def test_future_influence_is_exactly_zero_with_the_mask_and_large_without():
    model = l3.leak_runs(0)["teacher_forced"].model
    fi = l3.future_influence(model, l3.leak_batch(0, size=8))
    assert np.all(fi.masked == 0.0), "with the causal mask the future must not move the logits at t"
    assert np.all(fi.unmasked[:-1] > 0.1), "without the mask changing later inputs must move the logits"
    assert fi.unmasked[-1] == 0.0  # the last position has no future


def test_leak_batch_is_fixed():
    a, b = l3.leak_batch(0), l3.leak_batch(0)
    assert a.input_ids.shape[0] == 32 and l3.leak_batch(0, size=8).input_ids.shape[0] == 8
    np.testing.assert_array_equal(a.input_ids, b.input_ids)
    np.testing.assert_array_equal(a.decoder_input_ids, b.decoder_input_ids)


def test_leak_runs_collapse_the_loss_but_not_free_running():
    runs = l3.leak_runs(0)
    assert l3.leak_runs(seed=0) is runs
    honest, leaky = runs["teacher_forced"].history.evals[-1], runs["no_causal_mask"].history.evals[-1]
    assert runs["no_causal_mask"].model.config.causal is False
    assert leaky["teacher_forced_loss"] < honest["teacher_forced_loss"] / 5
    assert leaky["free_running_exact_match"] < honest["free_running_exact_match"]


def test_mask_value_rows():
    rows = {(r.dtype, r.mask_value, r.row): r for r in l3.mask_value_rows()}
    for dtype in ("float32", "float64"):
        for v in (MASK_VALUE, -np.inf):
            part = rows[(dtype, v, "partly masked")]
            assert part.masked_weight == 0.0 and not part.has_nan and part.row_sum == pytest.approx(1.0)
        assert rows[(dtype, -np.inf, "fully masked")].has_nan
        assert not rows[(dtype, MASK_VALUE, "fully masked")].has_nan
    # float32 rounds score - 1e9 to -1e9: a uniform row; float64 keeps the scores: the unmasked softmax
    np.testing.assert_array_equal(rows[("float32", MASK_VALUE, "fully masked")].weights, 0.25)
    np.testing.assert_allclose(rows[("float64", MASK_VALUE, "fully masked")].weights, softmax(l3_experiments._SCORES),
                               rtol=1e-5)


def test_after_softmax_mistake():
    m = l3.after_softmax_mistake(0)
    keep = causal_mask(5) == 0
    np.testing.assert_allclose(m.right.sum(-1), 1.0)
    assert np.all(m.right[~keep] == 0)
    assert np.all(m.row_sums[:-1] < 1) and m.row_sums[-1] == pytest.approx(1.0)
    # renormalising the wrong weights is the right answer in exact arithmetic (float64 here)
    np.testing.assert_allclose(m.wrong / m.row_sums[:, None], m.right, rtol=1e-12, atol=1e-15)
    assert m.leak_right == 0.0 and m.leak_wrong > 1e-3
    assert m.renorm_error[0] < 1e-6 and m.renorm_nan[-1]


def test_padded_example_dead_rows_give_zeros_not_nan():
    ex = l3.padded_example(0)
    np.testing.assert_array_equal(ex.dead_rows, [[False] * 5, [True, True, False, False, False]])
    for x in (ex.A, ex.out, ex.dQ, ex.dK, ex.dV):
        assert not np.isnan(x).any()
    assert np.all(ex.A[1, :, :2] == 0) and np.all(ex.out[1, :, :2] == 0) and np.all(ex.dQ[1, :, :2] == 0)
    assert np.all(ex.dK[1, :, :2] == 0) and np.all(ex.dV[1, :, :2] == 0)  # padded keys: no gradient
    np.testing.assert_allclose(ex.A[:, :, 2:].sum(-1), 1.0)
    assert np.all(ex.A[np.broadcast_to(ex.mask < 0, ex.A.shape)] == 0)
    assert not np.allclose(ex.plain_softmax[1, :, :2], 0)  # the softmax alone would not give zeros


def test_mask_backward_check():
    mb = l3.mask_backward_check(0)
    assert mb.max_abs_dscores_blocked == 0.0 and mb.n_blocked_nonzero == 0
    assert mb.max_abs_dscores_allowed > 0.1
    assert mb.fd_dscores_error < 1e-7 and mb.fd_blocked_max == 0.0
    assert mb.dq_from_dscores_error < 1e-12
    assert all(err < 1e-7 for err in mb.fd_errors.values()), mb.fd_errors


def test_mask_backward_check_reads_dscores_from_the_library(monkeypatch):
    """The dS the lesson prints is the library's AttentionGrads.dscores: a change to the
    backward's dscores shows in the lesson's blocked cells."""
    from minitf.attention import scaled_dot_product_attention_backward

    def planted(dout, cache):
        grads = scaled_dot_product_attention_backward(dout, cache)
        return grads._replace(dscores=grads.dscores + 1.0)

    monkeypatch.setattr(l3_experiments, "scaled_dot_product_attention_backward", planted)
    mb = l3.mask_backward_check(0)
    assert mb.max_abs_dscores_blocked == 1.0 and mb.n_blocked_nonzero > 0


def test_library_dscores_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    from minitf.attention import scaled_dot_product_attention, scaled_dot_product_attention_backward
    Q, K, V = (rng.standard_normal((2, 2, 5, 4)) for _ in range(3))
    mask = causal_mask(5, dtype=np.float64)  # no fully masked rows: torch gives them a uniform row
    out, cache = scaled_dot_product_attention(Q, K, V, mask)
    G = rng.standard_normal(out.shape)
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (Q, K, V))
    scores = tq @ tk.transpose(-1, -2) / 2.0 + torch.tensor(mask)
    scores.retain_grad()
    (torch.softmax(scores, -1) @ tv * torch.tensor(G)).sum().backward()
    np.testing.assert_allclose(scaled_dot_product_attention_backward(G, cache).dscores, scores.grad.numpy(),
                               rtol=1e-10, atol=1e-12)
