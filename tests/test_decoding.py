"""Tests for minitf.decoding: the two KV caches, greedy search, sampling, beam search,
no-repeat n-grams in the decoders, traces, the model's own start and end tokens, and
decoders without a causal mask.  The logit processors alone: tests/test_decoding_processors.py."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import CharTokenizer
from minitf.decoding import (beam_search, decode_step, format_trace, greedy_search, init_cache,
                             length_normalized_score, reorder_cache, sample, start_decoding, warp_logits)
from minitf.layers.softmax import log_softmax, softmax
from minitf.models import DecoderOnly
from minitf.models.encoder_decoder import EncoderDecoder

TOL = {"float64": 1e-12, "float32": 1e-5}  # cached vs uncached logits, absolute
BOS, EOS = ModelConfig().bos_id, ModelConfig().eos_id  # the start and end tokens of make_model's models


def make_model(dtype="float64", norm_first=True, src_vocab=11, tgt_vocab=9, max_len=12, seed=3, **kw):
    cfg = ModelConfig(src_vocab_size=src_vocab, tgt_vocab_size=tgt_vocab, d_model=16, n_heads=4, d_ff=32,
                      n_encoder_layers=2, n_decoder_layers=2, max_len=max_len, norm_first=norm_first,
                      dtype=dtype, seed=seed, **kw)
    return EncoderDecoder(cfg).eval()


def padded_sources(rng, B=3, S=7, vocab=11):
    src = rng.integers(4, vocab, size=(B, S))  # no specials
    src[0, 5:] = 0  # right padding, different per row
    src[2, 3:] = 0
    return src


def uncached_logits(model, src, decoder_input_ids):
    """The reference: the whole prefix through model.decode (teacher-forced forward)."""
    H_enc, _ = model.encode(src)
    logits, _ = model.decode(decoder_input_ids, H_enc, model.source_mask(src))
    return logits  # (B, T, V)


def sequence_log_prob(model, src_row, tokens, start_id=BOS):
    """Sum of log p(tokens) under teacher forcing, for one source row."""
    dec_in = np.array([[start_id, *tokens[:-1]]])
    logp = log_softmax(uncached_logits(model, src_row[None], dec_in)[0].astype(np.float64))  # (T, V)
    return float(logp[np.arange(len(tokens)), tokens].sum())


# =====================================================================================
# The caches: incremental decoding gives the full decoder's logits
# =====================================================================================
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("variant", [{}, {"positional": "learned", "tie_output": True}], ids=["plain", "learned-tied"])
def test_cached_logits_equal_full_decode_at_every_step(dtype, norm_first, variant, rng):
    model = make_model(dtype, norm_first, **variant)
    src = padded_sources(rng)
    T = 10
    ids = rng.integers(1, 9, size=(3, T))
    full = uncached_logits(model, src, ids)  # (B, T, V)
    cache = start_decoding(model, src, max_len=T)
    for t in range(T):
        logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # only the newest token
        assert logits.shape == (3, 1, 9) and logits.dtype == np.dtype(dtype)
        np.testing.assert_allclose(logits[:, 0], full[:, t], rtol=0, atol=TOL[dtype], err_msg=f"step {t}")
    assert cache.length == T


def test_padding_changes_logits_so_the_mask_matters(rng):
    # Guard for the test above: if padded source positions leaked into cross-attention,
    # the padded source would give different logits from the same source unpadded.
    model = make_model()
    src = np.array([[5, 6, 7, 0, 0]])
    ids = np.array([[1, 4, 5]])
    cache = start_decoding(model, src, max_len=3)
    logits_padded, _ = decode_step(model, ids, cache)
    cache = start_decoding(model, src[:, :3], max_len=3)
    logits_unpadded, _ = decode_step(model, ids, cache)
    np.testing.assert_allclose(logits_padded, logits_unpadded, rtol=0, atol=1e-12)
    src_other = np.array([[5, 6, 7, 8, 9]])  # real tokens where the padding was: must change things
    logits_other, _ = decode_step(model, ids, start_decoding(model, src_other, max_len=3))
    assert np.abs(logits_other - logits_padded).max() > 1e-3


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
def test_feeding_a_chunk_equals_feeding_one_token_at_a_time(norm_first, rng):
    model = make_model(norm_first=norm_first)
    src = padded_sources(rng)
    ids = rng.integers(1, 9, size=(3, 9))
    full = uncached_logits(model, src, ids)
    cache = start_decoding(model, src, max_len=9)
    chunk, cache = decode_step(model, ids[:, :4], cache)  # 4 positions at once: causal mask with offset 0
    np.testing.assert_allclose(chunk, full[:, :4], rtol=0, atol=1e-12)
    chunk, cache = decode_step(model, ids[:, 4:7], cache)  # 3 more: causal mask with offset 4
    np.testing.assert_allclose(chunk, full[:, 4:7], rtol=0, atol=1e-12)
    for t in (7, 8):
        logits, cache = decode_step(model, ids[:, t:t + 1], cache)
        np.testing.assert_allclose(logits[:, 0], full[:, t], rtol=0, atol=1e-12)


def test_cache_layout_preallocated_and_written_in_place(rng):
    model = make_model()
    src = padded_sources(rng)
    G, T_max = 2, 8
    cache = start_decoding(model, src, group_size=G, max_len=T_max)
    B, S, H, Dh = 3, 7, 4, 4
    assert cache.capacity == T_max and cache.batch_rows == B * G and cache.length == 0
    buffers = [(kv.K_self, kv.V_self, kv.K_cross, kv.V_cross) for kv in cache.layers]
    for kv in cache.layers:
        assert kv.K_self.shape == kv.V_self.shape == (B * G, H, T_max, Dh)  # (N, H, T_max, Dh)
        assert kv.K_cross.shape == kv.V_cross.shape == (B, H, S, Dh)  # per example, not per beam
    cross_before = [kv.K_cross.copy() for kv in cache.layers]
    ids = rng.integers(1, 9, size=(B * G, 3))
    for t in range(3):
        _, cache = decode_step(model, ids[:, t:t + 1], cache)
    for kv, (K, V, Kc, Vc), Kc0 in zip(cache.layers, buffers, cross_before):
        assert kv.K_self is K and kv.V_self is V  # the same buffers: no reallocation, no concatenate
        assert kv.K_cross is Kc and kv.V_cross is Vc
        np.testing.assert_array_equal(kv.K_cross, Kc0)  # cross-attention K, V never change
        assert np.abs(kv.K_self[:, :, :3]).max() > 0  # written ...
        assert not kv.K_self[:, :, 3:].any()  # ... and nothing past the length
    nb = cache.nbytes()
    assert nb["self_attention_used"] * T_max == nb["self_attention_allocated"] * 3


def test_cross_kv_matches_the_models_own_projection(rng):
    model = make_model()
    src = padded_sources(rng)
    H_enc, _ = model.encode(src)
    cache = init_cache(model, H_enc, model.source_mask(src), max_len=4)
    for layer, kv in zip(model.decoder_layers, cache.layers):
        K, V = layer.cross_attn.project_kv(H_enc)
        np.testing.assert_array_equal(kv.K_cross, K)
        np.testing.assert_array_equal(kv.V_cross, V)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rows_of_a_group_share_the_cross_cache_and_match_separate_decoding(dtype, rng):
    model = make_model(dtype)
    src = padded_sources(rng)
    G, T = 3, 6
    ids = rng.integers(1, 9, size=(3 * G, T))  # every row its own prefix
    full = uncached_logits(model, np.repeat(src, G, axis=0), ids)  # each row decoded on its own
    cache = start_decoding(model, src, group_size=G, max_len=T)
    for t in range(T):
        logits, cache = decode_step(model, ids[:, t:t + 1], cache)
        np.testing.assert_allclose(logits[:, 0], full[:, t], rtol=0, atol=TOL[dtype])


def test_reordered_cache_equals_decoding_the_reordered_prefixes(rng):
    model = make_model()
    src = padded_sources(rng)
    G, B = 3, 3
    ids = rng.integers(1, 9, size=(B * G, 4))
    cache = start_decoding(model, src, group_size=G, max_len=8)
    _, cache = decode_step(model, ids, cache)  # 4 positions cached per row
    beam_idx = np.array([2, 2, 0, 3, 5, 4, 8, 6, 6])  # each row picks a row of its own example
    cache = reorder_cache(cache, beam_idx)
    new = rng.integers(1, 9, size=(B * G, 1))
    logits, cache = decode_step(model, new, cache)
    prefixes = np.concatenate([ids[beam_idx], new], axis=1)  # (N, 5) what each row now holds
    full = uncached_logits(model, np.repeat(src, G, axis=0), prefixes)
    np.testing.assert_allclose(logits[:, 0], full[:, -1], rtol=0, atol=1e-12)


def test_reorder_cache_refuses_to_move_a_row_to_another_example(rng):
    model = make_model()
    cache = start_decoding(model, padded_sources(rng), group_size=2, max_len=4)
    with pytest.raises(ValueError, match="beam_idx"):
        reorder_cache(cache, np.array([0, 1, 2, 3, 5, 1]))  # row 5 -> row 1 belongs to example 0
    with pytest.raises(ValueError, match="beam_idx"):
        reorder_cache(cache, np.arange(4))


def test_decode_step_checks_its_input(rng):
    model = make_model()
    cache = start_decoding(model, padded_sources(rng), max_len=3)
    with pytest.raises(ValueError, match="decoder_input_ids"):
        decode_step(model, np.ones((2, 1), dtype=int), cache)  # 3 rows expected
    with pytest.raises(ValueError, match="decoder_input_ids"):
        decode_step(model, np.ones((3, 4), dtype=int), cache)  # capacity 3
    with pytest.raises(ValueError, match="decoder_input_ids"):
        decode_step(model, np.full((3, 1), 9), cache)  # vocabulary is 9
    with pytest.raises(ValueError, match="max_len"):
        start_decoding(model, padded_sources(rng), max_len=13)  # the model knows 12 positions


def test_decoding_needs_eval_mode_when_dropout_is_on(rng):
    model = make_model(dropout=0.3).train()
    with pytest.raises(ValueError, match="eval"):
        start_decoding(model, padded_sources(rng))
    # the decoders switch dropout off themselves, and give the model its mode back
    src = padded_sources(rng)
    a = greedy_search(model, src, max_new_tokens=6)
    b = greedy_search(model, src, max_new_tokens=6)
    assert model.training
    np.testing.assert_array_equal(a.sequences, b.sequences)


# =====================================================================================
# Greedy search
# =====================================================================================
def test_greedy_cached_equals_uncached_and_picks_the_argmax(rng):
    model = make_model()
    src = padded_sources(rng)
    out = greedy_search(model, src, max_new_tokens=10)
    ref = greedy_search(model, src, max_new_tokens=10, use_cache=False)
    np.testing.assert_array_equal(out.sequences, ref.sequences)
    np.testing.assert_allclose(out.log_probs, ref.log_probs, rtol=0, atol=1e-12)
    for b in range(3):
        (h,) = out.hypotheses(b)
        dec_in = np.array([[BOS, *h.tokens[:-1]]])
        logits = uncached_logits(model, src[b:b + 1], dec_in)[0]  # (T, V)
        np.testing.assert_array_equal(np.argmax(logits, axis=-1), h.tokens)
        assert h.log_prob == pytest.approx(sequence_log_prob(model, src[b], h.tokens), abs=1e-10)
        assert h.finished == (h.tokens[-1] == EOS)
        assert EOS not in h.tokens[:-1]
        assert (out.sequences[b, len(h):] == model.config.pad_id).all()


def test_greedy_without_eos_runs_to_max_new_tokens(rng):
    out = greedy_search(make_model(), padded_sources(rng), max_new_tokens=7, eos_id=None)
    assert out.sequences.shape == (3, 7) and (out.lengths == 7).all() and not out.finished.any()


def test_encoder_runs_once_per_example(monkeypatch, rng):
    model = make_model()
    calls = []
    original = model.encode

    def counting_encode(src_ids):
        calls.append(np.asarray(src_ids).shape)
        return original(src_ids)

    monkeypatch.setattr(model, "encode", counting_encode)
    beam_search(model, padded_sources(rng), num_beams=4, max_new_tokens=8)
    sample(model, padded_sources(rng), rng=0, num_return_sequences=5, max_new_tokens=8)
    greedy_search(model, padded_sources(rng), max_new_tokens=8)
    assert calls == [(3, 7)] * 3  # one call per decoder, on the B sources (not B * beams)


# =====================================================================================
# Beam search
# =====================================================================================
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_search_with_one_beam_is_greedy(norm_first, seed):
    model = make_model(norm_first=norm_first, seed=seed)
    src = padded_sources(np.random.default_rng(seed))
    greedy = greedy_search(model, src, max_new_tokens=10)
    for lp in (1.0, 0.0, 2.5):
        beam = beam_search(model, src, num_beams=1, max_new_tokens=10, length_penalty=lp)
        np.testing.assert_array_equal(beam.sequences, greedy.sequences)
        np.testing.assert_array_equal(beam.lengths, greedy.lengths)
        np.testing.assert_allclose(beam.log_probs, greedy.log_probs, rtol=0, atol=1e-12)


def enumerate_hypotheses(model, src_row, V, max_new_tokens, eos_id, norm):
    """Every output beam search can return: sequences ending at their first <eos>, and
    sequences of max_new_tokens tokens without <eos>; scored by teacher forcing."""
    out = []
    for n in range(1, max_new_tokens + 1):
        for body in itertools.product([v for v in range(V) if v != eos_id], repeat=n - 1):
            for last in range(V):
                tokens = (*body, last)
                finished = last == eos_id
                if not finished and n < max_new_tokens:
                    continue  # an unfinished sequence shorter than the limit is no output
                lp = sequence_log_prob(model, src_row, list(tokens))
                out.append((float(norm(lp, n)), tokens, lp))
    return sorted(out, key=lambda h: -h[0])


@pytest.mark.parametrize("length_penalty, style", [(1.0, "hf"), (0.0, "hf"), (2.0, "hf"), (-1.0, "hf"),
                                                   (0.6, "gnmt")])
def test_beam_search_with_enough_beams_finds_the_exhaustive_best(length_penalty, style):
    V, T_max = 5, 3  # <pad> <bos> <eos> and two letters: 5 + 25 + 125 candidates, 85 outputs
    model = make_model(src_vocab=6, tgt_vocab=V, max_len=4, seed=7)
    src = np.array([[4, 5, 4, 0], [5, 5, 4, 4]])

    def norm(lp, n):
        return length_normalized_score(lp, n, length_penalty, style)

    R = 10
    out = beam_search(model, src, num_beams=128, num_return_sequences=R, max_new_tokens=T_max,
                      length_penalty=length_penalty, length_penalty_style=style)
    for b in range(2):
        exhaustive = enumerate_hypotheses(model, src[b], V, T_max, EOS, norm)
        assert len(exhaustive) == 85
        hyps = out.hypotheses(b)
        assert [h.tokens for h in hyps] == [e[1] for e in exhaustive[:R]]
        np.testing.assert_allclose([h.score for h in hyps], [e[0] for e in exhaustive[:R]], rtol=0, atol=1e-10)
        np.testing.assert_allclose([h.log_prob for h in hyps], [e[2] for e in exhaustive[:R]], rtol=0, atol=1e-10)


def test_beam_search_returns_several_consistent_hypotheses(rng):
    model = make_model()
    src = padded_sources(rng)
    out = beam_search(model, src, num_beams=5, num_return_sequences=3, max_new_tokens=8, length_penalty=0.8)
    assert out.sequences.shape[0] == 9 and out.num_return == 3
    for b in range(3):
        hyps = out.hypotheses(b)
        assert len(hyps) == 3
        assert [h.score for h in hyps] == sorted([h.score for h in hyps], reverse=True)
        assert len({h.tokens for h in hyps}) == 3  # distinct
        for h in hyps:
            assert h.log_prob == pytest.approx(sequence_log_prob(model, src[b], list(h.tokens)), abs=1e-10)
            assert h.score == pytest.approx(h.log_prob / len(h) ** 0.8, abs=1e-12)
            assert EOS not in h.tokens[:-1]
            assert h.finished == (h.tokens[-1] == EOS)
            assert h.finished or len(h) == 8


def test_more_beams_never_score_worse_than_greedy_here(rng):
    # Not guaranteed in general (beam search may prune greedy's path early), so this is a
    # sanity check on one model: with length penalty 0 (plain sums) and 8 beams searching
    # to the end, every input's best score is at least greedy's log-prob.
    model = make_model(seed=11)
    src = padded_sources(rng)
    g = greedy_search(model, src, max_new_tokens=8)
    b = beam_search(model, src, num_beams=8, max_new_tokens=8, length_penalty=0.0, early_stopping="never")
    assert (b.scores >= g.log_probs - 1e-12).all()


def test_early_stopping_modes(rng):
    model = make_model(seed=5)
    src = padded_sources(rng)
    kw = dict(num_beams=3, max_new_tokens=10, length_penalty=1.5, trace=True)
    early = beam_search(model, src, early_stopping=True, **kw)
    heuristic = beam_search(model, src, early_stopping=False, **kw)
    never = beam_search(model, src, early_stopping="never", **kw)
    # True stops an example at the step where its third hypothesis finishes
    for b in range(3):
        steps = [s for s in early.trace if s.example == b]
        assert len(steps[-1].finished) == 3 or steps[-1].step == 9
        assert all(len(s.finished) < 3 for s in steps[:-1])
    # searching longer only ever improves the pool of finished hypotheses
    assert (heuristic.scores >= early.scores - 1e-12).all()
    assert (heuristic.scores > early.scores + 1e-6).any()  # and here it does improve
    assert (never.scores >= heuristic.scores - 1e-12).all()
    assert len(never.trace) >= len(heuristic.trace) >= len(early.trace)


def test_never_keeps_searching_where_the_heuristic_stops():
    # With a positive length penalty a longer hypothesis can still overtake the finished
    # ones; early_stopping=False estimates the best reachable score at the current length
    # and may stop too soon, "never" bounds it at max_new_tokens and keeps going.
    model = make_model(seed=35)
    src = padded_sources(np.random.default_rng(1234))
    kw = dict(num_beams=2, max_new_tokens=10, length_penalty=1.0)
    heuristic = beam_search(model, src, early_stopping=False, **kw)
    never = beam_search(model, src, early_stopping="never", **kw)
    assert heuristic.lengths[0] == 1 and never.lengths[0] == 10  # <eos> at once vs ten tokens
    assert never.scores[0] > heuristic.scores[0] + 0.1
    assert never.scores[0] == pytest.approx(sequence_log_prob(model, src[0], list(never.hypotheses(0)[0].tokens))
                                            / 10, abs=1e-10)


def test_length_normalized_score_formulas():
    assert length_normalized_score(-6.0, 3, 1.0) == pytest.approx(-2.0)
    assert length_normalized_score(-6.0, 4, 2.0) == pytest.approx(-6.0 / 16)
    assert length_normalized_score(-6.0, 4, 0.0) == pytest.approx(-6.0)
    assert length_normalized_score(-6.0, 7, 0.5, "gnmt") == pytest.approx(-6.0 / (12 / 6) ** 0.5)
    with pytest.raises(ValueError, match="length_penalty_style"):
        length_normalized_score(-1.0, 2, 1.0, "wu")


def test_beam_trace_records_candidates_scores_and_beams(rng):
    model = make_model(seed=5)  # a model whose hypotheses end with <eos> within 8 tokens
    src = padded_sources(rng)
    K = 3
    out = beam_search(model, src, num_beams=K, num_return_sequences=2, max_new_tokens=8, trace=True)
    assert out.finished.all()
    first = [s for s in out.trace if s.step == 0]
    assert [s.example for s in first] == [0, 1, 2]
    for s in first:
        assert s.beams == [()] and s.beam_scores == [0.0]  # one live beam: <bos>
    for s in out.trace:
        assert len(s.candidates) <= 2 * K
        assert [c.score for c in s.candidates] == sorted([c.score for c in s.candidates], reverse=True)
        kept = [c for c in s.candidates if c.status == "kept"]
        assert len(kept) <= K
        for c in s.candidates:
            assert c.status in ("kept", "finished", "dropped")
            i = s.beam_rows.index(c.beam)
            assert c.score == pytest.approx(s.beam_scores[i] + c.log_prob)
            assert (c.status == "finished") <= (c.token == EOS)
        for h in s.finished:
            assert h.tokens[-1] == EOS
    # each returned hypothesis entered the pool as a "finished" candidate extending a listed beam
    for b in range(3):
        for h in out.hypotheses(b):
            (s,) = [s for s in out.trace if s.example == b and s.step == len(h) - 1]
            assert any(c.status == "finished" and c.score == pytest.approx(h.log_prob) for c in s.candidates)
            assert h.tokens[:-1] in s.beams
            assert h in s.finished
    text = format_trace(out.trace, CharTokenizer("abcde"))
    assert "step 0  example 0" in text and "finished" in text


@pytest.mark.parametrize("decoder", ["greedy", "sample"])
def test_greedy_and_sampling_traces_follow_the_chosen_tokens(decoder, rng):
    model = make_model(seed=5)
    src = padded_sources(rng)
    if decoder == "greedy":
        out = greedy_search(model, src, max_new_tokens=8, trace=True)
    else:
        out = sample(model, src, rng=3, temperature=1.5, top_k=5, top_p=0.9, num_return_sequences=2,
                     max_new_tokens=8, trace=True)
    R = out.num_return
    for b in range(3):
        steps = [s for s in out.trace if s.example == b]
        for r in range(R):
            n = b * R + r
            length = int(out.lengths[n])
            tokens = out.sequences[n, :length].tolist()
            mine = [(s, [c for c in s.candidates if c.beam == r and c.status != "dropped"]) for s in steps
                    if r in s.beam_rows]
            assert len(mine) == length  # the row appears at every step until it ends
            running = 0.0
            for t, (s, (chosen,)) in enumerate(mine):
                assert s.step == t and s.beams[s.beam_rows.index(r)] == tuple(tokens[:t])
                assert s.beam_scores[s.beam_rows.index(r)] == pytest.approx(running)
                assert chosen.token == tokens[t]
                assert chosen.status == ("finished" if tokens[t] == EOS else "kept")
                running = chosen.score  # the model's log-probs summed, whatever the sampler did
            assert running == pytest.approx(out.log_probs[n])
            if decoder == "greedy":
                assert all(chosen.log_prob >= c.log_prob for s, (chosen,) in mine for c in s.candidates)


# =====================================================================================
# Sampling
# =====================================================================================
def test_sampling_is_reproducible_from_its_seed(rng):
    model = make_model()
    src = padded_sources(rng)
    kw = dict(temperature=1.3, top_k=6, top_p=0.95, num_return_sequences=4, max_new_tokens=10)
    a = sample(model, src, rng=42, **kw)
    b = sample(model, src, rng=42, **kw)
    c = sample(model, src, rng=np.random.default_rng(42), **kw)
    d = sample(model, src, rng=43, **kw)
    np.testing.assert_array_equal(a.sequences, b.sequences)
    np.testing.assert_array_equal(a.sequences, c.sequences)
    assert a.sequences.shape[0] == 12
    assert not np.array_equal(a.sequences, d.sequences)


def test_sampling_with_top_k_1_is_greedy(rng):
    model = make_model()
    src = padded_sources(rng)
    s = sample(model, src, rng=0, top_k=1, temperature=0.7, max_new_tokens=10)
    g = greedy_search(model, src, max_new_tokens=10)
    np.testing.assert_array_equal(s.sequences, g.sequences)
    np.testing.assert_allclose(s.log_probs, g.log_probs, rtol=0, atol=1e-12)


def test_sampled_first_tokens_follow_the_warped_distribution():
    model = make_model(tgt_vocab=9, seed=2)
    src = np.array([[5, 6, 7]])
    first = uncached_logits(model, src, np.array([[BOS]]))[0, 0].astype(np.float64)  # (V,)
    n = 20000
    for kw in [dict(), dict(temperature=0.5, top_k=4), dict(top_p=0.7), dict(temperature=2.0, top_p=0.9)]:
        out = sample(model, src, rng=1, num_return_sequences=n, max_new_tokens=1, **kw)
        target = softmax(warp_logits(first, kw.get("temperature", 1.0), kw.get("top_k", 0), kw.get("top_p", 1.0)))
        freq = np.bincount(out.sequences[:, 0], minlength=9) / n
        assert (freq[target == 0] == 0).all(), kw  # filtered-out tokens are never drawn
        np.testing.assert_allclose(freq, target, atol=4 * np.sqrt(0.25 / n), err_msg=str(kw))


# =====================================================================================
# No repeated n-grams
# =====================================================================================
def _has_repeated_ngram(seq, n):
    grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
    return len(grams) != len(set(grams))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_decoders_never_repeat_an_ngram(n, rng):
    model = make_model(tgt_vocab=9, max_len=12, seed=9)
    src = padded_sources(rng)
    outs = [greedy_search(model, src, max_new_tokens=7, no_repeat_ngram_size=n, eos_id=None),
            sample(model, src, rng=0, num_return_sequences=3, max_new_tokens=7, no_repeat_ngram_size=n, eos_id=None),
            beam_search(model, src, num_beams=3, num_return_sequences=2, max_new_tokens=7,
                        no_repeat_ngram_size=n, eos_id=None)]
    for out in outs:
        for row, length in zip(out.sequences, out.lengths):
            seq = [BOS, *row[:length].tolist()]
            assert not _has_repeated_ngram(seq, n), (n, seq)
    # and without the ban this model does repeat itself (so the test can fail)
    plain = greedy_search(model, src, max_new_tokens=7, eos_id=None)
    assert any(_has_repeated_ngram([BOS, *r.tolist()], 2) for r in plain.sequences)


# =====================================================================================
# Bad input
# =====================================================================================
@pytest.mark.parametrize("kwargs, name", [
    (dict(num_beams=0), "num_beams"), (dict(num_beams=-2), "num_beams"), (dict(num_beams=2.5), "num_beams"),
    (dict(num_beams=2, num_return_sequences=3), "num_return_sequences"),
    (dict(num_beams=2, max_new_tokens=0), "max_new_tokens"), (dict(num_beams=2, max_new_tokens=13), "max_new_tokens"),
    (dict(num_beams=2, early_stopping="sometimes"), "early_stopping"),
    (dict(num_beams=2, length_penalty_style="wu"), "length_penalty_style"),
    (dict(num_beams=2, length_penalty=float("nan")), "length_penalty"),
    (dict(num_beams=2, no_repeat_ngram_size=-1), "no_repeat_ngram_size"),
    (dict(num_beams=2, eos_id=9), "eos_id"),
])
def test_beam_search_rejects_bad_arguments(kwargs, name, rng):
    with pytest.raises(ValueError, match=name):
        beam_search(make_model(), padded_sources(rng), **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(top_p=0.0), "top_p"), (dict(top_p=1.5), "top_p"), (dict(top_p=-0.1), "top_p"),
    (dict(temperature=0.0), "temperature"), (dict(temperature=-1.0), "temperature"),
    (dict(temperature=float("nan")), "temperature"), (dict(top_k=-1), "top_k"),
    (dict(max_new_tokens=0), "max_new_tokens"), (dict(num_return_sequences=0), "num_return_sequences"),
])
def test_sample_rejects_bad_arguments(kwargs, name, rng):
    with pytest.raises(ValueError, match=name):
        sample(make_model(), padded_sources(rng), rng=0, **kwargs)


def test_other_bad_inputs(rng):
    model = make_model()
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_search(model, padded_sources(rng), max_new_tokens=-3)
    with pytest.raises(TypeError, match="rng"):
        sample(model, padded_sources(rng), rng="seed")
    with pytest.raises(ValueError, match="src_ids"):
        greedy_search(model, np.array([4, 5, 6]))
    with pytest.raises(TypeError, match="model"):
        greedy_search(object(), padded_sources(rng))
    with pytest.raises(ValueError, match="top_p"):
        warp_logits(np.zeros(3), top_p=2.0)
    with pytest.raises(TypeError, match=r"^rng: expected a np.random.Generator or a non-negative integer seed, "
                                        r"got -1$"):
        sample(model, padded_sources(rng), rng=-1)


def test_early_stopping_accepts_numpy_booleans_as_booleans(rng):
    """np.True_ is not ``True``: it must still mean True, not fall through to False."""
    model, src = make_model(), padded_sources(rng)
    for flag in (True, False):
        want = beam_search(model, src, num_beams=3, max_new_tokens=8, early_stopping=flag)
        got = beam_search(model, src, num_beams=3, max_new_tokens=8, early_stopping=np.bool_(flag))
        np.testing.assert_array_equal(got.sequences, want.sequences)
        np.testing.assert_array_equal(got.scores, want.scores)
    with pytest.raises(ValueError, match="early_stopping: expected one of True, False, 'never', got 1"):
        beam_search(model, src, num_beams=3, early_stopping=1)


def test_a_no_repeat_size_that_bans_every_token_is_an_error(rng):
    """n = 1 forbids any token twice: with 9 tokens, <bos> one of them, step t = 8 has nothing left.  Padding
    the row, or sampling from an all -inf row (nan), would hide that."""
    model, src = make_model(tgt_vocab=9), padded_sources(rng)
    pattern = r"^no_repeat_ngram_size: .*with n=1 every token is banned for (row|example) \d+ at step 8"
    with pytest.raises(ValueError, match=pattern):
        greedy_search(model, src, max_new_tokens=12, no_repeat_ngram_size=1, eos_id=None)
    with pytest.raises(ValueError, match=pattern):
        sample(model, src, rng=0, max_new_tokens=12, no_repeat_ngram_size=1, eos_id=None)
    with pytest.raises(ValueError, match=pattern):
        beam_search(model, src, num_beams=2, max_new_tokens=12, no_repeat_ngram_size=1, eos_id=None)
    # one step fewer is fine: every row still has a token left
    out = greedy_search(model, src, max_new_tokens=8, no_repeat_ngram_size=1, eos_id=None)
    assert all(len(set(row)) == len(row) for row in out.sequences.tolist())


def test_decode_step_refuses_training_mode_and_a_cache_from_another_model(rng):
    model, src = make_model(dropout=0.1), padded_sources(rng)
    cache = start_decoding(model.eval(), src)
    first = np.full((src.shape[0], 1), BOS)
    model.train()
    with pytest.raises(ValueError, match="model: expected eval mode"):
        decode_step(model, first, cache)
    deeper = EncoderDecoder(model.config.replace(n_decoder_layers=3)).eval()
    with pytest.raises(ValueError, match=r"^cache: expected one made for this model \(3 decoder layers, 4 heads "
                                         r"of size 4\), got 2 layers, 4 heads of size 4$"):
        decode_step(deeper, first, cache)


def test_decode_step_checks_the_caches_masks_its_attentions_read_unchecked(rng):
    """The steps' attentions skip their argument checks (check_args=False): the masks come from
    the cache, and decode_step checks them once a step.  A hand-made cache with a bad mask is
    refused with the cache's field named, not turned into nan."""
    model, src = make_model(), padded_sources(rng)
    cache = start_decoding(model, src)
    first = np.full((src.shape[0], 1), BOS)
    bad_values = [(np.where(cache.src_mask < 0, -np.inf, 0.0), "expected finite values"),
                  (np.ones_like(cache.src_mask), "expected values <= 0"),
                  (cache.src_mask.astype(bool), "expected an additive float mask")]
    for mask, message in bad_values:
        with pytest.raises((ValueError, TypeError), match=f"^cache.src_mask: {message}"):
            decode_step(model, first, cache._replace(src_mask=mask))
    with pytest.raises(ValueError, match=r"^cache.src_mask: expected shape \(B, 1, 1, S\) = \(3, 1, 1, 7\), the "
                                         r"cross-attention cache's, got \(3, 1, 1, 6\)$"):
        decode_step(model, first, cache._replace(src_mask=cache.src_mask[..., :6]))
    grouped = start_decoding(model, src[:1], group_size=3)  # 3 rows; read as 1 row, they would broadcast
    with pytest.raises(ValueError, match=r"^cache: expected self-attention buffers of N = 1 rows \(the cache's "
                                         r"batch_rows\), got 3$"):
        decode_step(model, first[:1], grouped._replace(group_size=1))
    assert np.isfinite(decode_step(model, first, cache)[0]).all()  # the cache as made still decodes


