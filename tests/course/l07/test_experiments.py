"""Tests for minitf.course.l07_pretraining (Lesson 7's measurements) and its figures
(minitf.course.l07_pretraining.figures): each measurement checked against what would come out if it were
wrong -- T5's input and target rebuild the text, the counts are T5's arithmetic, every BART
noise keeps its invariant, the fractions are the lengths' ratios, the losses fall."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from minitf.course.l07_pretraining import experiments as l7
from minitf.course.l06_encoder_decoder import forward_flops
from minitf.data.noise import rebuild_from_span_corruption
from minitf.course.kit.figures import registry

NAMES = ("l07_corruption", "l07_bart_noises", "l07_loss_curves")


def _ids(tok, words):
    return np.array(tok.encode(" ".join(words)))


def _is_subsequence(part, whole) -> bool:
    it = iter(whole)
    return all(any(w == x for x in it) for w in part)


def _sentences(words) -> list[tuple]:
    out, cur = [], []
    for w in words:
        cur.append(w)
        if w == ".":
            out.append(tuple(cur))
            cur = []
    return out + ([tuple(cur)] if cur else [])


# ---- section 1 -----------------------------------------------------------------------------------------
def test_corruption_example_is_t5_and_bart_on_one_sentence():
    tok = l7.lesson7_tokenizer()
    ex = l7.corruption_example(0)
    n = len(ex.words)
    assert l7.lesson7_sentence(0) == " ".join(ex.words) and n >= 12
    mask = ex.noise_mask
    assert mask.shape == (n,) and not mask[0] and mask[-1]  # T5: never first, always last
    assert mask.sum() == round(n * l7.FIGURE_DENSITY)
    spans = int((mask & ~np.concatenate([[False], mask[:-1]])).sum())
    # the input: the kept words and one sentinel per span; the target: a sentinel per span and the hidden words
    assert [w for w in ex.t5_input if not w.startswith("<extra_id_")] == [w for w, m in zip(ex.words, mask) if not m]
    assert [w for w in ex.t5_target if not w.startswith("<extra_id_")] == [w for w, m in zip(ex.words, mask) if m]
    assert [w for w in ex.t5_input if w.startswith("<extra_id_")] == [f"<extra_id_{k}>" for k in range(spans)]
    rebuilt = rebuild_from_span_corruption(_ids(tok, ex.t5_input), _ids(tok, ex.t5_target), tok.vocab_size,
                                           tok.n_sentinels)
    assert tok.decode(rebuilt).split() == list(ex.words)
    # BART's default noise on one sentence: infilling only (nothing to permute); words kept in order
    assert _is_subsequence([w for w in ex.bart_input if w != "<mask>"], ex.words)
    assert "<mask>" in ex.bart_input


def test_corruption_example_at_t5_defaults_hides_the_last_two_words():
    ex = l7.corruption_example(0, noise_density=0.15, mean_noise_span_length=3.0)
    assert ex.t5_input[-1] == "<extra_id_0>" and list(ex.t5_input[:-1]) == list(ex.words[:-2])
    assert list(ex.t5_target) == ["<extra_id_0>", *ex.words[-2:]]


# ---- section 2 -----------------------------------------------------------------------------------------
def test_t5_examples_rebuild_the_packed_pieces():
    examples = l7.t5_examples(3, seed=0)
    assert len(examples) == 3 and len({e.text for e in examples}) == 3
    for e in examples:
        words, inp, tgt = e.text.split(), e.input.split(), e.target.split()
        assert len(words) == l7.PACK_LENGTH
        assert e.rebuilt == e.text
        sentinels = [w for w in tgt if w.startswith("<extra_id_")]
        assert sentinels == [w for w in inp if w.startswith("<extra_id_")] == ["<extra_id_0>", "<extra_id_1>"]
        assert len(tgt) - len(sentinels) == 7  # round(0.15 * 48) noise tokens
        assert len(inp) + len(tgt) == len(words) + 2 * len(sentinels)


def test_pieces_are_the_tasks_texts():
    pieces = l7.lesson7_pieces(4, seed=5)
    assert all(len(p.split()) == l7.PACK_LENGTH for p in pieces)
    assert pieces == l7.lesson7_pieces(4, seed=5) and pieces != l7.lesson7_pieces(4, seed=6)


def test_runs_measures_every_run_of_noise():
    rng = np.random.default_rng(0)
    mask = rng.random((50, 17)) < 0.4
    brute = []
    for row in mask:
        length = 0
        for m in list(row) + [False]:
            if m:
                length += 1
            elif length:
                brute.append(length)
                length = 0
    assert sorted(l7._runs(mask).tolist()) == sorted(brute)


@pytest.mark.parametrize("length, noise, spans", [(12, 2, 1), (48, 7, 2), (512, 77, 26)])
def test_span_statistics_are_t5s_counts(length, noise, spans):
    s = l7.span_statistics(length, n_draws=2000, seed=1)
    assert s.density == pytest.approx(noise / length, abs=1e-12)
    assert s.mean_span_length == pytest.approx(noise / spans, abs=1e-12)
    assert s.spans_per_text == spans
    assert sum(k * v for k, v in s.span_length_counts.items()) == noise * 2000
    assert s.starts_with_noise == 0.0 and s.ends_with_noise == 1.0
    assert s.target_fraction == pytest.approx((noise + spans + 1) / (length + 1))
    assert s.input_fraction == pytest.approx((length - noise + spans + 1) / (length + 1))


def test_span_statistics_at_512_are_within_2_percent_of_what_t5_asks():
    s = l7.span_statistics(512, n_draws=10_000)
    assert abs(s.density / 0.15 - 1) < 0.02 and abs(s.mean_span_length / 3.0 - 1) < 0.02
    assert s.commonest_span_length == 1  # a random split: short spans are the commonest
    assert s.span_length_counts[1] > s.span_length_counts[3]


# ---- section 3 -----------------------------------------------------------------------------------------
def test_bart_noise_examples_keep_each_noises_invariant():
    doc, noised = l7.bart_noise_examples(seed=0)
    assert [d.noise for d in noised] == list(l7.BART_NOISES)
    assert len(_sentences(doc)) == 3
    n, k = len(doc), math.ceil(0.3 * len(doc))
    by = {d.noise: d for d in noised}
    masked = by["token masking"].words
    assert len(masked) == n and masked.count("<mask>") == k
    assert all(m == "<mask>" or m == w for m, w in zip(masked, doc))
    deleted = by["token deletion"].words
    assert len(deleted) == n - k and _is_subsequence(deleted, doc)
    infilled = by["text infilling"].words
    assert _is_subsequence([w for w in infilled if w != "<mask>"], doc) and "<mask>" in infilled
    assert n - (len(infilled) - infilled.count("<mask>")) <= k  # no more hidden than budgeted
    assert sorted(_sentences(by["sentence permutation"].words)) == sorted(_sentences(doc))
    rotated = by["document rotation"].words
    assert any(rotated == doc[i:] + doc[:i] for i in range(n))
    assert by["token masking"].rate == f"masked share {k / n:.2f}"


def test_bart_noise_examples_with_max_words():
    doc, _ = l7.bart_noise_examples(seed=3, n_sentences=3, max_words=13)
    assert len(doc) <= 13 and len(_sentences(doc)) == 3
    with pytest.raises(ValueError, match="max_words"):
        l7.bart_noise_examples(seed=0, n_sentences=3, max_words=5)


def test_bart_noise_rates_are_the_measured_shares():
    from minitf.data.corpus import Language

    rates = l7.bart_noise_rates(n_docs=300, seed=2, n_draws=2000)
    tok = l7.lesson7_tokenizer()
    lengths = [len(tok.encode(d)) for d in Language().documents(300, np.random.default_rng(2))]
    expected = np.mean([math.ceil(0.3 * n) / n for n in lengths])  # the same documents
    assert rates["token masking"]["masked share"] == pytest.approx(expected)
    assert rates["token deletion"]["deleted share"] == pytest.approx(expected)
    assert rates["sentence permutation"]["same sentences"] == 1.0
    assert 0 < rates["sentence permutation"]["sentences moved"] < 1
    inf = rates["text infilling"]
    assert 0.25 < inf["hidden share"] <= expected
    assert 2.5 < inf["mean span length"] < 3.0  # Poisson(3), the last span cut to fit
    assert abs(inf["zero-length spans"] - math.exp(-3)) < 0.015
    # the documents' own budgets, ceil(0.3 n) <= 12, cut more spans short than a 30-token budget (2.3-2.4 on
    # seeds 0-4, against 2.85-2.87)
    assert inf["mean span length at these documents' budgets"] < inf["mean span length"] - 0.3
    assert 0.35 < rates["document rotation"]["rotation / length"] < 0.55


def test_length_fractions_are_the_ratios_of_the_lengths():
    fr = l7.length_fractions(n=40, seed=0)
    t5, bart = fr["t5"], fr["bart"]
    assert t5.text == bart.text == l7.PACK_LENGTH
    assert (t5.input, t5.target) == (48 - 7 + 2, 7 + 2 + 1)  # T5's counts for 48 tokens, target with <eos>
    assert bart.target == l7.PACK_LENGTH + 1 and bart.input < l7.PACK_LENGTH
    assert t5.target_over_input == pytest.approx(10 / 43) and t5.target_over_text == pytest.approx(10 / 48)
    assert bart.target_over_text == pytest.approx(49 / 48)


# ---- section 4 -----------------------------------------------------------------------------------------
def test_lesson7_runs_are_cached_and_the_losses_fall():
    runs = l7.lesson7_runs(0)
    assert l7.lesson7_runs(seed=0) is runs and set(runs) == {"t5", "bart"}
    for objective, run in runs.items():
        loss = np.array(run.history.loss)
        assert len(loss) == l7.lesson7_train_config().steps
        assert run.model.dtype == np.float64
        assert loss[-20:].mean() < 0.75 * loss[:20].mean(), f"{objective}: the tiny model did not learn"
        assert run.history.evals[-1]["teacher_forced_token_accuracy"] > 0.15
    assert runs["t5"].model.config == runs["bart"].model.config  # same model...
    from minitf.models import EncoderDecoder

    first = [EncoderDecoder(l7.lesson7_model_config(l7.lesson7_task(o))).parameters() for o in ("t5", "bart")]
    assert all(np.array_equal(first[0][k], first[1][k]) for k in first[0])  # ... from the same initial weights


def test_step_cost_counts_positions_and_flops():
    cfg = l7.lesson7_train_config()
    t5, bart = l7.step_cost("t5", n_batches=5), l7.step_cost("bart", n_batches=5)
    assert t5.decoder_positions == cfg.batch_size * 10 and t5.padded_T == 10  # 7 noise + 2 sentinels + <eos>
    assert bart.decoder_positions == cfg.batch_size * (l7.PACK_LENGTH + 1)
    assert t5.encoder_positions == cfg.batch_size * 43
    task = l7.lesson7_task("t5")
    fwd = forward_flops(l7.lesson7_model_config(task), cfg.batch_size, 43, 10)
    assert t5.flops["total"] == 3 * fwd["total"]  # forward + backward (twice the forward)
    assert bart.flops["decoder"] > 3 * t5.flops["decoder"] and bart.flops["total"] > 1.5 * t5.flops["total"]


# ---- section 5 -----------------------------------------------------------------------------------------
def _rows():
    rows = []
    for objective, base in (("bart", 0.40), ("scratch", 0.05)):
        for n_pairs in (100, 300):
            for seed in range(3):
                rows.append({"objective": objective, "n_pairs": n_pairs, "seed": seed, "freeze_encoder": False,
                             "exact_match": base + 0.01 * seed + (0.2 if n_pairs == 300 else 0),
                             "token_accuracy": 0.5 + base})
    rows.append({"objective": "bart", "n_pairs": 100, "seed": 0, "freeze_encoder": True, "exact_match": 0.9,
                 "token_accuracy": 0.9})
    return rows


def test_sample_efficiency_summary_at_the_smallest_size():
    out = l7.sample_efficiency_summary(_rows())
    assert [r["objective"] for r in out] == ["bart", "scratch"]
    bart, scratch = out
    assert bart["n_pairs"] == 100 and bart["n_seeds"] == 3  # the frozen-encoder row is left out
    assert bart["exact_match"] == pytest.approx(0.41) and bart["exact_match_std"] == pytest.approx(0.01)
    assert scratch["exact_match"] == pytest.approx(0.06) and scratch["token_accuracy_std"] == 0.0
    assert l7.sample_efficiency_summary(_rows(), n_pairs=300)[0]["exact_match"] == pytest.approx(0.61)


def test_sample_efficiency_summary_errors():
    with pytest.raises(ValueError, match="rows"):
        l7.sample_efficiency_summary([])
    with pytest.raises(ValueError, match="n_pairs"):
        l7.sample_efficiency_summary(_rows(), n_pairs=1000)


# ---- the figures ---------------------------------------------------------------------------------------
def test_lesson7_figures_are_registered():
    assert [s.name for s in registry.all_figures(lesson=7)] == list(NAMES)


def test_corruption_figure_draws_the_example():
    from matplotlib.text import Text

    fig = registry.get("l07_corruption").make(seed=0)
    drawn = Counter(t.get_text() for t in fig.findobj(Text))
    ex = l7.corruption_example(0)
    for word, n in Counter(ex.words + ex.words + ex.t5_input + ex.t5_target + ex.bart_input).items():
        assert drawn[word] >= n, word
