"""Figures of Lesson 8, *Training: teacher forcing & the loss*.

Figure 1 (section 2) is computed from minitf itself: the decoder inputs come from
:func:`minitf.data.shift_right` and the mask from :func:`minitf.masks.causal_mask`, so
the picture shows what the code does, not what someone typed.
"""
from __future__ import annotations

import numpy as np

from ..data import SPECIAL_TOKENS, shift_right
from ..masks import causal_mask
from .key import KEY, NEUTRAL
from .registry import register

# A word-level example for the picture (the course's tokenizer is character-level; words
# read better).  Ids: the specials in minitf.data's order, then the words.
_EXAMPLE = ("a", "cat", "sat", "down")


def _vocab(words) -> dict[str, int]:
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}  # <pad> 0, <bos> 1, <eos> 2, <unk> 3
    for w in words:
        vocab.setdefault(w, len(vocab))
    return vocab


# ---- Figure 1 (section 2): the shift by one, position by position --------------------------
@register("l08_shift", lesson=8, title="The shift by one, position by position")
def shift_by_one(seed: int = 0):
    """Labels, the decoder inputs made from them by shift right, and the causal mask.

    Left: the label row y_t, the decoder-input row (labels shifted right, ``<bos>`` in
    front) and an arrow from each input position to the label it is trained to predict.
    Right: the causal mask over the same positions: query t may attend to inputs 0..t.
    ``seed`` is accepted for the registry's signature; nothing here is random.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

    from .draw import new_figure, token_cell

    vocab = _vocab(_EXAMPLE)
    itos = {i: tok for tok, i in vocab.items()}
    labels = np.array([[vocab[w] for w in _EXAMPLE] + [vocab["<eos>"]]])  # (1, T)
    decoder_input_ids = shift_right(labels, start_id=vocab["<bos>"], pad_id=vocab["<pad>"])  # (1, T)
    blocked = causal_mask(labels.shape[1]) < 0  # (T, T), True where query t may not see key s
    label_toks = [itos[int(i)] for i in labels[0]]
    input_toks = [itos[int(i)] for i in decoder_input_ids[0]]
    T = len(label_toks)

    ink = NEUTRAL["ink"]
    gt, dec, masked = KEY["ground_truth"], KEY["decoder"], KEY["masked"]

    fig = new_figure(10.4, 3.9)

    # ---- left: two rows of tokens -------------------------------------------------------------
    ax = fig.add_axes((0.0, 0.14, 0.60, 0.78))
    ax.set_axis_off()
    ax.set_xlim(-2.75, T - 0.4)
    ax.set_ylim(-1.05, 3.05)
    y_lab, y_in = 2.2, 0.0
    fig.text(0.005, 0.985, "Shift right by one", fontsize=11, fontweight="bold", va="top")

    ax.text(-0.62, y_lab + 0.1, "labels  $y_t$", ha="right", va="center", fontsize=10, fontweight="bold")
    ax.text(-0.62, y_lab - 0.2, "what position t must predict", ha="right", va="center", fontsize=8,
            style="italic")
    ax.text(-0.62, y_in + 0.1, "decoder input  $y_{t-1}$", ha="right", va="center", fontsize=10,
            fontweight="bold")
    ax.text(-0.62, y_in - 0.2, "what position t is fed", ha="right", va="center", fontsize=8, style="italic")

    for t in range(T):
        token_cell(ax, t, y_lab, label_toks[t], gt)
        start = input_toks[t] == "<bos>"
        token_cell(ax, t, y_in, input_toks[t], None if start else gt)
        ax.text(t, -0.62, f"t = {t}", ha="center", va="center", fontsize=8.5)
        # the prediction: position t, fed y_{t-1}, is trained to output y_t
        ax.add_patch(FancyArrowPatch((t, y_in + 0.36), (t, y_lab - 0.36), arrowstyle="-|>", mutation_scale=13,
                                     linewidth=1.8, **dec.arrow()))
        # the copy: label t becomes the input of position t + 1
        if t + 1 < T:
            ax.add_line(Line2D([t + 0.2, t + 0.8], [y_lab - 0.36, y_in + 0.36], color=ink, linestyle=":",
                               linewidth=1.0))
    ax.text(0, -0.95, "start token", ha="center", va="center", fontsize=8, style="italic")
    ax.text(T - 1, y_lab + 0.45, "never fed", ha="center", va="bottom", fontsize=8, style="italic")
    ax.text(-0.62, (y_lab + y_in) / 2, "position t predicts", ha="right", va="center", fontsize=9, color=ink)

    # ---- right: the causal mask over the same positions ----------------------------------------
    mx = fig.add_axes((0.68, 0.14, 0.27, 0.70))
    for t in range(T):  # rows: query position t
        for s in range(T):  # columns: key position s
            cell = masked.fill() if blocked[t, s] else dec.fill()
            mx.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, linewidth=1.0, **cell))
    mx.set_xlim(-0.5, T - 0.5)
    mx.set_ylim(T - 0.5, -0.5)
    mx.set_aspect("equal")
    mx.set_xticks(range(T), [f"{s}\n{tok}" for s, tok in enumerate(input_toks)], fontsize=8.5)
    mx.set_yticks(range(T), [f"{tok}  {t}" for t, tok in enumerate(input_toks)], fontsize=8.5)
    mx.xaxis.tick_top()
    mx.tick_params(length=0)
    for side in mx.spines.values():
        side.set_visible(False)
    mx.set_xlabel("key position s (decoder inputs it can see)", fontsize=8.5, labelpad=6)
    mx.set_ylabel("query position t", fontsize=8.5)
    fig.text(0.655, 0.985, "Causal mask: position t sees inputs 0..t", fontsize=11, fontweight="bold", va="top")

    fig.legend(handles=[Patch(label=gt.label, **gt.fill()),
                        Line2D([], [], label="decoder at t is trained to output $y_t$", linewidth=1.8, **dec.arrow()),
                        Line2D([], [], label="label t is fed at t + 1", color=ink, linestyle=":", linewidth=1.0),
                        Patch(label="may attend (decoder self-attention)", **dec.fill()),
                        Patch(label=masked.label, **masked.fill())],
               loc="lower center", ncol=5, bbox_to_anchor=(0.5, 0.0), handlelength=1.6, fontsize=8.5,
               columnspacing=1.4)
    return fig


# ---- Figure 2 (section 4): how a loss at the decoder's head trains the encoder -------------
# Needs a trained model: p̂ − y at the head, each decoder block's cross-attention share of
# dL/dH_enc, and their sum.  To be registered here as "l08_gradient_journey" (lesson=8), drawn
# with KEY["loss"], KEY["gradient"], KEY["decoder"], KEY["cross_attention"], KEY["encoder"].

# ---- Figure 3 (section 5): teacher forcing, and the gap it leaves behind --------------------
# Needs a trained model: teacher-forced vs free-running accuracy over training, and the
# error-compounding curve.  To be registered here as "l08_exposure_gap" (lesson=8), drawn with
# KEY["teacher_forced"], KEY["free_running"], KEY["ground_truth"], KEY["predicted"].