def test_a_decoding_step_runs_no_per_attention_checks(monkeypatch, rng):
    """The point of check_args=False: with the attention's own checks made to fail, decoding steps
    still run and give the same logits (an encoder-decoder's grouped cache, one token and a chunk;
    a decoder-only model, whose prefill feeds its prompt in one causal step)."""
    import minitf.attention

    def refuse(*args):
        raise AssertionError("a decoding step ran the per-attention checks")

    model, src = make_model(), padded_sources(rng)
    ids = rng.integers(4, 9, size=(6, 3))  # 3 rows x 2 beams
    decoder_only = DecoderOnly(ModelConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=16, n_heads=4, d_ff=32,
                                           n_decoder_layers=2, max_len=20, dtype="float64")).eval()

    def run(checks_fail: bool):
        cache = start_decoding(model, src, group_size=2)  # the encoder runs checked attentions: not a step
        with monkeypatch.context() as m:
            if checks_fail:
                m.setattr(minitf.attention, "_check_attention_args", refuse)
            one, cache = decode_step(model, ids[:, :1], cache)
            chunk, _ = decode_step(model, ids[:, 1:], cache)
            prompt = start_decoding(decoder_only, src)  # the prefill is a decoding step
            after, _ = decode_step(decoder_only, np.full((3, 1), BOS), prompt)
        return one, chunk, after

    for a, b in zip(run(checks_fail=False), run(checks_fail=True)):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(minitf.attention, "_check_attention_args", refuse)
    with pytest.raises(AssertionError, match="per-attention checks"):  # a forward pass still checks
        model.forward(src, np.full((3, 2), BOS))


