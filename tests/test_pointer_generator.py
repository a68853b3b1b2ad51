"""The pointer-generator (minitf.models.pointer_generator): the extended vocabulary, the
scatter-add, the mixture and p_gen, the whole model's backward (copy and coverage, with the
coverage loss) against float64 finite differences and against torch autograd on a reference
written from torch primitives, and decoding over the extended vocabulary (cached = uncached,
copied ids mapped back to source tokens).  Coverage alone: tests/test_coverage.py.

Finite differences: as tests/test_model_gradcheck.py (fourth-order stencil, h = 1e-3, every
parameter tensor sampled, relative error <= 1e-6 with the denominator floored at 1e-6).
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.decoding import beam_search, decode_step, greedy_search, sample, start_decoding
from minitf.gradcheck import check_gradients, numerical_gradient, randomize_norms_and_biases, sample_indices
from minitf.layers.softmax import softmax
from minitf.loss import cross_entropy
from minitf.models import EncoderDecoder, PointerGenerator, copy_nll, coverage_loss, mixture_log_probs
from minitf.models.pointer_generator import CopyHead, gather, scatter_add, sigmoid_pair

REL_TOL = 1e-6
FLOOR = 1e-6
PAD, BOS, EOS, UNK = 0, 1, 2, 3
V_SRC, V_TGT = 14, 10  # source ids 10..13 are source-only: not in the output vocabulary


def config(**overrides) -> ModelConfig:
    base = dict(src_vocab_size=V_SRC, tgt_vocab_size=V_TGT, d_model=8, n_heads=2, d_ff=12, n_encoder_layers=2,
                n_decoder_layers=2, max_len=8, activation="gelu", dtype="float64", seed=7)
    base.update(overrides)
    return ModelConfig(**base)


def randomized(model: PointerGenerator, seed: int = 0, b_ptr: float = 0.0) -> PointerGenerator:
    """Random LayerNorm gains/biases, attention biases, copy-head and coverage weights: every
    path carries a distinct signal (a zero w_c would leave the coverage term untested)."""
    randomize_norms_and_biases(model, seed)
    rng = np.random.default_rng(seed + 100)
    for name in ("w_h", "w_s", "w_x"):
        model.copy.params[name][:] = 0.5 * rng.standard_normal(model.config.d_model)
    model.copy.params["b_ptr"][:] = b_ptr
    if model.coverage is not None:
        model.coverage.params["w_c"][:] = rng.standard_normal(model.config.n_heads)
    return model


# the sources: 12 twice (one extended id, both positions' weights), 11 and 13 source-only, padding
SRC = np.array([[5, 12, 11, 12, 7], [13, 4, 10, 0, 0]])
# the targets, as source-vocabulary ids: copies of 12, 11, 13 and 10; 9 is in both vocabularies
TOKENS = np.array([[12, 5, 11, 9, 2], [13, 10, 2, -100, -100]])


def teacher_forced(model: PointerGenerator, src=SRC, tokens=TOKENS):
    """(labels, decoder_input_ids) in the extended vocabulary: the decoder input is the label
    shifted right behind <bos> (a copied id stays extended: the model reads it as <unk>)."""
    labels = model.to_extended(tokens, model.extend_source(src))
    dec_in = np.concatenate([np.full((len(src), 1), BOS), np.where(labels == -100, PAD, labels)[:, :-1]], axis=1)
    return labels, dec_in


def floored_rel_error(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(FLOOR, np.abs(a) + np.abs(b)), initial=0.0))


# =====================================================================================
# The extended vocabulary
# =====================================================================================
def test_extend_source_numbers_each_examples_source_only_tokens():
    model = PointerGenerator(config())
    ext = model.extend_source(SRC)
    V = V_TGT
    # example 0: 12 first (V + 0, both occurrences), then 11 (V + 1); 5 and 7 are output ids
    # example 1: 13 (V + 0); 4 is an output id; padding stays padding
    np.testing.assert_array_equal(ext.ids, [[5, V, V + 1, V, 7], [V, 4, V + 1, PAD, PAD]])
    np.testing.assert_array_equal(ext.oov, [[12, 11], [13, 10]])
    assert ext.vocab_size == V + 2
    # an example with fewer source-only tokens than another has -1 past its own
    ext = model.extend_source(np.array([[12, 4, 0], [5, 6, 7]]))
    np.testing.assert_array_equal(ext.oov, [[12], [-1]])
    assert ext.vocab_size == V + 1
    assert model.extend_source(np.array([[5, 6]])).vocab_size == V  # nothing to extend


def test_to_extended_and_back():
    model = PointerGenerator(config())
    source = model.extend_source(SRC)
    labels = model.to_extended(TOKENS, source)
    V = V_TGT
    np.testing.assert_array_equal(labels, [[V, 5, V + 1, 9, EOS], [V, V + 1, EOS, -100, -100]])
    # a source-only token absent from the example's source cannot be copied: <unk>
    np.testing.assert_array_equal(model.to_extended(np.array([[11, 13]]), model.extend_source(SRC[1:])),
                                  [[UNK, V]])
    # back to source-vocabulary ids, with R = 2 rows per example (as beam search returns them)
    rows = np.repeat(np.where(labels == -100, PAD, labels), 2, axis=0)
    back = model.from_extended(rows, source)
    np.testing.assert_array_equal(back, np.repeat(np.where(TOKENS == -100, PAD, TOKENS), 2, axis=0))
    np.testing.assert_array_equal(model.decoder_input(labels[0]), [UNK, 5, UNK, 9, EOS])


def test_a_custom_vocabulary_map():
    # source ids 4..13 are output ids 13 - s (reversed); 0..3 the specials, shared
    src_to_tgt = np.array([0, 1, 2, 3] + [-1] * 4 + [9, 8, 7, 6, 5, 4])
    model = PointerGenerator(config(), src_to_tgt=src_to_tgt)
    source = model.extend_source(np.array([[8, 4, 13, 5, 4]]))
    np.testing.assert_array_equal(source.ids, [[9, V_TGT, 4, V_TGT + 1, V_TGT]])
    np.testing.assert_array_equal(model.from_extended(source.ids, source), [[8, 4, 13, 5, 4]])
    with pytest.raises(ValueError, match="src_to_tgt"):
        PointerGenerator(config(), src_to_tgt=np.arange(V_SRC))  # ids >= V_TGT are no output ids


def test_scatter_add_sums_repeated_tokens_and_gather_is_its_adjoint():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 5))
    ids = np.array([[5, 10, 11, 10, 7], [10, 4, 11, 0, 0]])
    out = scatter_add(a, ids, 12)
    want = np.zeros((2, 3, 12))
    for b in range(2):
        for t in range(3):
            for i in range(5):
                want[b, t, ids[b, i]] += a[b, t, i]
    np.testing.assert_array_equal(out, want)  # both occurrences of 10 counted
    g = rng.standard_normal((2, 3, 12))
    assert np.sum(out * g) == pytest.approx(np.sum(a * gather(g, ids)), rel=1e-14)  # <S a, g> = <a, S^T g>


def test_sigmoid_pair_keeps_the_small_side_exact():
    z = np.array([-40.0, -5.0, 0.0, 5.0, 40.0])
    p_gen, p_copy = sigmoid_pair(z)
    exact = 1.0 / (1.0 + np.exp(-z))
    np.testing.assert_allclose(p_gen, exact, rtol=1e-15)
    np.testing.assert_allclose(p_copy, np.exp(-z) / (1.0 + np.exp(-z)), rtol=1e-15)  # 1 - p_gen, not by subtraction
    assert p_copy[-1] > 0  # 1 - sigma(40) would be 0 in float64


# =====================================================================================
# The mixture
# =====================================================================================
def test_forward_is_the_mixture_of_see_et_al():
    model = randomized(PointerGenerator(config()))
    _, dec_in = teacher_forced(model)
    P, cache = model.forward(SRC, dec_in)
    c = cache.decoder.copy
    np.testing.assert_allclose(P.sum(axis=-1), 1.0, rtol=0, atol=1e-14)  # a distribution over V_ext
    # P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: x_i = w} a_i, entry by entry
    ids = model.extend_source(SRC).ids
    for b, t in np.ndindex(P.shape[:2]):
        for w in range(P.shape[-1]):
            gen = c.p_gen[b, t] * c.P_vocab[b, t, w] if w < V_TGT else 0.0
            copy = (1 - c.p_gen[b, t]) * c.a[b, t, ids[b] == w].sum()
            assert P[b, t, w] == pytest.approx(gen + copy, rel=1e-12, abs=1e-15)
    # a is the last block's cross-attention averaged over heads; the context is a H_enc
    A = cache.decoder.stack.layers[-1].cross_attn.f.attn.A  # (B, H, T, S)
    np.testing.assert_allclose(c.a, A.mean(axis=1), rtol=1e-15)
    H_enc, _ = model.encode(SRC)
    np.testing.assert_allclose(c.context, np.einsum("bts,bsd->btd", c.a, H_enc), rtol=1e-12)
    # p_gen reads the context, the decoder state H_dec and the decoder input
    p = model.copy.params
    z = c.context @ p["w_h"] + c.s @ p["w_s"] + c.x @ p["w_x"] + p["b_ptr"]
    np.testing.assert_allclose(c.p_gen, 1 / (1 + np.exp(-z)), rtol=1e-14)
    np.testing.assert_array_equal(c.s, cache.decoder.stack.H_dec)


def test_with_p_gen_one_it_is_the_plain_encoder_decoder():
    # The transformer's weights are EncoderDecoder(config)'s; with p_gen -> 1 and no coverage
    # the mixture is its softmax, and the loss gradients are its cross-entropy gradients.
    cfg = config()
    model = PointerGenerator(cfg, coverage=False)
    model.copy.params["b_ptr"][:] = 60.0  # 1 - p_gen = e^-60
    plain = EncoderDecoder(cfg)
    for name, p in plain.parameters().items():
        np.testing.assert_array_equal(model.parameters()[name], p, err_msg=name)
    labels, dec_in = teacher_forced(model, tokens=np.array([[4, 5, 6, 9, 2], [7, 8, 2, -100, -100]]))
    P, cache = model.forward(SRC, dec_in)
    logits, plain_cache = plain.forward(SRC, dec_in)
    np.testing.assert_allclose(P[..., :V_TGT], softmax(logits), rtol=1e-12)
    loss, dP = copy_nll(P, labels)
    plain_loss, dlogits = cross_entropy(logits, labels)
    assert loss == pytest.approx(plain_loss, rel=1e-12)
    model.zero_grad(), plain.zero_grad()
    model.backward(dP, cache)
    plain.backward(dlogits, plain_cache)
    for name, g in plain.gradients().items():
        np.testing.assert_allclose(model.gradients()[name], g, rtol=1e-9, atol=1e-13, err_msg=name)


def test_copy_nll_and_its_gradient():
    rng = np.random.default_rng(1)
    P = softmax(rng.standard_normal((2, 3, 6)))
    labels = np.array([[1, 5, 0], [2, -100, -100]])
    loss, dP = copy_nll(P, labels)
    assert loss == pytest.approx(-np.log([P[0, 0, 1], P[0, 1, 5], P[0, 2, 0], P[1, 0, 2]]).mean(), rel=1e-14)
    assert np.count_nonzero(dP) == 4 and dP[0, 1, 5] == pytest.approx(-1 / (4 * P[0, 1, 5]))
    P[0, 1, 5] = 0.0  # a label nothing can produce: a copied id absent from the source
    with pytest.raises(ValueError, match="probability 0"):
        copy_nll(P, labels)


# =====================================================================================
# Backward against finite differences
# =====================================================================================
def test_copy_head_backward_matches_finite_differences(assert_grads_ok):
    rng = np.random.default_rng(2)
    B, T, S, D, V, V_ext = 2, 3, 5, 4, 6, 8
    head = CopyHead(D, rng=rng, dtype=np.float64)
    head.params["b_ptr"][:] = 0.3
    logits, context, s, x = (rng.standard_normal(shape) for shape in [(B, T, V)] + [(B, T, D)] * 3)
    a = softmax(rng.standard_normal((B, T, S)))
    src_ext = np.array([[6, 1, 7, 6, 0], [2, 6, 3, 4, 7]])  # 6 twice in example 0
    G = rng.standard_normal((B, T, V_ext))

    def f() -> float:
        return float(np.sum(head.forward(logits, context, s, x, a, src_ext, V_ext)[0] * G))

    _, cache = head.forward(logits, context, s, x, a, src_ext, V_ext)
    head.zero_grad()
    dlogits, dcontext, ds, dx, da = head.backward(G, cache)
    analytic = {"logits": dlogits, "context": dcontext, "s": ds, "x": dx, "a": da, **head.gradients()}
    arrays = {"logits": logits, "context": context, "s": s, "x": x, "a": a, **head.parameters()}
    assert_grads_ok(check_gradients(f, analytic, arrays, max_entries=None))


def check_every_tensor(f, model, max_entries: int, seed: int = 0) -> dict[str, float]:
    """Sampled finite-difference errors of every parameter (tests/test_model_gradcheck.py's check)."""
    analytic = {k: g.copy() for k, g in model.gradients().items()}
    rng = np.random.default_rng(seed)
    report = {}
    for name, p in model.parameters().items():
        if name.endswith(".b_k"):  # softmax-invariant: an exactly zero true gradient
            assert np.max(np.abs(analytic[name])) < 1e-12, f"{name}: expected a zero gradient"
            continue
        idx = sample_indices(p.shape, max_entries, rng)
        num = numerical_gradient(f, p, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        report[name] = floored_rel_error(analytic[name][picked], num[picked])
    worst = max(report, key=report.get)
    assert report[worst] <= REL_TOL, f"worst: {worst} {report[worst]:.2e}; " + ", ".join(
        f"{k}={v:.1e}" for k, v in sorted(report.items(), key=lambda kv: -kv[1])[:8])
    return report


def loss_and_backward(model, labels, dec_in, coverage_weight):
    P, cache = model.forward(SRC, dec_in)
    loss, dP = copy_nll(P, labels)
    da = None
    if coverage_weight:
        cov, da = coverage_loss(model.copy_attention(cache), labels, coverage_weight)
        loss += cov
    model.zero_grad()
    return loss, model.backward(dP, cache, da)


CASES = {  # name: (config overrides, coverage, coverage-loss weight, entries sampled per tensor)
    "pre_ln_coverage": (dict(), True, 0.7, 8),
    "post_ln_tied_learned_coverage": (dict(norm_first=False, tie_output=True, positional="learned"), True, 1.3, 5),
    "pre_ln_copy_only": (dict(n_decoder_layers=1), False, 0.0, 5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_whole_model_gradients_match_finite_differences(case):
    overrides, coverage, weight, entries = CASES[case]
    model = randomized(PointerGenerator(config(**overrides), coverage=coverage), b_ptr=-0.5)
    labels, dec_in = teacher_forced(model)

    def f() -> float:
        P, cache = model.forward(SRC, dec_in)
        loss = copy_nll(P, labels)[0]
        return loss + (coverage_loss(model.copy_attention(cache), labels, weight)[0] if weight else 0.0)

    _, grads = loss_and_backward(model, labels, dec_in, weight)
    report = check_every_tensor(f, model, entries)
    assert ("coverage.w_c" in report) == coverage and "copy.w_h" in report
    # the copy attention's gradient reaches the encoder through the last block's K (and the context)
    H_enc, _ = model.encode(SRC)
    memory = H_enc.copy()

    def f_memory() -> float:
        P, cache = model.decode(dec_in, memory, model.source_mask(SRC), source=model.extend_source(SRC))
        loss = copy_nll(P, labels)[0]
        return loss + (coverage_loss(model.copy_attention(cache), labels, weight)[0] if weight else 0.0)

    assert floored_rel_error(grads.dH_enc, numerical_gradient(f_memory, memory)) <= REL_TOL
    np.testing.assert_allclose(grads.dH_enc, sum(grads.dH_enc_shares) + grads.dH_enc_context, rtol=1e-12)


# =====================================================================================
# Against torch autograd, on a reference written from torch primitives
# =====================================================================================
def torch_pointer_generator_loss(model: PointerGenerator, params: dict, src, dec_in, labels, weight):
    """The same loss as copy_nll + coverage_loss over model.forward, in torch ops only."""
    import torch
    import torch.nn.functional as F

    c = model.config
    D, H = c.d_model, c.n_heads
    Dh = D // H
    src_t, dec_t = torch.from_numpy(src), torch.from_numpy(model.decoder_input(dec_in))
    mask_value = -1e9
    src_mask = torch.where(src_t == c.pad_id, mask_value, 0.0)[:, None, None, :]  # (B, 1, 1, S)
    T = dec_t.shape[1]
    causal = torch.triu(torch.full((T, T), mask_value, dtype=torch.float64), diagonal=1)  # (T, T)

    def embed(ids, table, pos_name, pos_module):
        x = F.embedding(ids, table, padding_idx=c.pad_id) * D ** 0.5
        P = params[pos_name] if c.positional == "learned" else torch.from_numpy(pos_module.table)
        return x + P[:ids.shape[1]]

    def ln(x, name):
        return F.layer_norm(x, (D,), params[name + ".gamma"], params[name + ".beta"], c.layer_norm_eps)

    def split(x):  # (B, L, D) -> (B, H, L, Dh)
        return x.reshape(x.shape[0], x.shape[1], H, Dh).transpose(1, 2)

    def attention(name, x_q, x_kv, mask, w_c=None):
        p = lambda k: params[f"{name}.{k}"]  # noqa: E731
        q, k, v = split(x_q @ p("W_q") + p("b_q")), split(x_kv @ p("W_k") + p("b_k")), split(x_kv @ p("W_v") + p("b_v"))
        scores = q @ k.transpose(-1, -2) / Dh ** 0.5 + mask  # (B, H, T, S)
        if w_c is None:
            A = torch.softmax(scores, dim=-1)
        else:  # coverage: row t's scores get w_c c_t, c_t the sum of the earlier rows' mean weights
            cov = torch.zeros(scores.shape[0], scores.shape[-1], dtype=scores.dtype)
            rows = []
            for t in range(scores.shape[2]):
                rows.append(torch.softmax(scores[:, :, t] + w_c[None, :, None] * cov[:, None, :], dim=-1))
                cov = cov + rows[-1].mean(dim=1)
            A = torch.stack(rows, dim=2)
        o = (A @ v).transpose(1, 2).reshape(x_q.shape[0], x_q.shape[1], D)
        return o @ p("W_o") + p("b_o"), A

    def ff(name, x):
        h = F.gelu(x @ params[f"{name}.ff.linear1.W"] + params[f"{name}.ff.linear1.b"])
        return h @ params[f"{name}.ff.linear2.W"] + params[f"{name}.ff.linear2.b"]

    def sublayer(x, f, norm):
        if c.norm_first:
            out, extra = f(ln(x, norm))
            return x + out, extra
        out, extra = f(x)
        return ln(x + out, norm), extra

    x = embed(src_t, params["src_embed.W_E"], "src_pos.W_pos", model.src_pos)
    for l in range(c.n_encoder_layers):
        e = f"encoder_layers.{l}"
        x, _ = sublayer(x, lambda h: attention(f"{e}.self_attn", h, h, src_mask), f"{e}.norm1")
        x, _ = sublayer(x, lambda h: (ff(e, h), None), f"{e}.norm2")
    H_enc = ln(x, "encoder_norm")
    tgt_table = params["src_embed.W_E"] if c.share_embeddings else params["tgt_embed.W_E"]
    x0 = embed(dec_t, tgt_table, "tgt_pos.W_pos", model.tgt_pos)
    x = x0
    for l in range(c.n_decoder_layers):
        d = f"decoder_layers.{l}"
        w_c = params["coverage.w_c"] if model.coverage is not None and l == c.n_decoder_layers - 1 else None
        x, _ = sublayer(x, lambda h: attention(f"{d}.self_attn", h, h, causal), f"{d}.norm1")
        x, A = sublayer(x, lambda h: attention(f"{d}.cross_attn", h, H_enc, src_mask, w_c), f"{d}.norm2")
        x, _ = sublayer(x, lambda h: (ff(d, h), None), f"{d}.norm3")
    H_dec = ln(x, "decoder_norm")
    W_U = tgt_table.T if c.tie_output else params["W_U"]
    P_vocab = torch.softmax(H_dec @ W_U, dim=-1)  # (B, T, V)
    a = A.mean(dim=1)  # (B, T, S)
    context = a @ H_enc
    z = context @ params["copy.w_h"] + H_dec @ params["copy.w_s"] + x0 @ params["copy.w_x"] + params["copy.b_ptr"]
    p_gen = torch.sigmoid(z)[..., None]  # (B, T, 1)
    source = model.extend_source(src)
    index = torch.from_numpy(source.ids)[:, None, :].expand(-1, T, -1)  # (B, T, S)
    P = torch.zeros(P_vocab.shape[:2] + (source.vocab_size,), dtype=torch.float64)
    P = P.scatter_add(2, index, (1 - p_gen) * a)  # (B, T, V_ext) the copy part
    P = P + F.pad(p_gen * P_vocab, (0, source.vocab_size - c.tgt_vocab_size))
    lab = torch.from_numpy(labels)
    real = lab != -100
    p_y = torch.gather(P, 2, torch.where(real, lab, 0)[..., None])[..., 0]
    loss = -(torch.log(p_y) * real).sum() / real.sum()
    if weight:
        cov = torch.cumsum(a, dim=1) - a  # c_t = sum_{t' < t} a_t'
        loss = loss + weight * (torch.minimum(a, cov).sum(-1) * real).sum() / real.sum()
    return loss


@pytest.mark.parametrize("case", list(CASES))
def test_whole_model_matches_torch_autograd(case):
    torch = pytest.importorskip("torch")
    overrides, coverage, weight, _ = CASES[case]
    model = randomized(PointerGenerator(config(**overrides), coverage=coverage), b_ptr=-0.5)
    labels, dec_in = teacher_forced(model)
    loss, _ = loss_and_backward(model, labels, dec_in, weight)
    params = {name: torch.tensor(p, requires_grad=True) for name, p in model.parameters().items()}
    ref = torch_pointer_generator_loss(model, params, SRC, dec_in, labels, weight)
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    worst = {}
    for name, p in params.items():
        ours, theirs = model.gradients()[name], p.grad.numpy()
        if name.endswith(".b_k"):  # both rounding noise around an exact 0
            assert np.abs(ours).max() < 1e-13 and np.abs(theirs).max() < 1e-13, name
            continue
        worst[name] = float(np.max(np.abs(ours - theirs) / np.maximum(1e-12, np.abs(ours) + np.abs(theirs))))
    name = max(worst, key=worst.get)
    assert worst[name] <= 1e-8, f"{name}: {worst[name]:.2e}"


# =====================================================================================
# Decoding over the extended vocabulary
# =====================================================================================
DEC_SRC = np.array([[5, 12, 11, 12, 7, 4], [13, 4, 10, 13, 0, 0], [6, 9, 8, 0, 0, 0]])


def decoding_model(coverage=True, b_ptr=0.0, norm_first=True, seed=3):
    cfg = config(d_model=16, n_heads=4, d_ff=24, max_len=10, norm_first=norm_first, seed=seed)
    return randomized(PointerGenerator(cfg, coverage=coverage), seed, b_ptr).eval()


@pytest.mark.parametrize("coverage, norm_first", [(True, True), (True, False), (False, True)])
def test_cached_steps_equal_the_teacher_forced_forward(coverage, norm_first):
    model = decoding_model(coverage, norm_first=norm_first)
    rng = np.random.default_rng(4)
    source = model.extend_source(DEC_SRC)
    dec_in = np.concatenate([np.full((3, 1), BOS), rng.integers(3, source.vocab_size, (3, 6))], axis=1)  # copies too
    P, _ = model.forward(DEC_SRC, dec_in)
    want = mixture_log_probs(P)  # (B, T, V_ext)
    cache = start_decoding(model, DEC_SRC, max_len=8)
    for t in range(dec_in.shape[1]):
        logp, cache = decode_step(model, dec_in[:, t:t + 1], cache)
        np.testing.assert_allclose(logp[:, 0], want[:, t], rtol=0, atol=1e-12, err_msg=f"step {t}")
    # the carried coverage is the sum of the copy attention over the decoded positions
    a = model.copy_attention(model.forward(DEC_SRC, dec_in)[1])
    np.testing.assert_allclose(cache.coverage, a.sum(axis=1), rtol=0, atol=1e-12)
    # a chunk of positions in one step: the same
    chunk = start_decoding(model, DEC_SRC, max_len=8)
    logp, chunk = decode_step(model, dec_in[:, :4], chunk)
    np.testing.assert_allclose(logp, want[:, :4], rtol=0, atol=1e-12)


@pytest.mark.parametrize("coverage", [True, False])
def test_greedy_cached_equals_uncached_over_the_extended_vocabulary(coverage):
    model = decoding_model(coverage, b_ptr=-1.0)
    cached = greedy_search(model, DEC_SRC, max_new_tokens=8)
    uncached = greedy_search(model, DEC_SRC, max_new_tokens=8, use_cache=False)
    np.testing.assert_array_equal(cached.sequences, uncached.sequences)
    np.testing.assert_allclose(cached.log_probs, uncached.log_probs, rtol=0, atol=1e-12)
    assert (cached.sequences >= V_TGT).any()  # copies of source-only tokens were emitted


def rescored(model, src, hyps_per_example):
    """The sum of the teacher-forced forward's log P over each hypothesis's tokens."""
    out = []
    for b, hyps in enumerate(hyps_per_example):
        for h in hyps:
            dec_in = np.array([[BOS, *h.tokens[:-1]]])
            logp = mixture_log_probs(model.forward(src[b:b + 1], dec_in)[0])[0]  # (T, V_ext)
            out.append(logp[np.arange(len(h.tokens)), list(h.tokens)].sum())
    return np.array(out)


def test_beam_search_over_the_extended_vocabulary_scores_what_the_model_says():
    # Beams reorder their coverage with their keys and values: a wrong reorder would score a
    # beam with another's coverage, and the re-scored sums below would disagree.
    model = decoding_model(True, b_ptr=-0.5)
    out = beam_search(model, DEC_SRC, num_beams=4, num_return_sequences=3, max_new_tokens=7, length_penalty=0.0,
                      early_stopping="never")
    hyps = [out.hypotheses(b) for b in range(len(DEC_SRC))]
    np.testing.assert_allclose([h.log_prob for hs in hyps for h in hs], rescored(model, DEC_SRC, hyps),
                               rtol=0, atol=1e-11)
    assert any(t >= V_TGT for hs in hyps for h in hs for t in h.tokens)


def test_copied_ids_map_back_to_the_source_tokens():
    # With p_gen ~ 0 every token is copied: each output id is the extended id of a token of the
    # example's own source, and from_extended gives back that source token.
    model = decoding_model(True, b_ptr=-40.0)
    source = model.extend_source(DEC_SRC)
    for out in (greedy_search(model, DEC_SRC, max_new_tokens=6, eos_id=None),
                beam_search(model, DEC_SRC, num_beams=3, num_return_sequences=2, max_new_tokens=6, eos_id=None),
                sample(model, DEC_SRC, rng=0, num_return_sequences=2, max_new_tokens=6, eos_id=None)):
        R = out.num_return
        tokens = model.from_extended(out.sequences, source)  # (B*R, 6) source-vocabulary ids
        for n, (ext_row, row) in enumerate(zip(out.sequences, tokens)):
            b = n // R
            real = DEC_SRC[b][DEC_SRC[b] != PAD]
            assert set(row) <= set(real), (n, row, real)
            for ext, tok in zip(ext_row, row):  # the id is that token's extended id in this example
                assert ext == source.ids[b][list(DEC_SRC[b]).index(tok)]
        assert (out.sequences >= V_TGT).any() and (out.sequences < V_TGT).any()


def test_a_cache_must_belong_to_its_model():
    model = decoding_model()
    plain = EncoderDecoder(model.config).eval()
    with pytest.raises(ValueError, match="cache"):
        decode_step(model, np.full((3, 1), BOS), start_decoding(plain, DEC_SRC))
    with pytest.raises(ValueError, match="cache"):
        decode_step(plain, np.full((3, 1), BOS), start_decoding(model, DEC_SRC))
    with pytest.raises(ValueError, match="decoder_input_ids"):  # beyond this batch's extended vocabulary
        decode_step(model, np.full((3, 1), model.extend_source(DEC_SRC).vocab_size), start_decoding(model, DEC_SRC))
