"""Figures of Lesson 3, *The causal mask* (drawn from what ``minitf.course.l03_causal_mask`` measures).

* ``l03_mask`` (sections 2-3): the causal mask, the key padding mask and the attention
  weights they leave, on :func:`minitf.course.l03_causal_mask.padded_example`'s left-padded
  sequence, computed by minitf's own attention.
* ``l03_before_after`` (section 2): the same causal scores masked two ways -- added before
  the softmax, or a 0/1 factor after it -- with each row's sum, from
  :func:`minitf.course.l03_causal_mask.after_softmax_mistake`.
"""
from __future__ import annotations

import numpy as np

from .experiments import PAD_ID, after_softmax_mistake, padded_example
from ...data import SPECIAL_TOKENS
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register


def _token(i: int) -> str:
    """The figure's names for ids: the specials, then letters (id 4 = "a")."""
    return SPECIAL_TOKENS[i] if i < len(SPECIAL_TOKENS) else chr(ord("a") + i - len(SPECIAL_TOKENS))


PT = 12.5
"""Points: the smallest text of this module's figures (at most 11.8 inches wide, so at least
14 pt on a 13.3-inch slide, :func:`minitf.course.kit.figures.draw.slide_pt`)."""
TITLE_PT = 13.5


def _grid(ax, cells, toks, title, y_labels=True):
    """A T x T grid of cells; ``cells[t][s]`` = (fill kwargs, text or None)."""
    from matplotlib.patches import Rectangle

    T = len(toks)
    for t in range(T):
        for s in range(T):
            fill, text = cells[t][s]
            ax.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, linewidth=1.0, **fill))
            if text is not None:
                ax.text(s, t, text, ha="center", va="center", fontsize=PT, color=NEUTRAL["ink"])
    ax.set(xlim=(-0.5, T - 0.5), ylim=(T - 0.5, -0.5), aspect="equal")  # row 0 (query 0) on top
    ax.set_xticks(range(T), [f"{s}\n{tok}" for s, tok in enumerate(toks)], fontsize=PT)
    if y_labels:
        ax.set_yticks(range(T), [f"{tok}  {t}" for t, tok in enumerate(toks)], fontsize=PT)
        ax.set_ylabel("query t", fontsize=PT)
    else:
        ax.set_yticks([])
    ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.spines[:].set_visible(False)
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("key s", fontsize=PT)
    ax.set_title(title, fontsize=TITLE_PT, fontweight="bold", pad=8)


@register("l03_mask", lesson=3, title="The causal mask, the padding mask, and the weights they leave")
def mask_and_weights(seed: int = 0):
    """Left: the causal mask (T x T).  Middle: the key padding mask of a left-padded sequence.
    Right: the attention weights minitf computes under their sum, blocked cells hatched by
    why they are blocked; the two queries with no key left get all-zero weights.
    ``seed``: the random Q, K, V of :func:`~minitf.course.l03_causal_mask.padded_example`."""
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure

    ex = padded_example(seed)
    b = 1  # the left-padded sequence
    ids = ex.ids[b]
    toks = [_token(int(i)) for i in ids]
    T = len(toks)
    causal_blocked = ex.causal < 0  # (T, T)
    pad_blocked = np.broadcast_to(ex.padding[b, 0] < 0, (T, T))  # (T, T): key s is padding
    A = ex.A[b, 0]  # (T, T)
    dec, masked, padding = KEY["decoder"], KEY["masked"], KEY["padding"]

    fig = new_figure(11.3, 6.0)
    axes = [fig.add_axes((0.075 + 0.31 * i, 0.13, 0.29, 0.6)) for i in range(3)]

    _grid(axes[0], [[(masked.fill() if causal_blocked[t, s] else dec.fill(), None) for s in range(T)]
                    for t in range(T)], toks, "causal_mask(T)")
    _grid(axes[1], [[(padding.fill() if pad_blocked[t, s] else dec.fill(), None) for s in range(T)]
                    for t in range(T)], toks, "key_padding_mask", y_labels=False)

    cells = []
    for t in range(T):
        row = []
        for s in range(T):
            if pad_blocked[t, s]:
                row.append((padding.fill(), None))
            elif causal_blocked[t, s]:
                row.append((masked.fill(), None))
            else:
                row.append((dec.fill(tint=0.08 + 0.72 * float(A[t, s])), f"{A[t, s]:.2f}"))  # tint = weight
        cells.append(row)
    _grid(axes[2], cells, toks, "weights under their sum", y_labels=False)
    dead = np.flatnonzero(ex.dead_rows[b])
    if len(dead):  # the queries with no key left, labelled across their rows
        axes[2].text((T - 1) / 2, (dead[0] + dead[-1]) / 2, "no key left:\nall weights 0", ha="center",
                     va="center", fontsize=PT, linespacing=1.3,
                     bbox=dict(boxstyle="round,pad=0.3", facecolor=NEUTRAL["paper"], edgecolor=NEUTRAL["ink"],
                               linewidth=0.8))

    fig.text(0.005, 0.985, "Masks add before the softmax; a query with no key left gets zeros", fontsize=14,
             fontweight="bold", va="top")
    fig.text(0.005, 0.925, f"one left-padded sequence: {' '.join(toks)}", fontsize=PT, va="top")
    fig.legend(handles=[Patch(label="may attend; tint = weight", **dec.fill()),
                        Patch(label=masked.label + " (future key)", **masked.fill()),
                        Patch(label=padding.label + " (key is <pad>)", **padding.fill())],
               loc="lower center", ncol=3, bbox_to_anchor=(0.5, 0.0), handlelength=1.6, fontsize=PT,
               columnspacing=1.5)
    assert ids[0] == PAD_ID  # the picture's story needs the left padding
    return fig


