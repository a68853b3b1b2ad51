"""Figures of Appendix B, *Architecture comparison* (what ``minitf.course.appendix_b`` compares).

===========================  ==================================================================
figure                       what it is drawn from
===========================  ==================================================================
``ab_data_flows``            the four architectures' data flows: what each reads, which stack
                             sees what, where the loss is taken (labels as
                             :func:`~minitf.course.appendix_b.training_views` prints them) and
                             what each keeps while it generates
                             (:func:`~minitf.course.appendix_b.generation_caches`)
===========================  ==================================================================

Registered as a course-wide figure (``lesson=None``): the registry numbers lessons with
integers only, and this figure spans the course's four models.  A diagram: no training,
no timing, nothing random.  This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

from .draw import new_figure
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["data_flows"]

PT = 13
"""Points: the smallest text (the figure is 12 inches wide: at least 14 pt on a 13.3-inch slide)."""
TITLE_PT = 15


def _box(ax, x, y, w, h, meaning, lines, bold_first=True, fontsize=PT):
    """A rounded box centred at (x, y), tinted with ``meaning`` (None: plain), ``lines`` of text."""
    from matplotlib.patches import FancyBboxPatch

    style = {"facecolor": NEUTRAL["paper"], "edgecolor": NEUTRAL["ink"]} if meaning is None else KEY[meaning].fill()
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.15",
                                linewidth=1.2, **style))
    n = len(lines)
    for i, text in enumerate(lines):
        ax.text(x, y + (n - 1) / 2 * 0.55 - i * 0.55, text, ha="center", va="center", fontsize=fontsize,
                color=NEUTRAL["ink"], fontweight="bold" if (i == 0 and bold_first) else "normal")


def _arrow(ax, start, end, meaning=None, text=None, side=0.15):
    from matplotlib.patches import FancyArrowPatch

    style = KEY[meaning].arrow() if meaning else {"color": NEUTRAL["ink"]}
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, linewidth=2.0, **style))
    if text:
        ax.text((start[0] + end[0]) / 2 + side, (start[1] + end[1]) / 2, text, ha="left", va="center",
                fontsize=PT, color=NEUTRAL["ink"])


def _tokens(ax, y, x0, tokens, width=0.9):
    """A row of token cells from x0: ``tokens`` is a list of (text, meaning or None)."""
    from matplotlib.patches import FancyBboxPatch

    for i, (text, meaning) in enumerate(tokens):
        x = x0 + i * width
        style = {"facecolor": NEUTRAL["paper"], "edgecolor": NEUTRAL["ink"]} if meaning is None else \
            KEY[meaning].fill()
        ax.add_patch(FancyBboxPatch((x - width / 2 + 0.04, y - 0.3), width - 0.08, 0.6,
                                    boxstyle="round,pad=0.02", linewidth=1.0, **style))
        ax.text(x, y, text, ha="center", va="center", fontsize=PT, color=NEUTRAL["ink"])
    return x0 + (len(tokens) - 1) * width


def _panel(ax, title):
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    ax.set_title(title, fontsize=TITLE_PT, fontweight="bold", color=NEUTRAL["ink"])


def _footer(ax, text):
    ax.text(5, 0.35, text, ha="center", va="center", fontsize=PT, color=NEUTRAL["ink"], style="italic")


SRC = [("g", None), ("d", None), ("a", None)]
TGT_IN = [("<s>", None), ("a", "ground_truth"), ("d", "ground_truth")]


def _encoder_decoder(ax):
    _panel(ax, "encoder-decoder")
    _tokens(ax, 1.6, 0.6, SRC)
    _tokens(ax, 1.6, 5.7, TGT_IN)
    _box(ax, 1.5, 4.4, 2.6, 1.6, "encoder", ["encoder", "sees all of x"])
    _box(ax, 6.6, 4.4, 2.8, 1.6, "decoder", ["decoder", "causal: y<t"])
    _arrow(ax, (1.5, 2.0), (1.5, 3.55))
    _arrow(ax, (6.6, 2.0), (6.6, 3.55))
    _arrow(ax, (2.85, 4.4), (5.15, 4.4), "cross_attention")
    ax.text(4.0, 4.95, "K, V of H_enc", ha="center", fontsize=PT, color=NEUTRAL["ink"])
    _box(ax, 6.6, 7.6, 4.6, 1.1, "loss", ["loss on y1 .. yT, <eos>"], bold_first=False)
    _arrow(ax, (6.6, 5.25), (6.6, 7.0))
    _footer(ax, "generates: cross K, V once + self K, V grow per token")


def _decoder_only(ax):
    _panel(ax, "decoder-only")
    end = _tokens(ax, 1.6, 0.5, SRC + TGT_IN)
    _box(ax, 2.75, 4.4, 4.8, 1.6, "decoder", ["decoder", "causal over x <s> y"])
    _arrow(ax, (2.75, 2.0), (2.75, 3.55))
    ax.text(end + 0.5, 1.6, "one\nsequence", ha="left", va="center", fontsize=PT, color=NEUTRAL["ink"])
    _box(ax, 7.0, 7.6, 4.6, 1.1, "loss", ["loss on the y part only"], bold_first=False)
    _arrow(ax, (3.6, 5.25), (6.0, 7.0))
    _footer(ax, "generates: prompt's K, V + self K, V grow per token")


def _encoder_only(ax):
    _panel(ax, "encoder-only")
    _tokens(ax, 1.6, 1.2, [("g", None), ("<mask>", "masked"), ("a", None)], width=1.45)
    _box(ax, 2.65, 4.4, 3.6, 1.6, "encoder", ["encoder", "sees both sides"])
    _arrow(ax, (2.65, 2.0), (2.65, 3.55))
    _box(ax, 6.8, 7.6, 4.6, 1.1, "loss", ["loss at the <mask> only"], bold_first=False)
    _arrow(ax, (3.6, 5.25), (5.8, 7.0))
    _footer(ax, "cannot generate: fills blanks in one pass")


def _rnn(ax):
    _panel(ax, "RNN encoder-decoder")
    _tokens(ax, 1.6, 0.6, SRC)
    _tokens(ax, 1.6, 5.7, TGT_IN)
    _box(ax, 1.5, 4.4, 2.6, 1.6, "encoder", ["LSTM", "left to right"])
    _box(ax, 6.6, 4.4, 2.8, 1.6, "decoder", ["LSTM", "one step per y"])
    _arrow(ax, (1.5, 2.0), (1.5, 3.55))
    _arrow(ax, (6.6, 2.0), (6.6, 3.55))
    _arrow(ax, (2.85, 4.4), (5.15, 4.4), "cross_attention")
    ax.text(4.0, 4.95, "attention", ha="center", fontsize=PT, color=NEUTRAL["ink"])
    ax.text(4.0, 3.55, "+ h, c at t=0", ha="center", fontsize=PT, color=NEUTRAL["ink"])
    _box(ax, 6.6, 7.6, 4.6, 1.1, "loss", ["loss on y1 .. yT, <eos>"], bold_first=False)
    _arrow(ax, (6.6, 5.25), (6.6, 7.0))
    _footer(ax, "generates: H_enc once + a fixed h, c (no growth)")


@register("ab_data_flows", lesson=None,
          title="Appendix B: four architectures, what each reads, where its loss is, what it keeps")
def data_flows(seed: int = 0):
    """The four data flows in a 2 x 2 grid.  Token colours as the key: ground-truth tokens
    fed as inputs (teacher forcing), the masked position, plain source tokens; boxes in the
    encoder's and the decoder's colours; the teal arrow is attention over the encoder's
    states; the purple box is where the loss is taken.  ``seed`` is unused (a diagram)."""
    fig = new_figure(12, 8.6)
    axes = fig.subplots(2, 2)
    for ax, draw in zip(axes.flat, (_encoder_decoder, _decoder_only, _encoder_only, _rnn)):
        draw(ax)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.95, bottom=0.02, hspace=0.15, wspace=0.04)
    return fig
