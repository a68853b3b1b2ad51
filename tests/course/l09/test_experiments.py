"""Tests for minitf.course.l09_inference: Lesson 9's run and the measurements behind its notebook
and figures."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.bench.decode import reference_config
from minitf.course import l09_inference as l9
from minitf.decoding import greedy_search, start_decoding
from minitf.models import EncoderDecoder


# ---- the lesson's run ----------------------------------------------------------------------------------
def test_lesson9_run_is_cached_and_trained():
    run = l9.lesson9_run(0)
    assert l9.lesson9_run(0) is run
    assert not run.model.training
    assert run.model.dtype == np.float64  # the same numbers on any BLAS
    assert len(run.eval_pairs) == l9.EVAL_SIZE
    assert run.history.loss[-1] < run.history.loss[0] / 3, "the lesson's model did not learn"
    with pytest.raises(TypeError, match="seed"):
        l9.lesson9_run("0")


def test_lesson9_run_is_one_run_however_the_seed_is_spelt():
    """The notebook calls lesson9_run(seed=0), the figures lesson9_run(0): one training."""
    run = l9.lesson9_run(seed=0)
    assert l9.lesson9_run() is run and l9.lesson9_run(0) is run
    assert l9.lesson9_showcase() is l9.lesson9_showcase(0, l9.SHOWCASE_BEAMS) is l9.lesson9_showcase(seed=0)


def test_eval_pairs_are_held_out_of_training():
    run = l9.lesson9_run(0)
    seen = set()
    batches = run.task.batches(run.train_config.batch_size, np.random.default_rng(run.train_config.seed),
                               exclude=[s for s, _ in run.eval_pairs])
    for _ in range(5):
        b = next(batches)
        seen |= set(run.task.tokenizer.decode_batch(b.input_ids))
    assert not seen & {s for s, _ in run.eval_pairs}


def test_exact_match_compares_each_output_with_its_target():
    run = l9.lesson9_run(0)
    tok = run.task.tokenizer
    ids = [tok.encode(t, add_eos=True) for _, t in run.eval_pairs]
    seqs = np.full((len(ids), max(map(len, ids)) + 1), tok.pad_id)  # padded after <eos>, as the decoders do
    for i, row in enumerate(ids):
        seqs[i, :len(row)] = row
    assert l9.exact_match(run, seqs).all()
    seqs[0, 0] = tok.eos_id  # an output that stops at once
    right = l9.exact_match(run, seqs)
    assert not right[0] and right[1:].all()


def test_showcase_beam_beats_greedy_and_its_scores_add_up():
    run = l9.lesson9_run(0)
    sc = l9.lesson9_showcase(0)
    assert run.eval_pairs[sc.index] == (sc.source, sc.target)
    assert sc.beam.log_prob > sc.greedy.log_prob
    assert sc.beam.tokens != sc.greedy.tokens
    assert 1 <= sc.n_right_instead <= sc.n_gain <= len(run.eval_pairs)
    # where the two first part, greedy took the locally best token: beam search's is less likely there
    j = next(i for i, (g, b) in enumerate(zip(sc.greedy.tokens, sc.beam.tokens)) if g != b)
    assert sc.greedy_token_log_probs[j] > sc.beam_token_log_probs[j]
    np.testing.assert_allclose(sc.greedy_token_log_probs[:j], sc.beam_token_log_probs[:j], atol=1e-6)
    # per-token log-probs (one teacher-forced pass) add up to what the decoders reported (cached steps)
    assert sc.greedy_token_log_probs.sum() == pytest.approx(sc.greedy.log_prob, abs=1e-9)
    assert sc.beam_token_log_probs.sum() == pytest.approx(sc.beam.log_prob, abs=1e-9)
    # and the trace's last candidates include the winning hypothesis, finished
    finished = [h for s in sc.trace for h in s.finished]
    assert any(h.tokens == sc.beam.tokens and h.finished for h in finished)


def test_token_log_probs_match_a_greedy_run():
    run = l9.lesson9_run(0)
    src = run.task.batch(run.eval_pairs[:1]).input_ids
    out = greedy_search(run.model, src, max_new_tokens=run.max_new_tokens).hypotheses(0)[0]
    lp = l9.token_log_probs(run.model, src, out.tokens)
    assert lp.shape == (len(out.tokens),)
    assert lp.sum() == pytest.approx(out.log_prob, abs=1e-9)


def test_sequence_log_probs_sum_each_targets_token_log_probs():
    run = l9.lesson9_run(0)
    pairs = run.eval_pairs[:3]  # different lengths, so the batch has target padding
    batch = run.task.batch(pairs)
    assert (batch.labels == -100).any()
    got = l9.sequence_log_probs(run.model, batch)
    tok = run.task.tokenizer
    for i, (s, t) in enumerate(pairs):
        one = run.task.batch([(s, t)]).input_ids
        assert got[i] == pytest.approx(l9.token_log_probs(run.model, one, tok.encode(t, add_eos=True)).sum(), abs=1e-9)
    assert (got < 0).all()


# ---- section 2: the caches, watched ----------------------------------------------------------------------
def test_first_right_example_is_the_first_greedy_gets_right():
    run = l9.lesson9_run(0)
    i = l9.first_right_example(run)
    src = run.task.batch(run.eval_pairs).input_ids
    right = l9.exact_match(run, greedy_search(run.model, src, max_new_tokens=run.max_new_tokens).sequences)
    assert right[i] and not right[:i].any()


def test_kv_cache_snapshots_grow_by_one_row_and_keep_the_cross_keys():
    run = l9.lesson9_run(0)
    c = run.model_config
    out, fed, capacity, snaps = l9.kv_cache_snapshots(run, 0, steps=(1, 2, 3), last=True)
    n = len(out.tokens)
    assert list(snaps) == sorted({1, 2, 3, n}) and capacity == n
    assert fed[0] == c.bos_id and fed[1:] == list(out.tokens[:-1])
    S = run.task.batch(run.eval_pairs[:1]).input_ids.shape[1]
    for step, s in snaps.items():
        assert s.K_self.shape == (step, c.d_head) and s.self_shape == (1, c.n_heads, step, c.d_head)
        assert s.K_cross.shape == (S, c.d_head) and s.cross_shape == (1, c.n_heads, S, c.d_head)
        np.testing.assert_array_equal(s.K_cross, snaps[1].K_cross)  # computed once, never touched
        np.testing.assert_array_equal(s.K_self[:1], snaps[1].K_self)  # a written row never changes
        assert s.nbytes["cross_attention"] == snaps[1].nbytes["cross_attention"]
    # the same keys as a fresh cache fed the same tokens at once
    cache = start_decoding(run.model, run.task.batch(run.eval_pairs[:1]).input_ids)
    np.testing.assert_allclose(cache.layers[0].K_cross[0, 0], snaps[1].K_cross, rtol=0, atol=0)
    _, last_only, _, snaps_last = l9.kv_cache_snapshots(run, 0, steps=(), last=True)
    assert list(snaps_last) == [n] and last_only == fed


# ---- section 2: what a step costs ------------------------------------------------------------------------
def test_decoder_step_macs_follow_the_shapes():
    c = reference_config()
    D, F, V, L, S = c.d_model, c.d_ff, c.tgt_vocab_size, c.n_decoder_layers, 32
    cached = [l9.decoder_step_macs(c, t, S, True) for t in range(4)]
    uncached = [l9.decoder_step_macs(c, t, S, False) for t in range(4)]
    for m in cached + uncached:
        assert m["total"] == m["self_attention"] + m["cross_attention"] + m["feed_forward"] + m["head"]
    # with the cache only the self-attention over the cache grows: 2 D more per position, per layer
    for a, b in zip(cached, cached[1:]):
        assert b["total"] - a["total"] == L * 2 * D
        assert b["cross_attention"] == a["cross_attention"] and b["feed_forward"] == a["feed_forward"]
    # at t = 0 both feed one position; without the cache, cross-attention K, V are recomputed
    assert uncached[0]["total"] - cached[0]["total"] == L * 2 * S * D * D
    # without the cache the step at t re-runs t + 1 positions
    assert uncached[3]["feed_forward"] == 4 * cached[3]["feed_forward"] == 4 * L * 2 * D * F
    assert uncached[3]["head"] == 4 * D * V
    assert uncached[3]["self_attention"] == L * (4 * 4 * D * D + 2 * 16 * D)
    once = l9.once_per_example_macs(c, S)
    assert once["cross_kv"] == L * 2 * S * D * D
    assert once["encoder"] == c.n_encoder_layers * (4 * S * D * D + 2 * S * S * D + 2 * S * D * F)


def test_step_latency_times_and_counts_each_position():
    model = EncoderDecoder(reference_config(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                            n_decoder_layers=1)).eval()
    src = np.random.default_rng(0).integers(4, model.config.src_vocab_size, size=(1, 8))
    lat = l9.step_latency(model, src, (2, 40), repeats=3)
    np.testing.assert_array_equal(lat.positions, [2, 40])
    assert lat.repeats == 3 and (lat.cached_seconds > 0).all() and (lat.uncached_seconds > 0).all()
    for k, t in enumerate((2, 40)):
        assert lat.cached_macs[k] == l9.decoder_step_macs(model.config, t, 8, True)["total"]
        assert lat.uncached_macs[k] == l9.decoder_step_macs(model.config, t, 8, False)["total"]
    with pytest.raises(TypeError, match="model"):
        l9.step_latency("model", src, (1,))


def test_sign_test_is_the_two_sided_binomial_tail():
    # 12 against 9: 2 * P(X <= 9), X ~ Binomial(21, 1/2) = 0.664 (Lesson 9's length-penalty table)
    assert l9.sign_test(12, 9) == pytest.approx(0.6636, abs=1e-4)
    assert l9.sign_test(9, 12) == l9.sign_test(12, 9)
    assert l9.sign_test(5, 0) == pytest.approx(2 / 32)  # all five one way
    assert l9.sign_test(3, 3) == 1.0 and l9.sign_test(0, 0) == 1.0
    with pytest.raises(ValueError, match="fixed"):
        l9.sign_test(-1, 2)
