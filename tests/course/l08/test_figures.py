"""Tests for Lesson 8's Figures 2 and 3 (minitf/course/l08_teacher_forcing/figures.py): registered, rendered, and
computed from the lesson's trained model.  tests/course/kit/test_figures.py checks every figure for the
key's colours and for determinism (the lesson's model trained again between two renders)."""
from __future__ import annotations

import matplotlib
import numpy as np

from minitf.course import l08_teacher_forcing as l8
from minitf.course.kit.figures import KEY, registry

NEW = ["l08_gradient_journey", "l08_exposure_gap"]


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)]


def test_registered_under_lesson_8_after_figure_1():
    specs = registry.all_figures(lesson=8)
    assert [s.name for s in specs] == ["l08_shift", *NEW]
    assert registry.get("l08_gradient_journey").title == "How a loss at the decoder's head trains the encoder"
    assert registry.get("l08_exposure_gap").title == "Teacher forcing, and the gap it leaves behind"
    assert all(s.fn.__module__ == "minitf.course.l08_teacher_forcing.figures" for s in specs)


def test_figure_2_shows_the_measured_journey():
    run = l8.lesson8_run(0)
    journey = l8.gradient_journey(run.model, l8.lesson8_batch(0))
    run.model.zero_grad()
    fig = registry.get("l08_gradient_journey").make(seed=0)
    shown = "\n".join(texts(fig))
    norms = {s.key: s.norm for s in journey.stages}
    for key in ("loss", "head", "H_dec", "H_enc", "src_embed", "decoder.0.share", "encoder.0"):
        assert f"{norms[key]:#.2g}" in shown, f"the figure does not show the measured norm of {key}"
    for l in range(len(run.model.decoder_layers)):
        assert f"decoder block {l + 1}" in shown and f"share {l + 1}" in shown
    # the bar chart: one bar per decoder block, their projections, and the sum at 100%
    bars = sorted(round(p.get_width(), 6) for p in fig.axes[1].patches)
    assert bars == sorted(round(float(f), 6) for f in [*journey.share_fractions, journey.share_fractions.sum()])
    assert "max |difference| = 0" in shown and "\u2016\u2202L/\u2202H_enc\u2016 = 0" in shown
    # drawn with the key's meanings: gradients dashed teal, cross-attention boxes in its colour
    arrows = [p for p in fig.axes[0].patches if type(p).__name__ == "FancyArrowPatch"]
    assert arrows and all(matplotlib.colors.to_hex(p.get_edgecolor()) == KEY["gradient"].color.lower()
                          for p in arrows)
    assert all(p.get_linestyle() in ("--", "dashed") for p in arrows)


def test_figure_3_plots_the_runs_numbers():
    run = l8.lesson8_run(0)
    fig = registry.get("l08_exposure_gap").make(seed=0)
    acc_ax, len_ax = fig.axes[0], fig.axes[1]
    lines = {matplotlib.colors.to_hex(l.get_color()): l for l in acc_ax.get_lines() if len(l.get_xdata()) > 2}
    tf, fr = lines[KEY["teacher_forced"].color.lower()], lines[KEY["free_running"].color.lower()]
    np.testing.assert_array_equal(tf.get_xdata(), [e["step"] for e in run.history.evals])
    np.testing.assert_allclose(tf.get_ydata(), [e["teacher_forced_token_accuracy"] for e in run.history.evals])
    np.testing.assert_allclose(fr.get_ydata(), [e["free_running_token_accuracy"] for e in run.history.evals])
    assert fr.get_linestyle() == KEY["free_running"].linestyle == "-."
    # the compounding panel: measured free-running errors and the curve 1 - (1 - eps)^T
    comp = run.midpoint
    fr_colour = KEY["free_running"].color.lower()
    measured = [l for l in len_ax.get_lines() if matplotlib.colors.to_hex(l.get_color()) == fr_colour]
    np.testing.assert_allclose(measured[0].get_ydata(), comp.free_running_error)
    curve = next(l for l in len_ax.get_lines() if len(l.get_xdata()) > 50)
    T = np.asarray(curve.get_xdata())
    np.testing.assert_allclose(curve.get_ydata(), 1 - (1 - comp.epsilon) ** T)
    # the example strip: the target's tokens, the model's both ways
    shown = texts(fig)
    ex = run.midpoint_example
    n = len(ex["target"])
    assert f"{n - sum(ex['teacher_forced_right'])} wrong" in shown
    assert f"{n - sum(ex['free_running_right'])} wrong\n{ex['free_running_edits']} edits away" in shown
    assert any(ex["source"] in t for t in shown)
