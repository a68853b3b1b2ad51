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
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson04 import alignment_example, alignment_scores, lesson4_run
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["alignment"]


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