# =====================================================================================
# The model's own start and end tokens
# =====================================================================================
def test_decoders_start_and_end_with_the_models_configured_tokens(rng):
    src = padded_sources(rng)
    model = make_model(bos_id=4)
    free = greedy_search(model, src, max_new_tokens=6, eos_id=None)
    first = np.argmax(uncached_logits(model, src, np.full((3, 1), 4))[:, 0], axis=-1)  # (B,) after <bos> = 4
    np.testing.assert_array_equal(free.sequences[:, 0], first)
    assert (np.argmax(uncached_logits(model, src, np.full((3, 1), BOS))[:, 0], axis=-1) != first).any()  # 4 matters
    # make the end token the one row 0 emits first: with the model's eos_id, row 0 stops there
    eos = int(first[0])
    model = make_model(bos_id=4, eos_id=eos)  # the same weights (same seed)
    decoders = [lambda **kw: greedy_search(model, src, max_new_tokens=6, **kw),
                lambda **kw: sample(model, src, rng=0, top_k=1, max_new_tokens=6, **kw),
                lambda **kw: beam_search(model, src, num_beams=1, max_new_tokens=6, **kw)]
    for decode in decoders:
        out = decode()
        assert out.lengths[0] == 1 and out.finished[0] and out.sequences[0, 0] == eos
        explicit = decode(start_id=4, eos_id=eos)
        np.testing.assert_array_equal(out.sequences, explicit.sequences)
        np.testing.assert_array_equal(out.log_probs, explicit.log_probs)
        assert not np.array_equal(decode(start_id=BOS, eos_id=EOS).sequences, out.sequences)


