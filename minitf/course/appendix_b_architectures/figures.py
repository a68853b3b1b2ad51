"""Figures of Appendix B, *Architecture comparison* (what ``minitf.course.appendix_b_architectures`` compares).

===========================  ==================================================================
figure                       what it is drawn from
===========================  ==================================================================
``ab_data_flows``            the four architectures' data flows: what each reads, which stack
                             sees what, where the loss is taken (labels as
                             :func:`~minitf.course.appendix_b_architectures.training_views` prints them) and
                             what each keeps while it generates
                             (:func:`~minitf.course.appendix_b_architectures.generation_caches`)
===========================  ==================================================================

Registered as a course-wide figure (``lesson=None``): the registry numbers lessons with
integers only, and this figure spans the course's four models.  A diagram: no training,
no timing, nothing random.  This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

from ..kit.figures.draw import box_fill, new_figure, text_box
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["data_flows"]

PT = 14
"""Points: the smallest text.  The figure is drawn 13 inches wide and saved no wider than 13.3:
at least 14 pt on a 13.3-inch slide."""
TITLE_PT = 16

Y_TOK, Y_BOX, Y_LOSS = 2.0, 5.05, 8.75
"""Heights in a panel (0 to 10): the token row, the stacks, the loss box."""
BOX_H, LOSS_H, LINE = 2.3, 1.3, 0.8


def _box(ax, x, y, w, h, meaning, lines, bold_first=True, fontsize=PT):
    """A rounded box centred at (x, y), tinted with ``meaning`` (None: plain), ``lines`` of text."""
    text_box(ax, x, y, w, h, meaning, lines, fontsize=fontsize, line=LINE, bold_first=bold_first)


def _arrow(ax, start, end, meaning=None):
    from matplotlib.patches import FancyArrowPatch

    style = KEY[meaning].arrow() if meaning else {"color": NEUTRAL["ink"]}
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=18, linewidth=2.2, **style))


def _tokens(ax, y, x0, tokens, width=1.05):
    """A row of token cells from x0: ``tokens`` is a list of (text, meaning or None)."""
    from matplotlib.patches import FancyBboxPatch

    for i, (text, meaning) in enumerate(tokens):
        x = x0 + i * width
        ax.add_patch(FancyBboxPatch((x - width / 2 + 0.04, y - 0.55), width - 0.08, 1.1,
                                    boxstyle="round,pad=0.02", linewidth=1.2, **box_fill(meaning)))
        ax.text(x, y, text, ha="center", va="center", fontsize=PT, color=NEUTRAL["ink"])
    return x0 + (len(tokens) - 1) * width


def _panel(ax, title):
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.axis("off")
    ax.set_title(title, fontsize=TITLE_PT, fontweight="bold", color=NEUTRAL["ink"], pad=2)


def _footer(ax, text):
    ax.text(0.1, 0.1, text, ha="left", va="center", fontsize=PT, color=NEUTRAL["ink"], style="italic")


SRC = [("g", None), ("d", None), ("a", None)]
TGT_IN = [("<bos>", None), ("a", "ground_truth"), ("d", "ground_truth")]
UP = (Y_TOK + 0.65, Y_BOX - BOX_H / 2 - 0.1)  # the arrow from a token row up to a stack
TO_LOSS = (Y_BOX + BOX_H / 2 + 0.1, Y_LOSS - LOSS_H / 2 - 0.1)  # from a stack up to the loss


def _two_stacks(ax, enc_lines, dec_lines, over, under=None):
    """The encoder-decoder shape (transformer or RNN): two stacks, attention between them."""
    _tokens(ax, Y_TOK, 0.55, SRC)
    _tokens(ax, Y_TOK, 5.6, TGT_IN)
    _box(ax, 1.5, Y_BOX, 2.7, BOX_H, "encoder", enc_lines)
    _box(ax, 6.6, Y_BOX, 3.0, BOX_H, "decoder", dec_lines)
    _arrow(ax, (1.5, UP[0]), (1.5, UP[1]))
    _arrow(ax, (6.6, UP[0]), (6.6, UP[1]))
    _arrow(ax, (2.9, Y_BOX), (5.05, Y_BOX), "cross_attention")
    ax.text(3.98, Y_BOX + 0.35, over, ha="center", va="bottom", fontsize=PT, color=NEUTRAL["ink"])
    if under:
        ax.text(3.98, Y_BOX - 0.35, under, ha="center", va="top", fontsize=PT, color=NEUTRAL["ink"])
    _box(ax, 6.6, Y_LOSS, 4.9, LOSS_H, "loss", ["loss on y1 .. yT, <eos>"], bold_first=False)
    _arrow(ax, (6.6, TO_LOSS[0]), (6.6, TO_LOSS[1]))


def _encoder_decoder(ax):
    _panel(ax, "encoder-decoder")
    _two_stacks(ax, ["encoder", "sees all of x"], ["decoder", "causal: y<t"], "K, V of H_enc")
    _footer(ax, "generates: cross K, V once; self K, V grow")


def _decoder_only(ax):
    _panel(ax, "decoder-only")
    end = _tokens(ax, Y_TOK, 0.55, SRC + TGT_IN)
    _box(ax, 2.75, Y_BOX, 4.8, BOX_H, "decoder", ["decoder", "causal over x <bos> y"])
    _arrow(ax, (2.75, UP[0]), (2.75, UP[1]))
    ax.text(end + 0.7, Y_TOK, "one\nsequence", ha="left", va="center", fontsize=PT, color=NEUTRAL["ink"])
    _box(ax, 7.3, Y_LOSS, 4.6, LOSS_H, "loss", ["loss on the y part only"], bold_first=False)
    _arrow(ax, (4.0, TO_LOSS[0]), (6.3, TO_LOSS[1]))
    _footer(ax, "generates: K, V of x once; then grow per token")


def _encoder_only(ax):
    _panel(ax, "encoder-only")
    _tokens(ax, Y_TOK, 1.0, [("g", None), ("<mask>", "masked"), ("a", None)], width=1.65)
    _box(ax, 2.65, Y_BOX, 3.6, BOX_H, "encoder", ["encoder", "sees both sides"])
    _arrow(ax, (2.65, UP[0]), (2.65, UP[1]))
    # two lines: the loss scores every chosen position, the ones BERT's rule replaces by a random
    # token or keeps as they were included (Appendix B, section 5's ceiling rests on it)
    _box(ax, 7.1, Y_LOSS, 4.6, LOSS_H + 0.6, "loss", ["loss at the chosen 15 % only:", "<mask>, random or kept"],
         bold_first=False)
    _arrow(ax, (3.8, TO_LOSS[0]), (6.1, TO_LOSS[1] - 0.3))
    _footer(ax, "cannot generate: fills blanks in one pass")


def _rnn(ax):
    _panel(ax, "RNN encoder-decoder")
    _two_stacks(ax, ["LSTM", "left to right"], ["LSTM", "one step per y"], "attention", "+ h, c at t=0")
    _footer(ax, "generates: H_enc once; h, c overwritten per step")


@register("ab_data_flows", lesson=None,
          title="Appendix B: four architectures, what each reads, where its loss is, what it keeps")
def data_flows(seed: int = 0):
    """The four data flows in a 2 x 2 grid, every colour a meaning of the key: ground-truth
    tokens fed as inputs (teacher forcing), the masked position, plain source tokens; boxes
    filled with light tints of the encoder's and the decoder's colours; the arrow in the
    cross-attention colour is attention over the encoder's states; the box tinted with the
    key's loss colour is where the loss is taken.  ``seed`` is unused (a diagram)."""
    fig = new_figure(13.0, 7.2)
    axes = fig.subplots(2, 2)
    for ax, draw in zip(axes.flat, (_encoder_decoder, _decoder_only, _encoder_only, _rnn)):
        draw(ax)
    fig.subplots_adjust(left=0.005, right=0.995, top=0.95, bottom=0.0, hspace=0.2, wspace=0.04)
    _key(axes[1, 0])
    return fig


def _key(ax):
    """What each colour of the four panels means, in the empty corner of the encoder-only panel
    (right of its tokens, below its loss box)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    boxes = [Patch(label=KEY[name].label, linewidth=1.4, **box_fill(name)) for name in ("encoder", "decoder", "loss")]
    tokens = [Patch(label=f"{KEY['ground_truth'].label} of y", linewidth=1.2, **box_fill("ground_truth")),
              Patch(label=KEY["masked"].label, linewidth=1.2, **box_fill("masked"))]
    arrow = [Line2D([], [], linewidth=2.2, label=KEY["cross_attention"].label, **KEY["cross_attention"].line(marker=None))]
    ax.legend(handles=boxes + arrow + tokens, loc="lower right", bbox_to_anchor=(1.0, 0.08), ncol=1,
              fontsize=PT, frameon=False, handlelength=1.5, handletextpad=0.5, borderaxespad=0.0,
              labelspacing=0.3)
