"""Figures of Lesson 4, *Cross-attention: joining the two stacks* (drawn from what ``minitf.course.lesson04`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l04_alignment``            the cross-attention weights (T x S) of every decoder block and
                             head of the lesson's model (:func:`~minitf.course.lesson04.lesson4_run`,
                             trained on ``reverse``) for one held-out source
                             (:func:`~minitf.course.lesson04.alignment_example`), the known
                             alignment n-1-t marked, and each head's argmax match over the
                             200 held-out pairs (:func:`~minitf.course.lesson04.alignment_scores`)
``l04_shares``               dL/dH_enc of the teacher-forced loss on the four pairs of §5
                             (``run.eval_pairs[:4]``) and each decoder block's share of it
                             (:func:`~minitf.course.lesson04.gradient_shares`), per source
                             position
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson04 import alignment_example, alignment_scores, gradient_shares, lesson4_run
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["alignment", "shares"]

PT = 12
"""Points: the smallest text of ``l04_shares`` (at most 11.4 inches wide, so at least 14 pt on
a 13.3-inch slide, :func:`minitf.figures.draw.slide_pt`); ``l04_alignment`` is narrow enough
(6.7 inches) for its 8 pt."""


@register("l04_alignment", lesson=4, title="What the decoder looks at: cross-attention against the known alignment")
def alignment(seed: int = 0):
    """Cross-attention weights of the lesson's trained model on one held-out source, one
    panel per decoder block (rows) and head (columns): row t is the decoder position that
    predicts target token t, column s the source character s.  Circles mark the known
    alignment (target t reads source n-1-t); each panel's title gives how often the most
    attended source position is that one, over the 200 held-out pairs."""
    from .draw import new_figure

    run = lesson4_run(seed)
    ex = alignment_example(run)
    scores = alignment_scores(run.model, run.task, run.eval_pairs)
    L, H, T, S = ex.weights.shape
    ca, gt, ink = KEY["cross_attention"], KEY["ground_truth"], NEUTRAL["ink"]
    rows = list(ex.target) + ["eos"]  # what position t predicts
    fig = new_figure(3.0 * H + 1.2, 3.0 * L + 1.0)
    left, bottom, w, h, gap_x, gap_y = 0.09, 0.07, 0.80 / H - 0.07, 0.82 / L - 0.09, 0.08, 0.12
    image = None
    for l in range(L):
        for head in range(H):
            x0 = left + head * (w + gap_x)
            y0 = bottom + (L - 1 - l) * (h + gap_y)
            ax = fig.add_axes((x0, y0, w, h))
            image = ax.imshow(ex.weights[l, head], cmap=ca.cmap(), vmin=0.0, vmax=1.0, aspect="auto",
                              interpolation="nearest")
            t = np.arange(len(ex.expected))
            ax.plot(ex.expected, t, linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                    markeredgecolor=gt.color, markeredgewidth=1.6,
                    label="known alignment" if (l, head) == (0, 0) else "_")
            ax.set_xticks(range(S), list(ex.source))
            ax.set_yticks(range(T), rows)
            ax.tick_params(length=0, labelsize=8.5)
            ax.set_title(f"decoder block {l + 1}, head {head + 1}\nargmax = n\u22121\u2212t at "
                         f"{scores.argmax_match[l, head]:.0%} of {scores.positions}",
                         fontsize=9, color=ink)
            if head == 0:
                ax.set_ylabel("target position t (token it predicts)", fontsize=8.5)
            if l == L - 1:
                ax.set_xlabel("source position s", fontsize=8.5)
    cax = fig.add_axes((left + H * w + (H - 1) * gap_x + 0.03, bottom, 0.018, L * h + (L - 1) * gap_y))
    bar = fig.colorbar(image, cax=cax)
    bar.set_label("cross-attention weight", fontsize=8.5)
    bar.ax.tick_params(labelsize=8)
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.985), frameon=False, fontsize=9, ncol=2,
               handles=fig.axes[0].get_legend_handles_labels()[0],
               labels=[f"known alignment (reverse: target t reads source n\u22121\u2212t); "
                       f"source \u201c{ex.source}\u201d \u2192 \u201c{ex.target}\u201d"])
    return fig


@register("l04_shares", lesson=4, title="Where dL/dH_enc comes from: each decoder block's share, per source position")
def shares(seed: int = 0):
    """dL/dH_enc of the lesson's trained model on the four pairs of section 5, one panel per
    pair, one bar per source position s.  The bar's total height is |dL/dH_enc[s]| (the
    norm over D, marked by the dashed line); it is split into each decoder block's share
    projected on that direction, share_l[s] . u[s] with u[s] = dL/dH_enc[s] / |dL/dH_enc[s]|,
    so the parts add up to the total exactly (norms would not: |a + b| < |a| + |b|).  A part
    below zero is a share that points against the total.  Padded positions get no gradient."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .draw import new_figure, slide_axes

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
    fig = new_figure(10.8, 7.0)
    x = np.arange(S)
    for b, (src, tgt) in enumerate(pairs):
        ax = fig.add_axes((0.08 + (b % 2) * 0.48, 0.09 + (1 - b // 2) * 0.43, 0.415, 0.31))
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
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 1.0), frameon=False, fontsize=PT,
               ncol=2, columnspacing=1.5, handlelength=1.8)
    return fig
