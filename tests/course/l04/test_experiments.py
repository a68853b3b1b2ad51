"""Lesson 4's measurements (minitf.course.l04_cross_attention), each checked against something that
would fail if it were wrong: recomputed weights, a scrambled padding, the causal
self-attention next to the unmasked cross-attention, finite differences and torch."""
import math

import numpy as np
import pytest

from minitf.course import l04_cross_attention as l4
from minitf.models import EncoderDecoder
from minitf.data.tasks import get_task


@pytest.fixture(scope="module")
def run():
    return l4.lesson4_run(seed=0)


@pytest.fixture(scope="module")
def pairs(run):
    return run.eval_pairs[:4]


def test_run_is_cached_however_the_seed_is_passed(run):
    assert l4.lesson4_run() is run and l4.lesson4_run(0) is run
    assert run.model.config.dtype == "float64" and run.model.config.n_decoder_layers == 2
    assert run.history.evals[-1]["free_running_exact_match"] > 0.8  # the model has learnt to reverse


def test_cross_attention_call_shapes_and_weights(run, pairs):
    call = l4.cross_attention_call(run, pairs)
    B, T, S = len(pairs), max(len(t) for _, t in pairs) + 1, max(len(s) for s, _ in pairs)
    D, H = run.model_config.d_model, run.model_config.n_heads
    assert call.x_q.shape == (B, T, D) and call.H_enc.shape == (B, S, D) and call.y.shape == (B, T, D)
    attn = call.cache.attn
    assert attn.Q.shape == (B, H, T, D // H) and attn.K.shape == attn.V.shape == (B, H, S, D // H)
    assert attn.A.shape == (B, H, T, S)
    assert call.max_diff_vs_model == 0.0
    # the weights, recomputed from Q, K and the source mask
    scores = attn.Q @ attn.K.swapaxes(-1, -2) / math.sqrt(D // H) + call.src_mask
    e = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(attn.A, e / e.sum(-1, keepdims=True), rtol=0, atol=1e-14)


def test_padding_gets_no_weight_and_changes_nothing(run, pairs):
    pc = l4.padding_check(run, pairs)
    assert pc.lengths.tolist() == [len(s) for s, _ in pairs] and pc.lengths.min() < pc.S  # some padding
    assert pc.weight_on_padding == 0.0 and pc.max_output_change == 0.0
    assert abs(pc.row_sums[0] - 1) < 1e-12 and abs(pc.row_sums[1] - 1) < 1e-12
    # without the mask the same scramble would change the output: the check has teeth
    call = l4.cross_attention_call(run, pairs)
    attn = run.model.decoder_layers[-1].cross_attn
    pad = call.src_mask[:, 0, 0, :] < 0
    noisy = call.H_enc.copy()
    noisy[pad] = 100.0
    y1, _ = attn.forward(call.x_q, call.H_enc, None)
    y2, _ = attn.forward(call.x_q, noisy, None)
    assert np.abs(y1 - y2).max() > 1e-3


def test_no_causal_structure_in_cross_attention(run):
    fm = l4.future_mass(run, run.eval_pairs)
    assert fm["self"] == 0.0  # the causal mask, exactly
    assert fm["cross"] > 0.3  # cross-attention reads the source's "future"
    needed = np.mean([n - 1 - t > t for s, _ in run.eval_pairs for n in [len(s)] for t in range(n)])
    assert fm["needed"] == pytest.approx(needed)


def test_expected_alignment():
    assert l4.expected_alignment(get_task("reverse"), "abcd").tolist() == [3, 2, 1, 0]
    assert l4.expected_alignment(get_task("copy"), "abc").tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="known alignment"):
        l4.expected_alignment(get_task("sort"), "abc")


def test_alignment_scores_recomputed_and_learnt(run):
    pairs = run.eval_pairs[:50]
    scores = l4.alignment_scores(run.model, run.task, pairs)
    weights = l4.cross_attention_weights(run.model, run.task.batch(pairs))
    for l in range(2):
        for h in range(2):
            hits = [A_row.argmax() == len(s) - 1 - t for b, (s, _) in enumerate(pairs)
                    for t, A_row in enumerate(weights[l][b, h, :len(s)])]
            assert scores.argmax_match[l, h] == pytest.approx(np.mean(hits))
    assert scores.positions == sum(len(s) for s, _ in pairs)
    full = l4.alignment_scores(run.model, run.task, run.eval_pairs)
    assert full.argmax_match[-1].min() > 0.8  # the last block has found the alignment
    untrained = l4.alignment_scores(EncoderDecoder(run.model_config), run.task, run.eval_pairs)
    assert np.abs(untrained.weight_on_expected - untrained.chance).max() < 0.05  # near chance


def test_alignment_example_is_the_longest_and_unpadded(run):
    ex = l4.alignment_example(run)
    n = len(ex.source)
    assert n == max(len(s) for s, _ in run.eval_pairs) and run.eval_pairs[ex.index][0] == ex.source
    assert ex.weights.shape == (2, 2, n + 1, n)
    assert ex.expected.tolist() == list(range(n - 1, -1, -1))


def test_cross_kv_computed_once(run):
    ex = l4.alignment_example(run)
    kv = l4.cross_kv_reuse(run, ex.index)
    assert kv.max_diff_vs_project_kv == 0.0 and kv.max_change_over_steps == 0.0 and kv.same_arrays
    assert kv.max_diff_vs_forward < 1e-12
    assert kv.steps == len(kv.output) + 1 and kv.output == ex.target
    assert kv.shapes == [(1, 2, len(ex.source), 16)] * 2


def test_gradient_shares_sum_and_leave_no_gradient(run, pairs):
    g = l4.gradient_shares(run, pairs)
    assert len(g.shares) == 2 and g.max_sum_error < 1e-15 and g.max_on_padding == 0.0
    assert all(n > 0 for n in g.share_norms)
    np.testing.assert_allclose(sum(g.shares), g.dH_enc, rtol=0, atol=1e-15)
    assert all(not np.any(grad) for grad in run.model.gradients().values())
    check = l4.dH_enc_gradcheck(run, pairs)
    assert check.rel_error < 1e-8 and check.entries == 30


def test_cross_attention_gradcheck(run, pairs):
    report = l4.cross_attention_gradcheck(run, pairs)
    assert {"dx_q", "dx_kv", "param:W_k", "param:W_v"} <= set(report) and "param:b_k" not in report
    assert max(report.values()) < 1e-7
    assert not any(np.any(g) for g in run.model.decoder_layers[-1].cross_attn.gradients().values())


def test_cross_attention_backward_matches_torch(run, pairs):
    torch = pytest.importorskip("torch")
    call = l4.cross_attention_call(run, pairs)
    mha = run.model.decoder_layers[-1].cross_attn
    dy = np.random.default_rng(1).standard_normal(call.y.shape)
    dx_q, dx_kv = mha.backward(dy, call.cache)
    mha.zero_grad()
    p = {k: torch.tensor(v) for k, v in mha.params.items()}
    xq = torch.tensor(call.x_q, requires_grad=True)
    xkv = torch.tensor(call.H_enc, requires_grad=True)
    B, T, D = call.x_q.shape
    S, H = call.H_enc.shape[1], mha.n_heads

    def heads(x, n):
        return x.reshape(B, n, H, D // H).transpose(1, 2)

    q = heads(xq @ p["W_q"] + p["b_q"], T)
    k, v = heads(xkv @ p["W_k"] + p["b_k"], S), heads(xkv @ p["W_v"] + p["b_v"], S)
    A = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // H) + torch.tensor(call.src_mask), dim=-1)
    y = (A @ v).transpose(1, 2).reshape(B, T, D) @ p["W_o"] + p["b_o"]
    np.testing.assert_allclose(y.detach().numpy(), call.y, rtol=0, atol=1e-12)
    y.backward(torch.tensor(dy))
    np.testing.assert_allclose(dx_q, xq.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dx_kv, xkv.grad.numpy(), rtol=0, atol=1e-12)


def test_embedding_paths_split_the_shared_tables_gradient(run, pairs):
    """The lesson's table is shared and tied: its gradient is the source lookup's (through
    dH_enc), the decoder input's and the head's, which add up to it; the encoder's blocks get
    the same gradient either way, since their only signal is dH_enc."""
    cfg = run.model_config
    assert cfg.share_embeddings and cfg.tie_output
    paths = l4.embedding_paths(run, pairs)
    assert paths.max_sum_error < 1e-12 and paths.encoder_blocks_untied_error < 1e-12
    for part in (paths.through_encoder, paths.decoder_input, paths.head):
        assert part.shape == paths.total.shape and np.linalg.norm(part) > 0  # each path carries gradient
    assert all(not np.any(g) for g in run.model.gradients().values())  # nothing left behind
    # the source lookup's part is what the encoder's backward hands to the embedding: zero rows for
    # tokens that no source contains
    batch = run.task.batch(pairs)
    unseen = np.setdiff1d(np.arange(cfg.src_vocab_size), batch.input_ids)
    np.testing.assert_array_equal(paths.through_encoder[unseen], 0.0)
    with pytest.raises(ValueError, match="shared and tied"):
        l4.embedding_paths(run._replace(model=EncoderDecoder(cfg.replace(share_embeddings=False, tie_output=False))),
                           pairs)
