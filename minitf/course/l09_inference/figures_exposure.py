"""Figures of Lesson 9, section 6 (*Exposure bias, measured*): drawing only.

``l09_exposure_by_position`` draws the section's stored runs
(``minitf/course/l09_inference/results/exposure.json``,
:func:`minitf.course.l09_inference.exposure.load_results`), so it is the same on every machine
and needs no training; ``OPENBLAS_NUM_THREADS=1 python -m minitf.course.l09_inference exposure
--measure`` measures them again.  ``l09_schedules`` is computed from the schedules themselves.

============================  =================================================================
figure                        what it is drawn from
============================  =================================================================
``l09_exposure_by_position``  the error at each target position (sort of 20 letters, 200
                              held-out pairs), teacher-forced and free-running, of the plain
                              model and of the one trained with scheduled sampling (linear),
                              mean over the seeds with their range; and each seed's
                              free-running token error for every variant
``l09_schedules``             eps_i, the probability of feeding the gold token, over the 300
                              updates: linear, exponential, inverse sigmoid
                              (:func:`~minitf.course.l09_inference.exposure.schedule_curves`)
============================  =================================================================

Colour, marker and line style say what a model is fed when measured (teacher-forced, free-running:
the figure key's meanings, kept for both models); the model trained with scheduled sampling is told
apart by thin lines and hollow markers.
This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from .exposure import FINAL_EPS, STEPS, load_results, schedule_curves, stored_runs
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["exposure_by_position", "schedules"]

PT = 12
"""Points: the smallest text here.  No figure is saved wider than 11.3 inches, so every
text is at least 14 pt on a 13.3-inch slide (:func:`minitf.course.kit.figures.draw.slide_pt`)."""

SS_SHOWN = "ss_linear"  # the scheduled-sampling variant drawn by position
VARIANT_LABELS = {"teacher_forcing": "teacher forcing", "ss_linear": "SS linear", "ss_exponential": "SS exponential",
                  "ss_inverse_sigmoid": "SS inv. sigmoid", "teacher_forcing_400": "teacher forcing,\n400 updates"}
SCHEDULE_STYLES = {"linear": ("-", "linear"), "exponential": ("--", "exponential"),
                   "inverse_sigmoid": (":", "inverse sigmoid")}


def _by_position(results, variant: str, field: str):
    rows = np.array([r[field] for r in stored_runs(results, variant).values()])  # (seeds, T)
    return rows.mean(0), rows.min(0), rows.max(0)


@register("l09_exposure_by_position", lesson=9,
          title="Exposure bias: error by target position, teacher-forced vs free-running vs scheduled sampling")
def exposure_by_position(seed: int = 0):
    """Left: the error rate at each target position (position 21 is ``<eos>``) of the plain
    model, fed the true prefix (teacher-forced) and its own (free-running, greedy), and the
    same two for the model trained with scheduled sampling (linear schedule: thin lines,
    hollow markers, each in its feeding's line style); lines are means over the seeds, bands
    the range of the plain model's.  Right: each seed's free-running token error for every
    variant, a thin line joining one seed's runs, the mean as a large marker.  ``seed`` is accepted for the registry's signature; the figure draws
    the stored runs."""
    from ..kit.figures.draw import new_figure, slide_axes

    results = load_results()
    pos = np.array(results["positions"])
    seeds = results["settings"]["seeds"]
    tf, fr, ink, paper = KEY["teacher_forced"], KEY["free_running"], NEUTRAL["ink"], NEUTRAL["paper"]
    fig = new_figure(11.3, 5.2)
    ax = fig.add_axes((0.075, 0.13, 0.49, 0.63))
    for variant, meaning, field, label in (
            ("teacher_forcing", fr, "free_running", "free-running, teacher forcing"),
            (SS_SHOWN, fr, "free_running", "free-running, scheduled sampling (linear)"),
            ("teacher_forcing", tf, "teacher_forced", "teacher-forced, teacher forcing"),
            (SS_SHOWN, tf, "teacher_forced", "teacher-forced, scheduled sampling (linear)")):
        mean, low, high = _by_position(results, variant, field)
        if variant == "teacher_forcing":
            ax.fill_between(pos, low, high, linewidth=0, **meaning.fill(0.2))
            ax.plot(pos, mean, label=label, markersize=6, linewidth=2.4, **meaning.line())
        else:
            ax.plot(pos, mean, label=label, markersize=6, linewidth=1.2, **meaning.line(markerfacecolor=paper))
    ax.set_xlim(0.5, pos[-1] + 0.5)
    ax.set_ylim(0, 1.2 * ax.get_ylim()[1])  # room above the curves for the legend
    ax.set_xticks([1, 5, 10, 15, int(pos[-1])])
    ax.set_xticklabels(["1", "5", "10", "15", f"{int(pos[-1])}: eos"])
    ax.set_xlabel("target position t")
    ax.set_ylabel("error rate at t")
    ax.grid(True, axis="y")
    # handles long enough to show the dash-dot's dot beside the marker
    ax.legend(loc="upper left", fontsize=PT, handlelength=3.6, borderaxespad=0.3, ncol=1)
    slide_axes(ax, PT)
    # right: each seed's free-running token error, every variant (top to bottom)
    ax2 = fig.add_axes((0.775, 0.13, 0.215, 0.63))
    variants = list(VARIANT_LABELS)
    y = -np.arange(len(variants))
    values = np.array([[stored_runs(results, v)[s]["free_running_token_error"] for v in variants] for s in seeds])
    for row in values:  # (variants,) one seed
        ax2.plot(row, y, linewidth=1.0, markersize=5, **fr.line(alpha=0.45))
    ax2.plot(values.mean(0), y, linestyle="none", marker="X", markersize=10, color=ink, label="mean")
    ax2.set_yticks(y)
    ax2.set_yticklabels([VARIANT_LABELS[v] for v in variants], fontsize=PT)
    ax2.set_ylim(y[-1] - 0.4, 0.4)
    ax2.set_xlim(0, None)
    ax2.set_xlabel("free-running token error")
    ax2.grid(True, axis="x")
    ax2.set_title("\u25bc each seed, its runs joined\n\u2716 the mean", fontsize=PT)
    slide_axes(ax2, PT)
    fig.text(0.075, 0.985, "Fed its own prefix, the model's errors build up through most of the target",
             fontsize=PT + 2, fontweight="bold", va="top", color=ink)
    fig.text(0.075, 0.905, f"sort, 20 letters, 200 held-out strings; {results['settings']['train']['steps']} updates; "
             f"mean over seeds {', '.join(map(str, seeds))} (band: their range, teacher forcing only)", fontsize=PT,
             va="top", color=ink)
    return fig


@register("l09_schedules", lesson=9, title="Scheduled sampling: the three schedules of the gold probability")
def schedules(seed: int = 0):
    """eps_i, the probability that a decoder input is the gold token rather than the model's
    own, at each of the 300 updates: linear, exponential and inverse-sigmoid decay, each from
    1 (nearly, for the inverse sigmoid) to 0.5 at the last update, as the section trains them.
    ``seed`` is accepted for the registry's signature; nothing is random."""
    from ..kit.figures.draw import new_figure, slide_axes

    curves = schedule_curves(STEPS)
    gold, ink = KEY["ground_truth"], NEUTRAL["ink"]
    fig = new_figure(10.0, 4.2)
    ax = fig.add_axes((0.09, 0.16, 0.6, 0.7))
    steps = np.arange(1, STEPS + 1)
    for name, eps in curves.items():
        linestyle, label = SCHEDULE_STYLES[name]
        ax.plot(steps, eps, label=label, linewidth=2.4, **gold.line(linestyle=linestyle, marker=None))
    ax.axhline(FINAL_EPS, color=NEUTRAL["rule"], linewidth=1.5, zorder=0)
    ax.set_xlim(0, STEPS)
    ax.set_ylim(0, 1.04)
    ax.set_xticks([1, 100, 200, 300])
    ax.set_xlabel("update i")
    ax.set_ylabel("\u03b5 = P(gold token fed)")
    ax.grid(True, axis="y")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=PT, handlelength=3.0, frameon=False)
    slide_axes(ax, PT)
    fig.text(0.72, 0.45, f"with probability 1 \u2212 \u03b5\nthe input is the model's\nown argmax "
             f"(from pass 1);\nall three reach \u03b5 = {FINAL_EPS}\nat update {STEPS}", fontsize=PT, va="top",
             color=ink)
    fig.text(0.09, 0.99, "Scheduled sampling: how often the gold token is fed", fontsize=PT + 2, fontweight="bold",
             va="top", color=ink)
    return fig
