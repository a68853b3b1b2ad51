"""Tests for Lesson 9's figures (minitf/figures/lesson09.py) and the measurements behind them."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from minitf.bench_decode import reference_config
from minitf.decoding import beam_search, greedy_search, start_decoding
from minitf.figures import off_key_colors, registry, render
from minitf.figures import lesson09 as l9

NAMES = ("l09_kv_caches", "l09_beam_tree", "l09_decode_cost")


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


# ---- registration, rendering, the key, determinism ------------------------------------------------
def test_lesson9_figures_are_registered_under_lesson_9():
    assert "minitf.figures.lesson09" in registry.FIGURE_MODULES
    assert [s.name for s in registry.all_figures(lesson=9)] == list(NAMES)
    assert 9 in registry.lessons()
    for name in NAMES:
        spec = registry.get(name)
        assert spec.lesson == 9 and spec.where == "lesson 9" and spec.title


@pytest.mark.parametrize("name", NAMES)
def test_figure_renders(name, tmp_path):
    fig = registry.get(name).make(seed=0)
    assert isinstance(fig, Figure) and fig.axes
    svg, png = render.render_figure(name, tmp_path, formats=["svg", "png"])
    assert ET.fromstring(svg.read_bytes()).tag.endswith("svg")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 5000


@pytest.mark.parametrize("name", NAMES)
def test_figure_uses_only_key_colours(name):
    bad = off_key_colors(registry.get(name).make(seed=0))
    assert not bad, "colours outside the figure key: " + "; ".join(f"{what}: {c}" for what, c in bad)


@pytest.mark.parametrize("name", NAMES)
def test_figure_is_deterministic_for_a_seed(name, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (first,) = render.render_figure(name, a, formats=["svg"])
    (second,) = render.render_figure(name, b, formats=["svg"])
    assert first.read_bytes() == second.read_bytes(), f"{name}.svg differs between two renders"


# ---- what the figures are computed from -------------------------------------------------------------
def test_lesson9_run_is_cached_and_trained():
    run = l9.lesson9_run(0)
    assert l9.lesson9_run(0) is run
    assert not run.model.training
    assert run.model.dtype == np.float64  # the same numbers on any BLAS
    assert len(run.eval_pairs) == l9.EVAL_SIZE
    assert run.history.loss[-1] < run.history.loss[0] / 3, "the lesson's model did not learn"
    with pytest.raises(TypeError, match="seed"):
        l9.lesson9_run("0")


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


def test_kv_cache_figure_reports_the_real_cache_shapes():
    run = l9.lesson9_run(0)
    c = run.model_config
    fig = registry.get("l09_kv_caches").make(seed=0)
    shown = "\n".join(texts(fig))
    S = run.task.batch(run.eval_pairs[:1]).input_ids.shape[1]
    cache = start_decoding(run.model, run.task.batch(run.eval_pairs[:1]).input_ids)
    assert cache.layers[0].K_cross.shape == (1, c.n_heads, S, c.d_head)
    assert f"K_cross  {(1, c.n_heads, S, c.d_head)}" in shown
    for t in (1, 2, 3):  # the self-attention cache: one more row per step
        assert f"K_self[:, :, :{t}]  {(1, c.n_heads, t, c.d_head)}" in shown
    # one image per block per snapshot: as many self-attention as cross-attention heat maps
    images = [im for ax in fig.axes for im in ax.images]
    names = [im.get_cmap().name for im in images]
    assert names.count("minitf.decoder") == names.count("minitf.cross_attention") >= 4
    # a snapshot's self-attention block has as many rows as the cache's length at that step
    heights = sorted(im.get_array().shape[0] for im in images if im.get_cmap().name == "minitf.decoder")
    assert heights[:3] == [1, 2, 3]
    assert all(im.get_array().shape[0] == S for im in images if im.get_cmap().name == "minitf.cross_attention")


def test_beam_tree_draws_every_traced_candidate_with_its_score():
    sc = l9.lesson9_showcase(0)
    fig = registry.get("l09_beam_tree").make(seed=0)
    shown = texts(fig)
    candidates = [c for s in sc.trace for c in s.candidates]
    assert len(candidates) == sum(len(s.candidates) for s in sc.trace) > 0
    statuses = {c.status for c in candidates}
    assert {"kept", "dropped", "finished"} <= statuses
    for c in candidates:
        assert f"{c.score:.2f}" in shown
    # the beams never exceed K, the candidates per step never exceed 2K
    assert all(len(s.beams) <= sc.num_beams and len(s.candidates) <= 2 * sc.num_beams for s in sc.trace)
    # and it agrees with a fresh beam search on the same input
    run = l9.lesson9_run(0)
    src = run.task.batch([(sc.source, sc.target)]).input_ids
    again = beam_search(run.model, src, num_beams=sc.num_beams, max_new_tokens=run.max_new_tokens,
                        length_penalty=0.0).hypotheses(0)[0]
    assert again.tokens == sc.beam.tokens


# ---- counting multiply-adds ---------------------------------------------------------------------------------
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


def test_decode_cost_figure_labels_the_counted_ratios():
    c = reference_config()
    shown = texts(registry.get("l09_decode_cost").make(seed=0))
    for t in (16, 64, 256):
        ratio = l9.decoder_step_macs(c, t, 32, False)["total"] / l9.decoder_step_macs(c, t, 32, True)["total"]
        assert f"{ratio:.0f}\u00d7" in shown


def test_latency_figure_draws_measured_values_in_key_colours():
    fig = l9.latency_figure([16, 32, 64], [0.5, 0.5, 0.6], [1.0, 2.0, 4.1])
    assert not off_key_colors(fig)
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) == 3]
    ys = sorted(tuple(np.round(ln.get_ydata(), 3)) for ln in lines)
    assert ys == [(0.5, 0.5, 0.6), (1.0, 2.0, 4.1)]
    assert {"2.0\u00d7", "4.0\u00d7", "6.8\u00d7"} <= set(texts(fig))