@pytest.mark.parametrize("kwargs, message", [
    (dict(start_id=9), r"^start_id: expected a token id in \[0, 9\) or None \(the model's bos_id\), got 9$"),
    (dict(eos_id="eos"), r"^eos_id: expected a token id in \[0, 9\) or None \(never stop early\) or 'model'"),
    (dict(eos_id=-1), r"^eos_id: expected a token id in \[0, 9\) .*got -1$"),
])
def test_special_ids_are_checked(kwargs, message, rng):
    with pytest.raises(ValueError, match=message):
        greedy_search(make_model(), padded_sources(rng), **kwargs)


# =====================================================================================
# A decoder without the causal mask (Lesson 8's label leakage): never cached
# =====================================================================================
def test_cached_decoding_refuses_a_non_causal_decoder(rng):
    model, src = make_model(causal=False), padded_sources(rng)
    message = r"^model: expected a causal decoder \(config.causal=True\) for cached decoding, got config.causal=False"
    with pytest.raises(ValueError, match=message):
        start_decoding(model, src)
    H_enc, _ = model.encode(src)
    with pytest.raises(ValueError, match=message):
        init_cache(model, H_enc, model.source_mask(src))
    with pytest.raises(ValueError, match=message):
        greedy_search(model, src, use_cache=True)
    with pytest.raises(ValueError, match=message):
        beam_search(model, src, num_beams=2)


