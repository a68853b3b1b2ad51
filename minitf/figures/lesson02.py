"""Figures of Lesson 2, *Attention from scratch* (drawn from what ``minitf.course.lesson02`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l02_scaling``              :func:`~minitf.course.lesson02.score_variance` and
                             :func:`~minitf.course.lesson02.saturation`: random N(0, 1)
                             queries and keys, Dh from 4 to 1024, with and without 1/sqrt(Dh)
``l02_heads``                :func:`~minitf.course.lesson02.head_patterns` of the lesson's
                             model (:func:`~minitf.course.lesson02.lesson2_run`): every head's
                             mean attention map on the held-out pairs
===========================  ==================================================================

Scaled and unscaled are not meanings of the key, so ``l02_scaling`` draws both in ink, told
apart by line style and marker.  This module imports matplotlib only inside the functions
that draw.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson02 import ATTENTIONS, head_patterns, lesson2_run, saturation, score_variance
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["scaling", "heads"]


PT = 12.5
"""Points: the smallest text of this module's figures (at most 11.8 inches wide, so at least
14 pt on a 13.3-inch slide, :func:`minitf.figures.draw.slide_pt`)."""
TITLE_PT = 13.5


@register("l02_scaling", lesson=2, title="Why 1/sqrt(Dh): the variance of q.k and the softmax's saturation")
def scaling(seed: int = 0):
    """Left: var(q . k) against Dh, without and with the scale.  Right: the softmax over 16
    keys, its mean largest weight and the mean norm of its Jacobian (the gradient that gets
    through), without and with the scale."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullLocator

    from .draw import new_figure, slide_axes

    var = score_variance(seed=seed)
    sat = saturation(seed=seed)
    dims = np.array(sorted(var))
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]
    raw = dict(color=ink, linestyle=":", marker="x", linewidth=2.0, markersize=8)
    scaled = dict(color=ink, linestyle="-", marker="o", linewidth=2.0, markersize=6)

    fig = new_figure(11.2, 5.0)
    fig.text(0.01, 0.985, "Why the scores are divided by \u221aDh", fontsize=14, fontweight="bold", va="top")
    fig.text(0.01, 0.915, "q, k with independent N(0, 1) entries; softmax over S = 16 keys", fontsize=PT,
             va="top")

    panels = (  # (left, y without / with the scale, y scale, y limits, title, y label)
        (0.065, [var[d][0] for d in dims], [var[d][1] for d in dims], "log", None,
         "var(q\u00b7k) = Dh", "variance of the score"),
        (0.40, [sat[d][0].max_weight for d in dims], [sat[d][1].max_weight for d in dims], "linear",
         (0, 1.05), "softmax \u2192 one-hot", "mean largest weight"),
        (0.735, [sat[d][0].jacobian_norm for d in dims], [sat[d][1].jacobian_norm for d in dims], "linear",
         (0, None), "less gradient through", "mean \u2016diag(p) \u2212 p p\u1d40\u2016"),
    )
    for left, y_raw, y_scaled, yscale, ylim, title, ylabel in panels:
        ax = fig.add_axes((left, 0.26, 0.245, 0.52))
        ax.plot(dims, y_raw, **raw)
        ax.plot(dims, y_scaled, **scaled)
        ax.set_xscale("log", base=2)
        ax.set_xticks([4, 16, 64, 256, 1024], ["4", "16", "64", "256", "1024"])
        ax.xaxis.set_minor_locator(NullLocator())
        if yscale == "log":
            ax.set_yscale("log", base=2)
            ax.set_yticks([1, 16, 256], ["1", "16", "256"])
            ax.yaxis.set_minor_locator(NullLocator())
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel("head width Dh")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=TITLE_PT)
        slide_axes(ax, PT)
        ax.grid(True, which="major")
        if left == 0.40:  # the saturation panel: where uniform weights would sit
            ax.axhline(1 / 16, color=rule, linewidth=1.5)
            ax.text(dims[0], 1 / 16 + 0.03, "uniform: 1/16", fontsize=PT)
    fig.legend(handles=[Line2D([], [], label="q\u00b7k: without the scale", **raw),
                        Line2D([], [], label="q\u00b7k / \u221aDh: with the scale", **scaled)],
               loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=PT, handlelength=2.6,
               columnspacing=3.0)
    return fig


_CMAP = {"encoder self-attention": "encoder", "decoder self-attention": "decoder",
         "cross-attention": "cross_attention"}


@register("l02_heads", lesson=2, title="What the heads of a trained model attend to")
def heads(seed: int = 0):
    """Every head's mean attention map (rows: queries, columns: keys) on the 200 held-out pairs,
    one row of panels per attention of the lesson's model (reverse, 8 letters, H = 4), each
    titled with the offset it prefers and the mean weight it puts there."""
    from .draw import new_figure, slide_axes

    run = lesson2_run(seed)
    patterns = head_patterns(run)
    H = len(patterns[ATTENTIONS[0]])
    fig_w, fig_h = 11.0, 10.6
    fig = new_figure(fig_w, fig_h)
    fig.text(0.01, 0.995, "What each head attends to: mean weights on 200 held-out pairs", fontsize=14,
             fontweight="bold", va="top")
    fig.text(0.01, 0.965, "reverse task, 8 letters; one encoder and one decoder block, H = 4 heads\n"
             "head h: o \u2192 w  is the offset o the head prefers and its mean weight w there;\n"
             "offset = key \u2212 query (self-attention), key \u2212 (7 \u2212 t), the source position the "
             "reversal reads (cross)", fontsize=PT, va="top", linespacing=1.35)
    left, gap = 0.075, 0.03
    width = (0.99 - left - (H - 1) * gap) / H
    height, pitch = 0.17, 0.29
    for row, name in enumerate(ATTENTIONS):
        cmap = KEY[_CMAP[name]].cmap()
        bottom = 0.6 - row * pitch
        fig.text(0.01, bottom + height + 0.045, name, fontsize=TITLE_PT + 0.5, fontweight="bold", va="bottom",
                 color=KEY[_CMAP[name]].color)
        for h, p in enumerate(patterns[name]):
            ax = fig.add_axes((left + h * (width + gap), bottom, width, height))
            ax.imshow(p.mean_map, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
            ax.set_title(f"head {h}:  {p.offset:+d} \u2192 {p.offset_share:.2f}", fontsize=PT, pad=5)
            T, S = p.mean_map.shape
            ax.set_xticks(range(S))
            ax.set_yticks(range(T), [str(t) for t in range(T)] if h == 0 else [])
            ax.tick_params(length=2)
            if h == 0:
                ax.set_ylabel("query")
            if row == len(ATTENTIONS) - 1:
                ax.set_xlabel("key position")
            slide_axes(ax, PT)
    return fig