@register("l03_before_after", lesson=3, title="The causal mask before the softmax, or a 0/1 mask after it")
def before_after(seed: int = 0):
    """The weights of :func:`~minitf.course.l03_causal_mask.after_softmax_mistake` (same random
    scores, T = 5): left, ``softmax(scores + causal mask)``; right, ``softmax(scores) * keep``.
    Blocked cells hatched (*masked position*), allowed cells tinted by their weight, each
    row's sum written at its end: on the right every row that blocks a key sums to less than 1,
    and only the last row, which blocks none, to 1.  ``seed``: the random Q, K, V."""
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure

    m = after_softmax_mistake(seed)
    T = m.right.shape[-1]
    blocked = np.triu(np.ones((T, T), bool), k=1)  # key s after query t
    dec, masked = KEY["decoder"], KEY["masked"]

    fig = new_figure(10.2, 5.6)
    panels = (("(a) softmax(scores + mask)", m.right),
              ("(b) softmax(scores) \u00d7 keep", m.wrong))
    for i, (title, A) in enumerate(panels):
        ax = fig.add_axes((0.05 + 0.5 * i, 0.13, 0.33, 0.58))
        cells = [[(masked.fill(), None) if blocked[t, s] else
                  (dec.fill(tint=0.08 + 0.72 * float(A[t, s])), f"{A[t, s]:.2f}") for s in range(T)]
                 for t in range(T)]
        _grid(ax, cells, [""] * T, title)
        ax.set_xticks(range(T), [str(s) for s in range(T)], fontsize=PT)
        ax.set_yticks(range(T), [str(t) for t in range(T)], fontsize=PT)
        ax.text(T - 0.35, -0.62, "row sum", ha="left", va="bottom", fontsize=PT, style="italic")
        for t, total in enumerate(A.sum(axis=-1)):
            ax.text(T - 0.35, t, f"{total:.2f}", ha="left", va="center", fontsize=PT + 1,
                    fontweight="normal" if np.isclose(total, 1.0) else "bold")

    fig.text(0.005, 0.985, "The same scores, masked before the softmax or after it", fontsize=14,
             fontweight="bold", va="top")
    fig.text(0.005, 0.92, "before: every row sums to 1;  after (\u00d7 0/1): a row with a blocked key sums to less than 1",
             fontsize=PT, va="top")
    fig.legend(handles=[Patch(label="may attend; tint = weight", **dec.fill()),
                        Patch(label=masked.label + ": weight 0", **masked.fill())],
               loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.0), handlelength=1.6, fontsize=PT,
               columnspacing=2.0)
    return fig
