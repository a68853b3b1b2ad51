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


@register("l02_scaling", lesson=2, title="Why 1/sqrt(Dh): the variance of q.k and the softmax's saturation")
def scaling(seed: int = 0):
    """Left: var(q . k) against Dh, without and with the scale.  Right: the softmax over 16
    keys, its mean largest weight and the mean norm of its Jacobian (the gradient that gets
    through), without and with the scale."""
    from .draw import new_figure

    var = score_variance(seed=seed)
    sat = saturation(seed=seed)
    dims = np.array(sorted(var))
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]
    raw = dict(color=ink, linestyle=":", marker="x", linewidth=1.8, markersize=7)
    scaled = dict(color=ink, linestyle="-", marker="o", linewidth=1.8, markersize=5)

    fig = new_figure(11.6, 4.2)
    fig.text(0.01, 0.985, "Why the scores are divided by \u221aDh", fontsize=12, fontweight="bold", va="top")
    fig.text(0.01, 0.925, "q and k with independent N(0, 1) entries; 4000 pairs per Dh (left), 1000 queries "
             "over S = 16 keys per Dh (middle, right)", fontsize=8.5, style="italic", va="top")

    panels = (  # (left, y without / with the scale, labels, y scale, y limits, title, y label, legend place)
        (0.06, [var[d][0] for d in dims], [var[d][1] for d in dims], ("q\u00b7k", "q\u00b7k / \u221aDh"), "log",
         None, "the score's variance is Dh", "variance of the score", "upper left"),
        (0.39, [sat[d][0].max_weight for d in dims], [sat[d][1].max_weight for d in dims], None, "linear",
         (0, 1.05), "the softmax saturates to one-hot", "mean largest weight of a row", "center right"),
        (0.72, [sat[d][0].jacobian_norm for d in dims], [sat[d][1].jacobian_norm for d in dims], None, "linear",
         (0, None), "and lets less gradient through", "mean \u2016diag(p) \u2212 p p\u1d40\u2016", "lower left"),
    )
    for left, y_raw, y_scaled, labels, yscale, ylim, title, ylabel, place in panels:
        ax = fig.add_axes((left, 0.14, 0.26, 0.66))
        labels = labels or ("without the scale", "with the scale")
        ax.plot(dims, y_raw, label=labels[0], **raw)
        ax.plot(dims, y_scaled, label=labels[1], **scaled)
        ax.set_xscale("log", base=2)
        if yscale == "log":
            ax.set_yscale("log", base=2)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel("head width Dh")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.legend(loc=place, fontsize=8.5)
        ax.grid(True, which="major")
        if left == 0.39:  # the saturation panel: where uniform weights would sit
            ax.axhline(1 / 16, color=rule, linewidth=1.2)
            ax.text(dims[0], 1 / 16 + 0.02, "uniform: 1/16", fontsize=8)
    return fig


_CMAP = {"encoder self-attention": "encoder", "decoder self-attention": "decoder",
         "cross-attention": "cross_attention"}


@register("l02_heads", lesson=2, title="What the heads of a trained model attend to")
def heads(seed: int = 0):
    """Every head's mean attention map (rows: queries, columns: keys) on the 200 held-out pairs,
    one row of panels per attention of the lesson's model (reverse, 8 letters, H = 4), each
    titled with the offset it prefers and the weight it puts there."""
    from .draw import new_figure

    run = lesson2_run(seed)
    patterns = head_patterns(run)
    H = len(patterns[ATTENTIONS[0]])
    fig = new_figure(2.45 * H + 0.6, 8.4)
    fig.text(0.01, 0.995, "What each head attends to: mean attention weights on 200 held-out pairs", fontsize=12,
             fontweight="bold", va="top")
    fig.text(0.01, 0.968, "reverse task, 8 letters; one encoder and one decoder block, H = 4 heads of Dh = 8. "
             "\noffset: key \u2212 query position (self-attention); key \u2212 (7 \u2212 t), the reversal's source "
             "position (cross-attention)", fontsize=8, style="italic", va="top")
    width, height = 0.8 / H, 0.2
    for row, name in enumerate(ATTENTIONS):
        cmap = KEY[_CMAP[name]].cmap()
        bottom = 0.62 - row * 0.3
        fig.text(0.01, bottom + height + 0.05, name, fontsize=10.5, fontweight="bold", va="bottom",
                 color=KEY[_CMAP[name]].color)
        for h, p in enumerate(patterns[name]):
            ax = fig.add_axes((0.07 + h * (width + 0.02), bottom, width, height))
            ax.imshow(p.mean_map, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
            ax.set_title(f"head {h}: offset {p.offset:+d} gets {p.offset_share:.2f}\nkey {p.key} gets "
                         f"{p.key_share:.2f}; max weight {p.max_weight:.2f}", fontsize=7.5)
            T, S = p.mean_map.shape
            ax.set_xticks(range(S))
            ax.set_yticks(range(T))
            ax.tick_params(labelsize=6.5)
            if h == 0:
                ax.set_ylabel("query position", fontsize=8)
            if row == len(ATTENTIONS) - 1:
                ax.set_xlabel("key position", fontsize=8)
    return fig
