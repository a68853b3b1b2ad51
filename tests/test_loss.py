"""Tests for minitf/loss.py: cross-entropy over decoder targets and its gradient p_hat - y.

The gradient is checked three ways: against the closed form (p_hat - y) / n_real, against
float64 finite differences, and (label smoothing) against torch.  Ignored positions
(label -100) must get exactly zero gradient, and the mean must divide by the number of real
target tokens, never by B * T.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.data import IGNORE_INDEX
from minitf.gradcheck import numerical_gradient, rel_error
from minitf.layers import softmax
from minitf.loss import cross_entropy

B, T, V = 3, 5, 7


def case(seed: int = 0, dtype=np.float64):
    """Random logits (B, T, V) and labels (B, T) with right padding of different lengths."""
    rng = np.random.default_rng(seed)
    logits = (2.0 * rng.standard_normal((B, T, V))).astype(dtype)
    labels = rng.integers(0, V, size=(B, T))
    labels[0, 3:] = IGNORE_INDEX
    labels[2, 1:] = IGNORE_INDEX
    return logits, labels


def test_gradient_is_p_hat_minus_y_over_n_real_and_zero_where_ignored():
    logits, labels = case()
    real = labels != IGNORE_INDEX
    n_real = int(real.sum())
    assert n_real == 5 + 3 + 1
    loss, dlogits = cross_entropy(logits, labels)

    p_hat = softmax(logits)  # (B, T, V)
    y = np.zeros_like(p_hat)
    b, t = np.nonzero(real)
    y[b, t, labels[b, t]] = 1.0  # one-hot on real positions
    expected = (p_hat - y) / n_real
    np.testing.assert_allclose(dlogits[real], expected[real], rtol=1e-13, atol=1e-16)
    assert np.all(dlogits[~real] == 0.0)  # exactly zero: no gradient through padding
    # each real row sums to zero (probabilities minus a one-hot)
    np.testing.assert_allclose(dlogits[real].sum(axis=-1), 0.0, atol=1e-16)

    expected_loss = -np.log(p_hat[b, t, labels[b, t]]).sum() / n_real
    assert loss == pytest.approx(expected_loss, rel=1e-13)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_gradient_matches_finite_differences(label_smoothing):
    logits, labels = case(1)
    _, dlogits = cross_entropy(logits, labels, label_smoothing=label_smoothing)
    num = numerical_gradient(lambda: cross_entropy(logits, labels, label_smoothing=label_smoothing)[0], logits)
    assert rel_error(dlogits, num) <= 1e-6
    assert np.all(num[labels == IGNORE_INDEX] == 0.0)  # the loss truly does not see those logits


def test_mean_divides_by_real_tokens_not_padded_length():
    logits, labels = case(2)
    real = labels != IGNORE_INDEX
    loss, _ = cross_entropy(logits, labels)
    logp = np.log(softmax(logits))
    per_token = -np.take_along_axis(logp, np.where(real, labels, 0)[..., None], axis=-1)[..., 0]  # (B, T)
    assert loss == pytest.approx(per_token[real].sum() / real.sum(), rel=1e-13)
    assert loss != pytest.approx(per_token[real].sum() / labels.size, rel=1e-3)

    # more padding changes nothing: append 4 ignored positions with arbitrary logits
    rng = np.random.default_rng(3)
    more_logits = np.concatenate([logits, 50 * rng.standard_normal((B, 4, V))], axis=1)  # (B, T + 4, V)
    more_labels = np.concatenate([labels, np.full((B, 4), IGNORE_INDEX)], axis=1)
    loss2, dlogits2 = cross_entropy(more_logits, more_labels)
    _, dlogits = cross_entropy(logits, labels)
    assert loss2 == pytest.approx(loss, rel=1e-14)
    np.testing.assert_array_equal(dlogits2[:, :T], dlogits)
    assert np.all(dlogits2[:, T:] == 0.0)


def test_padded_batch_equals_concatenated_real_tokens():
    """(B, T) with padding and the flat (N_real, V) of its real positions give one loss, one gradient."""
    logits, labels = case(4)
    real = labels != IGNORE_INDEX
    loss, dlogits = cross_entropy(logits, labels)
    loss_flat, dlogits_flat = cross_entropy(logits[real], labels[real])  # (N, V), (N,)
    assert loss_flat == pytest.approx(loss, rel=1e-14)
    np.testing.assert_allclose(dlogits_flat, dlogits[real], rtol=1e-14, atol=0)


@pytest.mark.parametrize("eps", [0.1, 0.35])
def test_label_smoothing_hand_formula(eps):
    logits, labels = case(5)
    real = labels != IGNORE_INDEX
    n_real = real.sum()
    loss, dlogits = cross_entropy(logits, labels, label_smoothing=eps)
    p_hat = softmax(logits)
    q = np.full(p_hat.shape, eps / V)  # q = (1 - eps) onehot + eps / V
    b, t = np.nonzero(real)
    q[b, t, labels[b, t]] += 1.0 - eps
    expected_loss = -(q * np.log(p_hat))[real].sum() / n_real
    assert loss == pytest.approx(expected_loss, rel=1e-13)
    np.testing.assert_allclose(dlogits[real], ((p_hat - q) / n_real)[real], rtol=1e-12, atol=1e-16)
    assert np.all(dlogits[~real] == 0.0)


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.35])
def test_label_smoothing_matches_torch(eps):
    torch = pytest.importorskip("torch")
    logits, labels = case(6)
    loss, dlogits = cross_entropy(logits, labels, label_smoothing=eps)
    tl = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.functional.cross_entropy(tl.reshape(-1, V), torch.from_numpy(labels).reshape(-1),
                                              ignore_index=IGNORE_INDEX, label_smoothing=eps)
    tloss.backward()
    assert rel_error(loss, tloss.item()) <= 1e-12
    assert rel_error(dlogits, tl.grad.numpy()) <= 1e-12


def test_other_ignore_index():
    logits, labels = case(7)
    labels = np.where(labels == IGNORE_INDEX, V + 5, labels)  # the ignored value need not be negative
    loss, dlogits = cross_entropy(logits, labels, ignore_index=V + 5)
    loss_ref, dlogits_ref = cross_entropy(logits, np.where(labels == V + 5, IGNORE_INDEX, labels))
    assert loss == loss_ref
    np.testing.assert_array_equal(dlogits, dlogits_ref)


def test_float32_in_float32_out_and_huge_logits_stay_finite():
    logits, labels = case(8, dtype=np.float32)
    logits[0, 0, :] = [1e4, -1e4, 0, 0, 0, 0, 0]
    loss, dlogits = cross_entropy(logits, labels)
    assert dlogits.dtype == np.float32
    assert np.isfinite(loss) and np.all(np.isfinite(dlogits))


# ---- bad input ------------------------------------------------------------------------------
def test_label_out_of_vocabulary_is_rejected():
    logits, labels = case()
    labels[1, 2] = V
    with pytest.raises(ValueError, match=r"^labels: expected token ids in \[0, 7\) \(or -100\), got 7"):
        cross_entropy(logits, labels)
    labels[1, 2] = -1
    with pytest.raises(ValueError, match=r"^labels: .*got -1"):
        cross_entropy(logits, labels)


def test_every_label_ignored_is_rejected():
    logits, _ = case()
    with pytest.raises(ValueError, match=r"^labels: every label is ignore_index=-100"):
        cross_entropy(logits, np.full((B, T), IGNORE_INDEX))


def test_labels_shape_mismatch_is_rejected():
    logits, labels = case()
    with pytest.raises(ValueError, match=r"^labels: expected shape \(3, 5\).*got \(3, 4\)"):
        cross_entropy(logits, labels[:, :4])
    with pytest.raises(ValueError, match=r"^labels: expected shape"):
        cross_entropy(logits, labels.reshape(-1))


def test_float_labels_and_integer_logits_are_rejected():
    logits, labels = case()
    with pytest.raises(TypeError, match=r"^labels: expected an integer array"):
        cross_entropy(logits, labels.astype(np.float64))
    with pytest.raises(TypeError, match=r"^logits: expected a float32 or float64 array"):
        cross_entropy(logits.astype(np.int64), labels)


@pytest.mark.parametrize("eps", [-0.1, 1.5])
def test_label_smoothing_out_of_range_is_rejected(eps):
    logits, labels = case()
    with pytest.raises(ValueError, match=r"^label_smoothing: expected a finite number in \[0, 1\]"):
        cross_entropy(logits, labels, label_smoothing=eps)
