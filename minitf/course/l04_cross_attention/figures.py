"""Figures of Lesson 4, *Cross-attention: joining the two stacks* (drawn from what ``minitf.course.l04_cross_attention`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l04_alignment``            the cross-attention weights (T x S) of every decoder block and
                             head of the lesson's model (:func:`~minitf.course.l04_cross_attention.lesson4_run`,
                             trained on ``reverse``) for one held-out source
                             (:func:`~minitf.course.l04_cross_attention.alignment_example`), the known
                             alignment n-1-t marked, and each head's argmax match over the
                             200 held-out pairs (:func:`~minitf.course.l04_cross_attention.alignment_scores`)
``l04_shares``               dL/dH_enc of the teacher-forced loss on the four pairs of §5
                             (``run.eval_pairs[:4]``) and each decoder block's share of it
                             (:func:`~minitf.course.l04_cross_attention.gradient_shares`), per source
                             position
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from .experiments import alignment_example, alignment_scores, gradient_shares, lesson4_run
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["alignment", "shares"]

PT = 12
"""Points: the smallest text of ``l04_shares``, at most 11.4 inches wide and 6.4 high, so at
least 14 pt on a 16:9 slide 13.3 inches wide (:func:`minitf.course.kit.figures.draw.slide_pt`)."""
PT_WIDE = 14
"""Points: the smallest text of ``l04_alignment``, whose four panels in a row make it about 13
inches wide (and under 7.48 high): 14 pt there is 14 pt on the slide."""


ALIGNMENT_TITLE = "What the decoder looks at: cross-attention against the known alignment"
SHARES_TITLE = "Where dL/dH_enc comes from: each decoder block's share, per source position"


@register("l04_alignment", lesson=4, title=ALIGNMENT_TITLE)
def alignment(seed: int = 0):
    """Cross-attention weights of the lesson's trained model on one held-out source, one
    panel per decoder block and head, side by side (block 1's heads, then block 2's): row t
    is the decoder position that predicts target token t, column s the source character s.
    Circles mark the known alignment (target t reads source n-1-t); each panel's title gives
    how often the most attended source position is that one, over the 200 held-out pairs."""
    from ..kit.figures.draw import new_figure

    run = lesson4_run(seed)
    ex = alignment_example(run)
    scores = alignment_scores(run.model, run.task, run.eval_pairs)
    L, H, T, S = ex.weights.shape
    ca, gt, ink = KEY["cross_attention"], KEY["ground_truth"], NEUTRAL["ink"]
    rows = list(ex.target) + ["eos"]  # what position t predicts
    # inches: the panels in one row, so the figure is as wide as a 16:9 slide and not taller
    cell = 2.45 / S  # square cells, each panel 2.45 inches wide
    pw, ph = cell * S, cell * T
    left, bottom, gap_head, gap_block = 1.05, 0.75, 0.25, 0.65
    fig_w, fig_h = left + L * H * pw + L * (H - 1) * gap_head + (L - 1) * gap_block + 1.35, bottom + ph + 2.25
    fig = new_figure(fig_w, fig_h)
    image = None
    x0 = left
    for l in range(L):
        for head in range(H):
            ax = fig.add_axes((x0 / fig_w, bottom / fig_h, pw / fig_w, ph / fig_h))
            image = ax.imshow(ex.weights[l, head], cmap=ca.cmap(), vmin=0.0, vmax=1.0, aspect="auto",
                              interpolation="nearest")
            t = np.arange(len(ex.expected))
            ax.plot(ex.expected, t, linestyle="none", marker="o", markersize=11, markerfacecolor="none",
                    markeredgecolor=gt.color, markeredgewidth=1.8,
                    label="known alignment" if (l, head) == (0, 0) else "_")
            ax.set_xticks(range(S), list(ex.source))
            ax.set_yticks(range(T), rows if head == 0 else [])
            ax.tick_params(length=0, labelsize=PT_WIDE)
            ax.set_title(f"head {head + 1}: {scores.argmax_match[l, head]:.0%}", fontsize=PT_WIDE, color=ink)
            if head == 0:
                ax.text(0.0 if H == 1 else (pw + gap_head / 2) / pw, 1.0 + 0.5 / ph, f"decoder block {l + 1}",
                        transform=ax.transAxes, ha="left" if H == 1 else "center", va="bottom",
                        fontsize=PT_WIDE + 1, fontweight="bold", color=ink)
            if (l, head) == (0, 0):
                ax.set_ylabel("target position t\n(the token it predicts)", fontsize=PT_WIDE)
            ax.set_xlabel("source position s", fontsize=PT_WIDE)
            x0 += pw + (gap_head if head + 1 < H else gap_block)
    x0 += 0.15 - gap_block
    cax = fig.add_axes((x0 / fig_w, bottom / fig_h, 0.15 / fig_w, ph / fig_h))
    bar = fig.colorbar(image, cax=cax)
    bar.set_label("weight", fontsize=PT_WIDE)
    bar.set_ticks([0.0, 0.5, 1.0])
    bar.ax.tick_params(labelsize=PT_WIDE)
    fig.text(0.05 / fig_w, 1.0 - 0.05 / fig_h, ALIGNMENT_TITLE, fontsize=PT_WIDE + 2, fontweight="bold", va="top",
             color=ink)
    top = fig_h - 0.55
    fig.legend(loc="upper left", bbox_to_anchor=(0.05 / fig_w, top / fig_h), frameon=False, fontsize=PT_WIDE,
               handles=fig.axes[0].get_legend_handles_labels()[0], borderaxespad=0.0, handletextpad=0.4,
               labels=[f"known alignment (reverse: target t reads source n\u22121\u2212t); "
                       f"source \u201c{ex.source}\u201d \u2192 \u201c{ex.target}\u201d"])
    fig.text(0.1 / fig_w, (top - 0.5) / fig_h, f"head k: x% = how often its most attended source position is "
             f"n\u22121\u2212t, over {scores.positions} target positions", fontsize=PT_WIDE, va="top", color=ink)
    return fig


@register("l04_shares", lesson=4, title=SHARES_TITLE)
def shares(seed: int = 0):
    """dL/dH_enc of the lesson's trained model on the four pairs of section 5, one panel per
    pair, one bar per source position s.  The bar's total height is |dL/dH_enc[s]| (the
    norm over D, marked by the dashed line); it is split into each decoder block's share
    projected on that direction, share_l[s] . u[s] with u[s] = dL/dH_enc[s] / |dL/dH_enc[s]|,
    so the parts add up to the total exactly (norms would not: |a + b| < |a| + |b|).  A part
    below zero is a share that points against the total.  Padded positions get no gradient."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure, slide_axes

    run = lesson4_run(seed)
    pairs = run.eval_pairs[:4]
    g = gradient_shares(run, pairs)
    B, S, _ = g.dH_enc.shape
    L = len(g.shares)
    total = np.linalg.norm(g.dH_enc, axis=-1)  # (B, S)
    u = g.dH_enc / np.where(total > 0, total, 1.0)[..., None]  # (B, S, D) unit directions (0 on padding)
    parts = np.stack([(sh * u).sum(-1) for sh in g.shares])  # (L, B, S), sums to total over L
    ca, grad, enc, pad, ink = KEY["cross_attention"], KEY["gradient"], KEY["encoder"], KEY["padding"], NEUTRAL["ink"]
    tints = [0.3 + 0.7 * l / max(1, L - 1) for l in range(L)]  # block 1 light ... last block solid
    top = float(total.max()) * 1.12
    bottom = min(0.0, float(np.where(parts < 0, parts, 0.0).sum(0).min()) * 1.4)
    fig_w, fig_h = 10.8, 6.45  # inches: 16:9 at a size where PT is still 14 pt on the slide
    fig = new_figure(fig_w, fig_h)
    x = np.arange(S)
    for b, (src, tgt) in enumerate(pairs):
        # 2 x 2 panels, each 1.8 inches high: room above for the title and the legend, below for the labels
        ax = fig.add_axes((0.08 + (b % 2) * 0.48, (0.65 + (1 - b // 2) * 2.55) / fig_h, 0.415, 1.8 / fig_h))
        n = len(src)
        if n < S:
            ax.axvspan(n - 0.5, S - 0.5, **pad.fill(), linewidth=0.8)
        up, down = np.zeros(S), np.zeros(S)
        for l in range(L):
            v = parts[l, b]
            base = np.where(v >= 0, up, down)
            ax.bar(x, v, bottom=base, width=0.7, linewidth=0.8, **ca.fill(tints[l]))
            up, down = np.where(v >= 0, up + v, up), np.where(v < 0, down + v, down)
        ax.hlines(total[b, :n], x[:n] - 0.42, x[:n] + 0.42, linewidth=2.0, **grad.arrow())
        ax.axhline(0.0, color=ink, linewidth=0.6)
        ax.set_xlim(-0.5, S - 0.5)
        ax.set_ylim(bottom, top)
        ax.set_yticks([0, 0.05, 0.1, 0.15] if top > 0.15 else [0, 0.05, 0.1])
        ax.set_xticks(x, list(src) + ["pad"] * (S - n))
        ax.tick_params(length=0)
        for tick in ax.get_xticklabels()[:n]:
            tick.set_color(enc.color)
        ax.set_title(f"\u201c{src}\u201d \u2192 \u201c{tgt}\u201d", fontsize=PT + 1, color=ink)
        if b % 2 == 0:
            ax.set_ylabel("along dL/dH_enc[s]")
        if b // 2 == 1:
            ax.set_xlabel("source position s of H_enc", color=enc.color)
        slide_axes(ax, PT)
    handles = [Patch(**ca.fill(tints[l]), linewidth=0.8,
                     label=f"block {l + 1}\u2019s share (its cross-attention\u2019s dx_kv)") for l in range(L)]
    handles += [Line2D([], [], linewidth=2.0, label="|dL/dH_enc[s]|: the total gradient", **grad.line()),
                Patch(**pad.fill(), linewidth=0.8, label="padding: no gradient")]
    fig.text(0.01, 1.0 - 0.03 / fig_h, SHARES_TITLE, fontsize=PT + 2, fontweight="bold", va="top", color=ink)
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 1.0 - 0.36 / fig_h), frameon=False,
               fontsize=PT, ncol=2, columnspacing=1.5, handlelength=1.8)
    return fig