def count_decode_calls(monkeypatch, model):
    """Counts the model's decodes of a whole prefix (a cached step runs decode too, with its cache)."""
    calls = []
    original = model.decode

    def counting_decode(*args, **kwargs):
        if kwargs.get("cache") is None:
            calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "decode", counting_decode)
    return calls


def test_use_cache_defaults_to_the_cache_exactly_when_the_decoder_is_causal(monkeypatch, rng):
    src = padded_sources(rng)
    causal = make_model()
    calls = count_decode_calls(monkeypatch, causal)
    out = greedy_search(causal, src, max_new_tokens=5, eos_id=None)
    assert calls == []  # cached: model.decode (the whole prefix) never runs
    np.testing.assert_array_equal(out.sequences, greedy_search(causal, src, max_new_tokens=5, eos_id=None,
                                                               use_cache=False).sequences)
    leaky = make_model(causal=False)  # the same weights, no causal mask
    calls = count_decode_calls(monkeypatch, leaky)
    out = greedy_search(leaky, src, max_new_tokens=5, eos_id=None)
    assert len(calls) == 5  # the whole prefix re-run at every step
    ref = greedy_search(leaky, src, max_new_tokens=5, eos_id=None, use_cache=False)
    np.testing.assert_array_equal(out.sequences, ref.sequences)
    np.testing.assert_array_equal(out.log_probs, ref.log_probs)
    # sampling follows the same rule, so top-k 1 is still greedy
    np.testing.assert_array_equal(sample(leaky, src, rng=0, top_k=1, max_new_tokens=5, eos_id=None).sequences,
                                  out.sequences)


