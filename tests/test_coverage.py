"""Coverage (See et al., 2017; GNMT's penalty, Wu et al., 2016): the coverage attention
(w_c c_t added to the last block's cross-attention scores, one position after the other),
the attention hooks it plugs into (``weights``, ``dA_extra``), the coverage loss, the
coverage vector carried by cached decoding, and GNMT's coverage penalty in beam search.
The pointer-generator as a whole: tests/test_pointer_generator.py."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import MultiHeadAttention, masked_softmax, scaled_dot_product_attention, \
    scaled_dot_product_attention_backward
from minitf.blocks import DecoderBlock
from minitf.config import ModelConfig
from minitf.decoding import beam_search, coverage_penalty, decode_step, length_normalized_score, start_decoding
from minitf.gradcheck import check_gradients, randomize_norms_and_biases
from minitf.masks import MASK_VALUE, causal_mask, key_padding_mask
from minitf.models import DecoderOnly, EncoderDecoder, PointerGenerator, coverage_loss
from minitf.models.pointer_generator import Coverage, coverage_vector

BOS = ModelConfig().bos_id


def scores_and_mask(rng, B=2, H=3, T=4, S=5, lengths=(5, 3)):
    mask = key_padding_mask(lengths=list(lengths), max_len=S, dtype=np.float64)  # (B, 1, 1, S)
    return rng.standard_normal((B, H, T, S)) + mask, mask


# =====================================================================================
# The coverage attention
# =====================================================================================
def test_coverage_attention_is_the_recurrence_and_the_softmax_without_it():
    rng = np.random.default_rng(0)
    scores, mask = scores_and_mask(rng)
    cov = Coverage(3, dtype=np.float64)
    np.testing.assert_array_equal(cov.forward(scores, mask), masked_softmax(scores, mask))  # w_c = 0
    cov.params["w_c"][:] = [-2.0, 0.5, 1.5]
    A = cov.forward(scores, mask)
    for t in range(scores.shape[2]):  # each row from scratch: c_t = sum_{t' < t} mean_h A_t'
        c_t = A[:, :, :t].mean(axis=1).sum(axis=1)  # (B, S)
        want = masked_softmax(scores[:, :, t] + cov.params["w_c"][None, :, None] * c_t[:, None], mask[:, :, 0])
        np.testing.assert_allclose(A[:, :, t], want, rtol=1e-13, err_msg=f"row {t}")
    assert np.all(A[1, :, :, 3:] == 0)  # padding never attended, never covered
    # a negative w_c looks away from what is covered: head 0 spreads out, head 2 concentrates
    spread = lambda P: -(P * np.log(np.where(P > 0, P, 1))).sum(-1)  # noqa: E731 entropy per row
    assert spread(A[:, 0, -1]).mean() > spread(masked_softmax(scores, mask)[:, 0, -1]).mean()


def test_coverage_attention_backward_matches_finite_differences(assert_grads_ok):
    rng = np.random.default_rng(1)
    scores, mask = scores_and_mask(rng, lengths=(5, 0))  # example 1 has no real key at all
    cov = Coverage(3, dtype=np.float64)
    cov.params["w_c"][:] = rng.standard_normal(3)
    G = rng.standard_normal(scores.shape)

    def f() -> float:
        return float(np.sum(cov.forward(scores, mask) * G))

    A = cov.forward(scores, mask)
    assert not A[1].any()  # the fully masked rows: zero weights
    cov.zero_grad()
    dscores = cov.backward(G, A)
    assert not dscores[1].any()  # ... and zero gradient
    assert_grads_ok(check_gradients(f, {"scores": dscores, "w_c": cov.grads["w_c"].copy()},
                                    {"scores": scores, "w_c": cov.params["w_c"]}, max_entries=None))


def test_the_attention_hooks(assert_grads_ok):
    # weights= replaces the softmax; dA_extra adds a second reader of A; without them, unchanged
    rng = np.random.default_rng(2)
    B, H, T, S, Dh = 2, 2, 4, 5, 3
    Q, K, V = rng.standard_normal((B, H, T, Dh)), rng.standard_normal((B, H, S, Dh)), rng.standard_normal((B, H, S, Dh))
    mask = key_padding_mask(lengths=[5, 2], max_len=S, dtype=np.float64)
    cov = Coverage(H, dtype=np.float64)
    plain, plain_cache = scaled_dot_product_attention(Q, K, V, mask)
    hooked, hooked_cache = scaled_dot_product_attention(Q, K, V, mask, weights=cov)
    np.testing.assert_array_equal(hooked, plain)  # w_c = 0
    cov.params["w_c"][:] = [1.2, -0.7]
    G, G_A = rng.standard_normal((B, H, T, Dh)), rng.standard_normal((B, H, T, S))

    def f() -> float:
        out, cache = scaled_dot_product_attention(Q, K, V, mask, weights=cov)
        return float(np.sum(out * G) + np.sum(cache.A * G_A))  # the loss reads out and A

    _, cache = scaled_dot_product_attention(Q, K, V, mask, weights=cov)
    cov.zero_grad()
    dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(G, cache, dA_extra=G_A, weights=cov)
    assert_grads_ok(check_gradients(f, {"Q": dQ, "K": dK, "V": dV, "w_c": cov.grads["w_c"].copy()},
                                    {"Q": Q, "K": K, "V": V, "w_c": cov.params["w_c"]}, max_entries=None))
    # no hooks: the backward is the one it always was
    dQ0, dK0, dV0, _, _ = scaled_dot_product_attention_backward(G, plain_cache)
    dQ1, dK1, dV1, _, _ = scaled_dot_product_attention_backward(G, plain_cache, None, None)
    for x, y in ((dQ0, dQ1), (dK0, dK1), (dV0, dV1)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_block_hooks_carry_the_cross_attention_weights_gradient(norm_first, assert_grads_ok):
    rng = np.random.default_rng(3)
    B, T, S, D, H = 2, 4, 5, 8, 2
    block = DecoderBlock(D, H, 12, activation="gelu", norm_first=norm_first, rng=rng, dtype=np.float64)
    randomize_norms_and_biases(block, 3)
    cov = Coverage(H, dtype=np.float64)
    cov.params["w_c"][:] = [0.9, -1.4]
    x, h_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    self_mask = causal_mask(T, dtype=np.float64)
    cross_mask = key_padding_mask(lengths=[5, 3], max_len=S, dtype=np.float64)
    G, G_A = rng.standard_normal((B, T, D)), rng.standard_normal((B, H, T, S))

    def f() -> float:
        y, cache = block.forward(x, h_enc, self_mask, cross_mask, cross_weights=cov)
        return float(np.sum(y * G) + np.sum(cache.cross_attn.f.attn.A * G_A))

    _, cache = block.forward(x, h_enc, self_mask, cross_mask, cross_weights=cov)
    block.zero_grad(), cov.zero_grad()
    dx, dh_enc = block.backward(G, cache, dA_cross=G_A, cross_weights=cov)
    analytic = {"x": dx, "h_enc": dh_enc, "w_c": cov.grads["w_c"].copy(), **block.gradients()}
    arrays = {"x": x, "h_enc": h_enc, "w_c": cov.params["w_c"], **block.parameters()}
    report = check_gradients(f, analytic, arrays, max_entries=10)
    assert_grads_ok(report, ignore=[k for k in report if k.endswith("b_k")])


# =====================================================================================
# The coverage loss
# =====================================================================================
def test_coverage_vector_and_loss_by_hand():
    a = np.array([[[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8]]])  # (1, 3, 3)
    np.testing.assert_allclose(coverage_vector(a)[0], [[0, 0, 0], [0.7, 0.2, 0.1], [1.3, 0.5, 0.2]])
    labels = np.array([[4, 5, 6]])
    # sum_i min(a_t,i, c_t,i): 0 at t = 0, 0.6 + 0.2 + 0.1 = 0.9 at t = 1, 0.1 + 0.1 + 0.2 = 0.4 at t = 2
    loss, _ = coverage_loss(a, labels, weight=2.0)
    assert loss == pytest.approx(2.0 * (0.0 + 0.9 + 0.4) / 3)
    loss, da = coverage_loss(a, np.array([[4, 5, -100]]), weight=1.0)  # the padded position counts for nothing
    assert loss == pytest.approx(0.9 / 2) and not da[0, 2].any()


def test_coverage_loss_backward_matches_finite_differences(assert_grads_ok):
    rng = np.random.default_rng(4)
    a = rng.dirichlet(np.ones(6), size=(2, 5))  # (2, 5, 6), no ties between a_t,i and c_t,i
    labels = np.array([[3, 4, 5, 6, 2], [3, 4, 2, -100, -100]])

    def f() -> float:
        return coverage_loss(a, labels, weight=0.8)[0]

    _, da = coverage_loss(a, labels, weight=0.8)
    assert_grads_ok(check_gradients(f, {"a": da}, {"a": a}, max_entries=None, h=1e-5))


# =====================================================================================
# Coverage in decoding
# =====================================================================================
def model(kind="plain", seed=3, coverage=True, max_len=10):
    cfg = ModelConfig(src_vocab_size=14, tgt_vocab_size=10, d_model=16, n_heads=4, d_ff=24, n_encoder_layers=2,
                      n_decoder_layers=2, max_len=max_len, dtype="float64", seed=seed)
    m = EncoderDecoder(cfg) if kind == "plain" else PointerGenerator(cfg, coverage=coverage)
    randomize_norms_and_biases(m, seed)
    if kind != "plain" and coverage:
        m.coverage.params["w_c"][:] = np.random.default_rng(seed).standard_normal(4)
    return m.eval()


SRC = np.array([[5, 8, 7, 6, 7, 4], [9, 4, 6, 9, 0, 0], [6, 9, 8, 0, 0, 0]])


def teacher_forced_coverage(m, src, dec_in):
    """The coverage after the positions of dec_in, from the teacher-forced forward."""
    if isinstance(m, PointerGenerator):
        a = m.copy_attention(m.forward(src, dec_in)[1])
    else:
        a = m.forward(src, dec_in)[1].decoder.layers[-1].cross_attn.f.attn.A.mean(axis=1)
    return a.sum(axis=1)  # (B, S)


def test_a_plain_model_can_carry_the_coverage_vector():
    m = model("plain")
    rng = np.random.default_rng(5)
    dec_in = np.concatenate([np.full((3, 1), BOS), rng.integers(3, 10, (3, 5))], axis=1)
    followed, plain = start_decoding(m, SRC, coverage=True), start_decoding(m, SRC)
    assert plain.coverage is None and not followed.coverage.any()
    for t in range(dec_in.shape[1]):
        logits, followed = decode_step(m, dec_in[:, t:t + 1], followed)
        want, plain = decode_step(m, dec_in[:, t:t + 1], plain)
        np.testing.assert_allclose(logits, want, rtol=0, atol=1e-12)  # following it changes nothing else
    np.testing.assert_allclose(followed.coverage, teacher_forced_coverage(m, SRC, dec_in), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="coverage"):
        start_decoding(DecoderOnly(m.config.replace(tgt_vocab_size=14)).eval(), SRC, coverage=True)


def test_coverage_penalty_by_hand():
    cov = np.array([[0.5, 1.0, 2.0, 0.0], [0.25, 0.25, 0.0, 0.0]])
    real = np.array([[True, True, True, False], [True, True, False, False]])
    np.testing.assert_allclose(coverage_penalty(cov, real, 0.2), [0.2 * np.log(0.5), 0.2 * 2 * np.log(0.25)])
    assert coverage_penalty(np.ones((1, 3)), np.ones((1, 3), bool), 1.0)[0] == 0.0  # all covered: no penalty


@pytest.mark.parametrize("kind", ["plain", "pointer"])
def test_beam_search_adds_the_coverage_penalty_of_each_hypothesis(kind):
    # Each returned score is the length-normalised log-prob plus beta sum_i log min(c_i, 1),
    # c from the teacher-forced forward of that very hypothesis: the coverage each beam
    # carried (and reordered) was its own.
    m, beta = model(kind), 0.6
    kw = dict(num_beams=3, num_return_sequences=3, max_new_tokens=4, length_penalty=1.0, early_stopping="never")
    out = beam_search(m, SRC, coverage_penalty_weight=beta, **kw)
    penalties = []
    for b in range(len(SRC)):
        for h in out.hypotheses(b):
            dec_in = np.array([[BOS, *h.tokens[:-1]]])  # one position per token, <eos> included
            c = teacher_forced_coverage(m, SRC[b:b + 1], dec_in)[0]
            cp = coverage_penalty(c, SRC[b] != 0, beta)
            penalties.append(cp)
            assert h.score == pytest.approx(length_normalized_score(h.log_prob, len(h.tokens), 1.0) + cp, abs=1e-11)
    assert min(penalties) < -0.05  # four tokens leave some of the source unread
    assert np.all(np.diff(out.scores.reshape(3, 3), axis=1) <= 0)  # ranked by the penalised score
    assert not np.allclose(beam_search(m, SRC, **kw).scores, out.scores)


def test_coverage_penalty_weight_is_checked():
    m = model("plain")
    with pytest.raises(ValueError, match="coverage_penalty_weight"):
        beam_search(m, SRC, num_beams=2, max_new_tokens=3, coverage_penalty_weight=-0.1)
    decoder_only = DecoderOnly(m.config.replace(tgt_vocab_size=14)).eval()
    with pytest.raises(ValueError, match="coverage_penalty_weight"):
        beam_search(decoder_only, SRC, num_beams=2, max_new_tokens=3, coverage_penalty_weight=0.5)


def test_mask_value_keeps_padding_out_of_the_coverage():
    # padded source positions get exp(MASK_VALUE - max) = 0 weight: coverage 0, no penalty term
    m = model("pointer")
    cache = start_decoding(m, SRC, max_len=6)
    for t in range(4):
        _, cache = decode_step(m, np.full((3, 1), BOS if t == 0 else 5), cache)
    assert np.all(cache.coverage[SRC == 0] == 0) and MASK_VALUE < -1e8
    np.testing.assert_allclose(cache.coverage.sum(axis=1), 4.0, rtol=1e-12)  # one unit of attention per step
