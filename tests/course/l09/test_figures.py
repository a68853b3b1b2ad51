"""Tests for Lesson 9's figures (minitf/course/l09_inference/figures.py): registered, rendered, and showing what
minitf.course.l09_inference measured (tests/course/l09/test_experiments.py checks the measurements themselves;
tests/course/kit/test_figures.py checks every figure for the key's colours and for determinism)."""
from __future__ import annotations


import numpy as np
from matplotlib.text import Text

from minitf.bench.decode import reference_config
from minitf.course import l09_inference as l9
from minitf.decoding import beam_search, start_decoding
from minitf.course.kit.figures import off_key_colors, registry
from minitf.course.l09_inference.figures import latency_figure

NAMES = ("l09_kv_caches", "l09_beam_tree", "l09_decode_cost", "l09_copy_mixture", "l09_coverage",
         "l09_exposure_by_position", "l09_schedules")


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


# ---- registration and rendering ------------------------------------------------
def test_lesson9_figures_are_registered_under_lesson_9():
    assert "minitf.course.l09_inference.figures" in registry.figure_modules()
    assert [s.name for s in registry.all_figures(lesson=9)] == list(NAMES)
    assert 9 in registry.lessons()
    for name in NAMES:
        spec = registry.get(name)
        assert spec.lesson == 9 and spec.where == "lesson 9" and spec.title


# ---- what the figures show -----------------------------------------------------------------------------
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


def test_beam_tree_draws_every_traced_candidate_and_the_deciding_scores():
    sc = l9.lesson9_showcase(0)
    fig = registry.get("l09_beam_tree").make(seed=0)
    shown = texts(fig)
    candidates = [c for s in sc.trace for c in s.candidates]
    assert len(candidates) == sum(len(s.candidates) for s in sc.trace) > 0
    statuses = {c.status for c in candidates}
    assert {"kept", "dropped", "finished"} <= statuses
    for c in candidates:  # only the sums that decide the search are printed: the finished hypotheses'
        if c.status == "finished":
            assert f"{c.score:.2f}".replace("-", "\u2212") in shown, (c, shown)
    # the beams never exceed K, the candidates per step never exceed 2K
    assert all(len(s.beams) <= sc.num_beams and len(s.candidates) <= 2 * sc.num_beams for s in sc.trace)
    # and it agrees with a fresh beam search on the same input
    run = l9.lesson9_run(0)
    src = run.task.batch([(sc.source, sc.target)]).input_ids
    again = beam_search(run.model, src, num_beams=sc.num_beams, max_new_tokens=run.max_new_tokens,
                        length_penalty=0.0).hypotheses(0)[0]
    assert again.tokens == sc.beam.tokens


# ---- counting multiply-adds ---------------------------------------------------------------------------------
def test_decode_cost_figure_labels_the_counted_ratios():
    c = reference_config()
    shown = texts(registry.get("l09_decode_cost").make(seed=0))
    for t in (16, 64, 256):
        ratio = l9.decoder_step_macs(c, t, 32, False)["total"] / l9.decoder_step_macs(c, t, 32, True)["total"]
        assert f"{ratio:.0f}\u00d7" in shown


def test_latency_figure_draws_measured_values_in_key_colours():
    fig = latency_figure([16, 32, 64], [0.5, 0.5, 0.6], [1.0, 2.0, 4.1])
    assert not off_key_colors(fig)
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) == 3]
    ys = sorted(tuple(np.round(ln.get_ydata(), 3)) for ln in lines)
    assert ys == [(0.5, 0.5, 0.6), (1.0, 2.0, 4.1)]
    assert {"2.0\u00d7", "4.0\u00d7", "6.8\u00d7"} <= set(texts(fig))