def test_a_non_causal_decoder_lets_earlier_positions_see_later_ones(rng):
    # Guard for the tests above: without the causal mask the prefix's logits really differ
    # (the last position's do too, from the second layer on), so decoding it with a cache
    # built for a causal decoder would be wrong.
    src, ids = padded_sources(rng), rng.integers(1, 9, size=(3, 5))
    causal, leaky = uncached_logits(make_model(), src, ids), uncached_logits(make_model(causal=False), src, ids)
    assert np.abs(causal[:, -1] - leaky[:, -1]).max() > 1e-3
    assert np.abs(causal[:, 0] - leaky[:, 0]).max() > 1e-3


def test_joined_qkv_projects_as_the_three_separate_projections(rng):
    """One product against [W_q W_k W_v] gives the Q, K, V of the three separate ones (float64, to
    rounding), and a cache that joins them once decodes as one that joins them at every step."""
    model = make_model()
    attn = model.decoder_layers[0].self_attn
    for name in ("b_q", "b_k", "b_v"):
        attn.params[name][...] = rng.standard_normal(attn.d_model)  # nonzero biases, so their order matters
    x = rng.standard_normal((3, 5, attn.d_model))
    Q, K, V = attn.project_qkv(x, *attn.joined_qkv())
    K_sep, V_sep = attn.project_kv(x)
    for joined, separate in ((Q, attn.project_q(x)), (K, K_sep), (V, V_sep)):
        np.testing.assert_allclose(joined, separate, rtol=0, atol=1e-12)
    # views into the one (B, T, 3D) product, no copies: one position to the next is a row of 3D numbers
    assert all(a.strides[2] == 3 * attn.d_model * a.itemsize for a in (Q, K, V)) and Q.base is K.base is V.base
    src = padded_sources(rng)
    ids = rng.integers(4, 9, size=(3, 4))
    joined_once = start_decoding(model, src)
    every_step = joined_once._replace(layers=tuple(kv._replace(qkv=None) for kv in joined_once.layers))
    assert all(kv.qkv is not None for kv in joined_once.layers)
    a, _ = decode_step(model, ids, joined_once)
    b, _ = decode_step(model, ids, every_step)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, uncached_logits(model, src, ids), rtol=0, atol=TOL["float64"])
