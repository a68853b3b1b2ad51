"""Figures of Lesson 2, *Attention from scratch* (drawn from what ``minitf.course.l02_attention`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l02_scaling``              :func:`~minitf.course.l02_attention.score_variance` and
                             :func:`~minitf.course.l02_attention.saturation`: random N(0, 1)
                             queries and keys, Dh from 4 to 1024, with and without 1/sqrt(Dh)
``l02_heads``                :func:`~minitf.course.l02_attention.head_patterns` of the lesson's
                             model (:func:`~minitf.course.l02_attention.lesson2_run`): every head's
                             mean attention map on the held-out pairs
===========================  ==================================================================

Scaled and unscaled are not meanings of the key, so ``l02_scaling`` draws both in ink, told
apart by line style and by markers the key gives no meaning (x and P).  This module imports matplotlib only inside the functions
that draw.
"""
from __future__ import annotations

import numpy as np

from .experiments import ATTENTIONS, head_patterns, lesson2_run, saturation, score_variance
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["scaling", "heads"]


PT = 12.5
"""Points: the smallest text of ``l02_scaling`` (at most 11.8 inches wide, so at least 14 pt on a
13.3-inch slide, :func:`minitf.course.kit.figures.draw.slide_pt`); ``l02_heads``, 13 inches wide, uses 14."""
TITLE_PT = 13.5


@register("l02_scaling", lesson=2, title="Why 1/sqrt(Dh): the variance of q.k and the softmax's saturation")
def scaling(seed: int = 0):
    """Left: var(q . k) against Dh, without and with the scale.  Right: the softmax over 16
    keys, its mean largest weight and the mean norm of its Jacobian (the gradient that gets
    through), without and with the scale."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullLocator

    from ..kit.figures.draw import new_figure, slide_axes

    var = score_variance(seed=seed)
    sat = saturation(seed=seed)
    dims = np.array(sorted(var))
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]
    raw = dict(color=ink, linestyle=":", marker="x", linewidth=2.0, markersize=8)
    scaled = dict(color=ink, linestyle="-", marker="P", linewidth=2.0, markersize=8)  # not the key's o (decoder)

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
    from ..kit.figures.draw import new_figure, slide_axes

    run = lesson2_run(seed)
    patterns = head_patterns(run)
    pt = 14  # drawn 13 inches wide: at least 14 pt on a 13.3-inch slide
    fig_w, fig_h = 13.0, 7.0
    fig = new_figure(fig_w, fig_h)
    fig.text(0.005, 0.997, "What each head attends to: mean weights on 200 held-out pairs", fontsize=pt + 2,
             fontweight="bold", va="top")
    fig.text(0.005, 0.94, "reverse task, 8 letters; one encoder and one decoder block, H = 4 heads\n"
             "head h: o \u2192 w  is the offset o the head prefers and its mean weight w there;\n"
             "offset = key \u2212 query (self-attention), key \u2212 (7 \u2212 t), the source position the "
             "reversal reads (cross)", fontsize=pt, va="top", linespacing=1.3)
    # in inches: a label column, then H maps; a row is a title, a map and its tick labels
    left, map_w, gap = 2.5, 2.3, 0.4
    map_h, pitch, top = 1.22, 1.83, 5.36
    for row, name in enumerate(ATTENTIONS):
        cmap = KEY[_CMAP[name]].cmap()
        bottom = top - map_h - row * pitch
        fig.text(0.05 / fig_w, (bottom + map_h / 2) / fig_h, name.replace(" ", "\n", 1), fontsize=pt + 1,
                 fontweight="bold", va="center", color=KEY[_CMAP[name]].color, linespacing=1.2)
        for h, p in enumerate(patterns[name]):
            ax = fig.add_axes(((left + h * (map_w + gap)) / fig_w, bottom / fig_h, map_w / fig_w, map_h / fig_h))
            ax.imshow(p.mean_map, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
            ax.set_title(f"head {h}:  {p.offset:+d} \u2192 {p.offset_share:.2f}", fontsize=pt, pad=4)
            T, S = p.mean_map.shape
            ax.set_xticks(range(0, S, 2))
            ax.set_yticks(range(0, T, 2), [str(t) for t in range(0, T, 2)] if h == 0 else [])
            ax.tick_params(length=2, pad=2)
            if h == 0:
                ax.set_ylabel("query", labelpad=2)
            if row == len(ATTENTIONS) - 1:
                ax.set_xlabel("key position", labelpad=1)
            slide_axes(ax, pt)
    return fig
