"""Figures of Lesson 3, *The causal mask* (drawn from what ``minitf.course.lesson03`` measures).

* ``l03_mask`` (sections 2-3): the causal mask, the key padding mask and the attention
  weights they leave, on :func:`minitf.course.lesson03.padded_example`'s left-padded
  sequence, computed by minitf's own attention.
* ``l03_before_after`` (section 2): the same causal scores masked two ways -- added before
  the softmax, or a 0/1 factor after it -- with each row's sum, from
  :func:`minitf.course.lesson03.after_softmax_mistake`.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson03 import PAD_ID, after_softmax_mistake, padded_example
from ..data import SPECIAL_TOKENS
from .key import KEY, NEUTRAL
from .registry import register


def _token(i: int) -> str:
    """The figure's names for ids: the specials, then letters (id 4 = "a")."""
    return SPECIAL_TOKENS[i] if i < len(SPECIAL_TOKENS) else chr(ord("a") + i - len(SPECIAL_TOKENS))


def _grid(ax, cells, toks, title):
    """A T x T grid of cells; ``cells[t][s]`` = (fill kwargs, text or None)."""
    from matplotlib.patches import Rectangle

    T = len(toks)
    for t in range(T):
        for s in range(T):
            fill, text = cells[t][s]
            ax.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, linewidth=1.0, **fill))
            if text is not None:
                ax.text(s, t, text, ha="center", va="center", fontsize=8.5, color=NEUTRAL["ink"])
    ax.set(xlim=(-0.5, T - 0.5), ylim=(T - 0.5, -0.5), aspect="equal")  # row 0 (query 0) on top
    ax.set_xticks(range(T), [f"{s}\n{tok}" for s, tok in enumerate(toks)], fontsize=8.5)
    ax.set_yticks(range(T), [f"{tok}  {t}" for t, tok in enumerate(toks)], fontsize=8.5)
    ax.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.spines[:].set_visible(False)
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("key s", fontsize=8.5)
    ax.set_ylabel("query t", fontsize=8.5)
    ax.set_title(title, fontsize=10, fontweight="bold", pad=34)


@register("l03_mask", lesson=3, title="The causal mask, the padding mask, and the weights they leave")
def mask_and_weights(seed: int = 0):
    """Left: the causal mask (T x T).  Middle: the key padding mask of a left-padded sequence.
    Right: the attention weights minitf computes under their sum, blocked cells hatched by
    why they are blocked; the two queries with no key left get all-zero weights.
    ``seed``: the random Q, K, V of :func:`~minitf.course.lesson03.padded_example`."""
    from matplotlib.patches import Patch

    from .draw import new_figure

    ex = padded_example(seed)
    b = 1  # the left-padded sequence
    ids = ex.ids[b]
    toks = [_token(int(i)) for i in ids]
    T = len(toks)
    causal_blocked = ex.causal < 0  # (T, T)
    pad_blocked = np.broadcast_to(ex.padding[b, 0] < 0, (T, T))  # (T, T): key s is padding
    A = ex.A[b, 0]  # (T, T)
    dec, masked, padding = KEY["decoder"], KEY["masked"], KEY["padding"]

    fig = new_figure(11.0, 5.2)
    axes = [fig.add_axes((0.04 + 0.325 * i, 0.14, 0.25, 0.56)) for i in range(3)]

    _grid(axes[0], [[(masked.fill() if causal_blocked[t, s] else dec.fill(), None) for s in range(T)]
                    for t in range(T)], toks, "causal_mask(T)")
    _grid(axes[1], [[(padding.fill() if pad_blocked[t, s] else dec.fill(), None) for s in range(T)]
                    for t in range(T)], toks, "key_padding_mask(ids, pad_id)")

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
    _grid(axes[2], cells, toks, "weights under their sum")
    for t in np.flatnonzero(ex.dead_rows[b]):
        axes[2].text(T - 0.35, t, "no key left:\nweights 0, output 0,\ngradient 0", ha="left", va="center",
                     fontsize=7.5, style="italic")

    fig.text(0.005, 0.985, f"Masks add before the softmax; a query with nothing to attend to gets zeros "
                           f"(sequence {' '.join(toks)}, left-padded)", fontsize=11, fontweight="bold", va="top")
    fig.legend(handles=[Patch(label="may attend (decoder self-attention); tint = weight", **dec.fill()),
                        Patch(label=masked.label + " (key after the query)", **masked.fill()),
                        Patch(label=padding.label + " (key is <pad>)", **padding.fill())],
               loc="lower center", ncol=3, bbox_to_anchor=(0.5, 0.0), handlelength=1.6, fontsize=8.5)
    assert ids[0] == PAD_ID  # the picture's story needs the left padding
    return fig


@register("l03_before_after", lesson=3, title="The causal mask before the softmax, or a 0/1 mask after it")
def before_after(seed: int = 0):
    """The weights of :func:`~minitf.course.lesson03.after_softmax_mistake` (same random
    scores, T = 5): left, ``softmax(scores + causal mask)``; right, ``softmax(scores) * keep``.
    Blocked cells hatched (*masked position*), allowed cells tinted by their weight, each
    row's sum written at its end.  ``seed``: the random Q, K, V."""
    from matplotlib.patches import Patch

    from .draw import new_figure

    m = after_softmax_mistake(seed)
    T = m.right.shape[-1]
    blocked = np.triu(np.ones((T, T), bool), k=1)  # key s after query t
    dec, masked = KEY["decoder"], KEY["masked"]

    fig = new_figure(9.4, 4.9)
    panels = (("(a) softmax(scores + mask)", m.right),
              ("(b) softmax(scores) \u00d7 keep (0/1)", m.wrong))
    for i, (title, A) in enumerate(panels):
        ax = fig.add_axes((0.06 + 0.48 * i, 0.15, 0.33, 0.58))
        cells = [[(masked.fill(), None) if blocked[t, s] else
                  (dec.fill(tint=0.08 + 0.72 * float(A[t, s])), f"{A[t, s]:.2f}") for s in range(T)]
                 for t in range(T)]
        _grid(ax, cells, [""] * T, title)
        ax.set_xticks(range(T), [str(s) for s in range(T)], fontsize=8.5)
        ax.set_yticks(range(T), [str(t) for t in range(T)], fontsize=8.5)
        ax.text(T - 0.3, -0.62, "row sum", ha="left", va="bottom", fontsize=8.5, style="italic")
        for t, total in enumerate(A.sum(axis=-1)):
            ax.text(T - 0.3, t, f"{total:.3f}", ha="left", va="center", fontsize=8.5,
                    fontweight="normal" if np.isclose(total, 1.0) else "bold")

    fig.text(0.005, 0.985, "The same scores, masked before the softmax (rows sum to 1) "
                           "or after it (rows sum to less than 1)", fontsize=11, fontweight="bold", va="top")
    fig.legend(handles=[Patch(label="may attend (decoder self-attention); tint = weight", **dec.fill()),
                        Patch(label=masked.label + " (key after the query): weight 0", **masked.fill())],
               loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.0), handlelength=1.6, fontsize=8.5)
    return fig
