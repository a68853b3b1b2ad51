"""Figures of Lesson 1, *The sequence-to-sequence problem (the RNN encoder-decoder)*: drawing only.

Every measured figure draws from the lesson's stored sweep
(``minitf/course/l01_seq2seq/results/sweep.json``, :func:`minitf.course.l01_seq2seq.load_results`),
so it is the same on every machine and needs no training;
``OPENBLAS_NUM_THREADS=1 python -m minitf.course.l01_seq2seq --measure`` measures it again.

===========================  ==================================================================
figure                       what it is drawn from
===========================  ==================================================================
``l01_encoder_decoder``      the RNN encoder-decoder, one vector between its halves (a
                             diagram: nothing is measured)
``l01_widths``               free-running accuracy against source length for widths
                             d = 16 .. 128, "init" and "concat" (mean over the seeds)
``l01_reversal``             the gradient reaching each source position at initialisation
                             (:func:`~minitf.course.l01_seq2seq.gradient_profile`), source read
                             forwards and reversed, and both models' training loss
``l01_bottleneck``           accuracy against source length at d = 64: the fixed vector
                             (init, concat, reversed, four times the updates) and attention
                             (additive, dot, general); mean and range over the seeds
``l01_alignment``            the additive attention weights of the trained model on one
                             held-out source, the copy alignment marked
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from .experiments import (ATTENTIONS, LONG_STEPS, REFERENCE_WIDTH, WIDTHS, Variant, load_results,
                          seed_mean, stored_runs)
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["encoder_decoder", "widths", "reversal", "bottleneck", "alignment_heatmap"]

PT = 12
"""Points: the smallest text of every figure here but ``l01_alignment``.  None is saved wider
than 11.2 inches, so each text is at least 14 pt on a 13.3-inch slide
(:func:`minitf.course.kit.figures.draw.slide_pt`)."""
PT_WIDE = 14
"""Points: the smallest text of ``l01_alignment``, which is about 13 inches wide and under 7.48
high (the heat map beside its explanation): 14 pt there is 14 pt on a 16:9 slide."""


def _seeds_note(results) -> str:
    seeds = results["settings"]["seeds"]
    return f"mean over seeds {', '.join(map(str, seeds))}"


def _plain_log_ticks(ax) -> None:
    """Log-axis tick labels as plain text (``1e-06``): mathtext's superscripts are drawn at 0.7
    of the font size, too small on a slide."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


# ---- the diagram ----------------------------------------------------------------------------------
def _cell(ax, x, y, text, meaning, w=0.9, h=0.62, fontsize=PT):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.1",
                                linewidth=1.3, **meaning.fill()))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, style=None, width=1.3, rad=0.0):
    from matplotlib.patches import FancyArrowPatch

    style = {"color": NEUTRAL["ink"]} if style is None else style
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, linewidth=width, shrinkA=2,
                                 shrinkB=2, connectionstyle=f"arc3,rad={rad}", **style))


@register("l01_encoder_decoder", lesson=1,
          title="The RNN encoder-decoder: two networks, one vector of d values between them")
def encoder_decoder(seed: int = 0):
    """The encoder (indigo) reads the source one symbol per step; its final state h_S, d
    values (and the LSTM's cell state c_S, d more), is all the decoder (orange) gets of the
    source: (h_S, c_S) as its initial state ("init", Sutskever et al. 2014), or h_S alone
    joined to its input at every step ("concat"; Cho et al. 2014 do both, and also feed the
    vector to the output layer).  The decoder writes one symbol per step, each fed back as
    the next input, until it writes ``<eos>``: ``12+45 -> 57``, five symbols in, two out.
    ``seed`` is accepted for the registry's signature; nothing here is random."""
    from matplotlib.lines import Line2D

    from ..kit.figures.draw import new_figure, token_cell

    enc, dec, pred = KEY["encoder"], KEY["decoder"], KEY["predicted"]
    fig = new_figure(11.0, 5.6)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(-0.75, 11.6)
    ax.set_ylim(-2.6, 4.25)
    ax.text(-0.7, 4.15, "Two networks for two lengths: 5 symbols in, 2 out (then <eos>)", fontsize=PT + 2,
            fontweight="bold", va="top")
    src = list("12+45")  # the addition task of minitf.data.tasks
    out = ["5", "7", "<eos>"]
    fed = ["<bos>", "5", "7"]
    y_cell, y_in, y_out = 1.3, -0.25, 2.85
    # encoder
    step = 1.2
    for j, ch in enumerate(src):
        x = j * step
        _cell(ax, x, y_cell, "LSTM", enc, w=0.88, fontsize=PT)
        token_cell(ax, x, y_in, ch, None, width=0.8, fontsize=PT + 1)
        _arrow(ax, (x, y_in + 0.3), (x, y_cell - 0.31))
        if j:
            _arrow(ax, (x - step + 0.45, y_cell), (x - 0.45, y_cell))
    ax.text(2 * step, y_cell + 0.62, "encoder: reads the source", ha="center", fontsize=PT)
    ax.text(2 * step, y_in - 0.62, "source  (S = 5)", ha="center", fontsize=PT)
    # the vector: the final cell state c_S above, the final hidden state h_S below (concat reads h_S only)
    vx, vw, vh, dy = 4 * step + 1.55, 1.45, 0.56, 0.33
    y_c, y_h = y_cell + dy, y_cell - dy
    _cell(ax, vx, y_c, "c_S: d values", enc, w=vw, h=vh, fontsize=PT)
    _cell(ax, vx, y_h, "h_S: d values", enc, w=vw, h=vh, fontsize=PT)
    ax.text(vx, y_c + vh / 2 + 0.12, "the same size for any S", ha="center", va="bottom", fontsize=PT,
            style="italic")
    for y in (y_c, y_h):  # the last encoder step hands over both
        _arrow(ax, (4 * step + 0.43, y_cell), (vx - vw / 2 - 0.02, y))
    # decoder
    x0, step = vx + 1.95, 1.3
    for t in range(len(out)):
        x = x0 + t * step
        _cell(ax, x, y_cell, "LSTM", dec, w=0.96)
        token_cell(ax, x, y_in, fed[t], None if t == 0 else pred, width=0.98, fontsize=PT)
        token_cell(ax, x, y_out, out[t], pred, width=0.98, fontsize=PT if out[t] == "<eos>" else PT + 1)
        _arrow(ax, (x, y_in + 0.3), (x, y_cell - 0.31))
        _arrow(ax, (x, y_cell + 0.31), (x, y_out - 0.3))
        if t:
            _arrow(ax, (x - step + 0.45, y_cell), (x - 0.45, y_cell))
        if t + 1 < len(out):  # the symbol written is the next step's input, between the cells
            _arrow(ax, (x + 0.47, y_out - 0.2), (x + step - 0.47, y_in + 0.2), style=pred.arrow(), width=1.4)
        # concat: h_S (not c_S) joins every step's input
        _arrow(ax, (vx + 0.3, y_h - vh / 2), (x - 0.25, y_cell - 0.3), style=enc.arrow(linestyle=":"), width=1.2,
               rad=0.25)
    for y, y_end in ((y_c, y_cell + 0.12), (y_h, y_cell - 0.12)):  # init: both start the first decoder step
        _arrow(ax, (vx + vw / 2 + 0.02, y), (x0 - 0.46, y_end), style=enc.arrow(), width=2.0)
    ax.text((vx + vw / 2 + x0 - 0.46) / 2, y_c + 0.12, "init", ha="center", va="bottom", fontsize=PT,
            fontweight="bold")
    ax.text(x0 + step, y_out + 0.55, "decoder: writes until <eos>", ha="center", fontsize=PT)
    ax.text(x0 + step, y_in - 0.62, "fed back: the symbol just written", ha="center", fontsize=PT)
    handles = [Line2D([], [], linewidth=2.0, **enc.line(marker=None)),
               Line2D([], [], linewidth=1.2, **enc.line(marker=None, linestyle=":")),
               Line2D([], [], linewidth=1.4, **pred.line(marker=None))]
    labels = ["init: the decoder starts from the encoder's final (h_S, c_S)",
              "concat: h_S alone joins the decoder's input at every step",
              "the symbol written becomes the next input (in training: the gold symbol)"]
    ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 0.0), fontsize=PT, ncol=1,
              handlelength=2.6)
    return fig


# ---- section 2: widths -----------------------------------------------------------------------------
WIDTH_LINES = (1.2, 1.9, 2.6, 3.3)
"""Line widths of the widths d of the width sweep, thin to thick as d grows (and light to dark);
no markers, so that none is mistaken for a variant's."""
VARIANT_STYLES = {
    "concat": dict(linestyle="-", marker="x"),
    "reversed": dict(linestyle=":", marker="+"),
    "long": dict(linestyle="-", marker="h"),
    "dot": dict(linestyle="-", marker="*"),
    "general": dict(linestyle="-", marker="X"),
}
"""How this lesson's figures tell variants apart, the same in every figure: a marker per variant
(+ for a source read reversed, wherever it is drawn), and a dotted line for a reversed source and
for nothing else, where the meaning's own line is solid (a gradient keeps the key's '--').  None
of the markers is one the figure key gives a meaning (its s, o, D, ^ and v: each reference line
keeps its colour's own), and the key's '--' and '-.' (gradients, free-running) keep theirs."""


def _width_style(i: int, n: int) -> dict:
    return {"alpha": 0.35 + 0.65 * i / max(1, n - 1), "linewidth": WIDTH_LINES[i], "marker": None}


@register("l01_widths", lesson=1, title="The fixed vector's width: accuracy against source length, init vs concat")
def widths(seed: int = 0):
    """Free-running token accuracy (greedy, on 40 held-out pairs per length) against the
    source length, for each width d of the stored sweep, with the vector as the decoder's
    initial state ("init", left) and joined to its input at every step ("concat", right).
    Lines are means over the seeds, one line width and shade per width (thicker, darker: wider); the thin
    band is their range.  A wider vector is higher at every length, in both panels; it is not
    flatter (from 3 to 12 letters every wider one falls by more than d = 16).  ``seed`` is
    accepted for the registry's signature; the figure draws the stored sweep."""
    from ..kit.figures.draw import new_figure, slide_axes

    results = load_results()
    L = np.array(results["lengths"])
    enc, ink = KEY["encoder"], NEUTRAL["ink"]
    fig = new_figure(10.6, 5.0)
    for k, conditioning in enumerate(("init", "concat")):
        ax = fig.add_axes((0.08 + 0.48 * k, 0.13, 0.41, 0.62))
        for i, d in enumerate(WIDTHS):
            mean, low, high = seed_mean(results, Variant(hidden_size=d, conditioning=conditioning))
            st = _width_style(i, len(WIDTHS))
            ax.fill_between(L, low, high, linewidth=0, **enc.fill(0.08 + 0.1 * i / len(WIDTHS)))
            ax.plot(L, mean, label=f"d = {d}", **enc.line(**st))
        ax.set_ylim(0, 1.02)
        ax.set_xticks(L[::3])
        ax.grid(True, axis="y")
        ax.set_xlabel("source length n")
        if k == 0:
            ax.set_ylabel("free-running token accuracy")
        ax.set_title("init: (h, c) starts the decoder" if conditioning == "init"
                     else "concat: h joins every input", fontsize=PT + 1)
        ax.legend(loc="upper right", fontsize=PT, handlelength=2.4, borderaxespad=0.1)
        slide_axes(ax, PT)
    fig.text(0.08, 0.98, "The fixed vector: accuracy falls with length at every width; wider is higher throughout",
             fontsize=PT + 2, fontweight="bold", va="top", color=ink)
    fig.text(0.08, 0.9, f"copy, LSTM, {results['settings']['train']['steps']} updates; {_seeds_note(results)}, "
             "band: their range", fontsize=PT, va="top", color=ink)
    return fig


# ---- section 3: reversal ---------------------------------------------------------------------------
@register("l01_reversal", lesson=1,
          title="Reversing the source: the gradient reaching each source position, and learning speed")
def reversal(seed: int = 0):
    """Left and middle: BPTT in the untrained reference model (d = 64; the same weights read
    the source forwards and reversed), mean over 64 sources of 12 letters of |dL/dx_j|, the
    gradient reaching the embedding of source position j: from the whole loss (left) and from
    the loss of target position j alone, the one that copies x_j (middle); log scale.
    Right: the training loss (mean over each 25 updates) of the trained models, each seed a
    thin line, their mean thick.  ``seed`` is accepted for the registry's signature; the
    figure draws the stored sweep."""
    from ..kit.figures.draw import new_figure, slide_axes

    results = load_results()
    fwd_name, rev_name = Variant().name, Variant(reverse_source=True).name
    grads = results["gradients"]
    grad, loss, ink = KEY["gradient"], KEY["loss"], NEUTRAL["ink"]
    # the two reading orders (VARIANT_STYLES, as in the bottleneck figure): reversed is marked +; the
    # gradients keep the key's '--' both ways, the loss is solid read forwards and dotted reversed
    styles = {fwd_name: dict(alpha=1.0), rev_name: dict(marker=VARIANT_STYLES["reversed"]["marker"], alpha=0.7)}
    loss_styles = {fwd_name: dict(alpha=1.0), rev_name: dict(**VARIANT_STYLES["reversed"], alpha=0.7)}
    labels = {fwd_name: "read forwards", rev_name: "read reversed"}
    fig = new_figure(11.2, 5.0)
    S = len(grads[fwd_name]["init"]["total"])
    j = np.arange(1, S + 1)
    for k, (field, title) in enumerate((("total", "from the whole loss"), ("own", "from target j's loss"))):
        ax = fig.add_axes((0.09 + 0.33 * k, 0.13, 0.24, 0.6))
        for name in (fwd_name, rev_name):
            ax.plot(j, grads[name]["init"][field], label=labels[name], markersize=7, **grad.line(**styles[name]))
        ax.set_yscale("log")
        _plain_log_ticks(ax)
        ax.set_xticks([1, 4, 8, 12])
        ax.set_xlabel("source position j")
        ax.grid(True, axis="y", which="major")
        ax.set_title(title, fontsize=PT + 1)
        if k == 0:
            ax.set_ylabel("|dL/dx_j|, untrained")
        slide_axes(ax, PT)
    ax = fig.add_axes((0.755, 0.13, 0.235, 0.6))
    window = results["settings"]["curve_window"]
    for name in (fwd_name, rev_name):
        curves = np.array([r["loss_curve"] for r in stored_runs(results, name).values()])  # (seeds, windows)
        x = window * (np.arange(curves.shape[1]) + 0.5)
        for c in curves:
            ax.plot(x, c, linewidth=0.9, **loss.line(**{**loss_styles[name], "alpha": 0.35, "marker": None}))
        ax.plot(x, curves.mean(0), linewidth=2.2, label=labels[name], **loss.line(**loss_styles[name]))
    ax.set_xlabel("update")
    ax.set_ylabel("training loss")
    ax.set_ylim(0, None)
    ax.set_xticks([0, 100, 200, 300])
    ax.grid(True, axis="y")
    ax.set_title(f"trained, seeds {', '.join(map(str, results['settings']['seeds']))}", fontsize=PT + 1)
    ax.legend(loc="upper right", fontsize=PT, handlelength=2.2)
    slide_axes(ax, PT)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(0.09, 0.905),
               fontsize=PT, ncol=2, handlelength=2.4, frameon=False)
    fig.text(0.09, 0.985, "Reversing the source: the first targets end up close to their symbols",
             fontsize=PT + 2, fontweight="bold", va="top", color=ink)
    return fig


# ---- section 6: the bottleneck ---------------------------------------------------------------------
@register("l01_bottleneck", lesson=1, title="The bottleneck: fixed vector against attention, by source length")
def bottleneck(seed: int = 0):
    """Free-running token accuracy (left) and exact match (right) against the source length,
    d = 64: the fixed vector as initial state (init), joined to every input (concat), with
    the source reversed, and with four times the updates; and attention over every encoder
    state (additive, dot, general).  Lines are means over the seeds, bands their range.
    ``seed`` is accepted for the registry's signature; the figure draws the stored sweep."""
    from ..kit.figures.draw import new_figure, slide_axes

    results = load_results()
    L = np.array(results["lengths"])
    enc, ca, ink = KEY["encoder"], KEY["cross_attention"], NEUTRAL["ink"]
    d = REFERENCE_WIDTH
    # each colour's reference line with the key's own marker (the encoder's s, cross-attention's D),
    # the other variants in this lesson's VARIANT_STYLES (dotted: read reversed, as in l01_reversal)
    lines = [
        (Variant(), "fixed vector, init", enc, dict(linestyle="-", marker="s", alpha=1.0)),
        (Variant(conditioning="concat"), "fixed vector, concat", enc, dict(**VARIANT_STYLES["concat"], alpha=0.8)),
        (Variant(reverse_source=True), "fixed vector, init, reversed", enc,
         dict(**VARIANT_STYLES["reversed"], alpha=0.65)),
        (Variant(steps=LONG_STEPS), f"fixed vector, init, {LONG_STEPS} updates", enc,
         dict(**VARIANT_STYLES["long"], alpha=0.5)),
        *((Variant(attention=a), f"attention, {a}", ca, dict(marker="D", alpha=1.0) if a == ATTENTIONS[0]
           else dict(**VARIANT_STYLES[a], alpha=al)) for a, al in zip(ATTENTIONS, (1.0, 0.8, 0.6))),
    ]
    fig = new_figure(10.8, 6.3)
    for k, (field, ylabel) in enumerate((("free_running_token", "free-running token accuracy"),
                                         ("free_running_exact", "free-running exact match"))):
        ax = fig.add_axes((0.085 + 0.49 * k, 0.29, 0.40, 0.5))
        for variant, label, meaning, st in lines:
            mean, low, high = seed_mean(results, variant, field)
            ax.fill_between(L, low, high, linewidth=0, **meaning.fill(0.1))
            ax.plot(L, mean, label=label, markersize=7, **meaning.line(**st))
        ax.set_ylim(0, 1.03)
        ax.set_xticks(L[::3])
        ax.grid(True, axis="y")
        ax.set_xlabel("source length n")
        ax.set_ylabel(ylabel)
        slide_axes(ax, PT)
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="lower left", bbox_to_anchor=(0.06, 0.0),
               fontsize=PT, ncol=2, handlelength=2.6, frameon=False)
    fig.text(0.085, 0.985, "Removing the middle: attention holds up as the source grows",
             fontsize=PT + 2, fontweight="bold", va="top", color=ink)
    fig.text(0.085, 0.925, f"copy, LSTM, d = {d}, {results['settings']['train']['steps']} updates unless marked; "
             f"40 held-out pairs per length;\n{_seeds_note(results)}, band: their range", fontsize=PT, va="top",
             color=ink)
    return fig


# ---- section 6: the alignment ------------------------------------------------------------------------
@register("l01_alignment", lesson=1, title="What the decoder attends to: additive attention of a trained model")
def alignment_heatmap(seed: int = 0):
    """The additive attention weights of the trained d = 64 model (seed 0 of the sweep) on the
    first held-out source of 12 letters, teacher-forced: row t is the decoder step that
    predicts target symbol t, column j the source symbol j.  Circles mark the copy
    alignment (target t is source t); the text beside the map gives how often the largest
    weight falls there over all 400 held-out pairs.  ``seed`` is accepted for the registry's signature;
    the figure draws the stored sweep."""
    from ..kit.figures.draw import new_figure

    results = load_results()
    al = results["alignment"]
    W = np.array(al["weights"])  # (n + 1, n)
    src = al["source"]
    n = len(src)
    ca, gt, ink = KEY["cross_attention"], KEY["ground_truth"], NEUTRAL["ink"]
    # inches: the heat map on the left, what it shows on the right, so that the figure is as wide
    # as a 16:9 slide and its 14 pt text stays 14 pt there
    cell = 0.4
    left, bottom, hw, hh = 1.45, 0.75, cell * n, cell * (n + 1)
    fig_w, fig_h = 12.9, bottom + hh + 0.75
    fig = new_figure(fig_w, fig_h)
    ax = fig.add_axes((left / fig_w, bottom / fig_h, hw / fig_w, hh / fig_h))
    image = ax.imshow(W, cmap=ca.cmap(), vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.plot(np.arange(n), np.arange(n), linestyle="none", marker="o", markersize=16, markerfacecolor="none",
            markeredgecolor=gt.color, markeredgewidth=2.0, label="copy alignment:\ntarget t is source t")
    ax.set_xticks(range(n), list(src))
    ax.set_yticks(range(n + 1), list(src) + ["<eos>"])
    ax.tick_params(length=0, labelsize=PT_WIDE)
    ax.set_xlabel("source symbol j (the encoder state h_j)", fontsize=PT_WIDE)
    ax.set_ylabel("decoder step t\n(the symbol it predicts)", fontsize=PT_WIDE)
    cax = fig.add_axes(((left + hw + 0.2) / fig_w, bottom / fig_h, 0.18 / fig_w, hh / fig_h))
    bar = fig.colorbar(image, cax=cax)
    bar.set_label("attention weight", fontsize=PT_WIDE)
    bar.set_ticks([0.0, 0.25, 0.5, 0.75, 1.0])
    bar.ax.tick_params(labelsize=PT_WIDE)
    fig.text(0.05 / fig_w, 1.0 - 0.05 / fig_h, "Additive attention of the trained model (d = 64)",
             fontsize=PT_WIDE + 2, fontweight="bold", va="top", color=ink)
    x_text = (left + hw + 1.55) / fig_w  # right of the colour bar and its label
    ax.legend(loc="upper left", bbox_to_anchor=(x_text, (bottom + hh) / fig_h), bbox_transform=fig.transFigure,
              fontsize=PT_WIDE, frameon=False, borderaxespad=0.0, handletextpad=0.5)
    fig.text(x_text, (bottom + hh - 1.1) / fig_h,
             f"the largest weight is on source t\nat {al['argmax_match']:.1%} of {al['positions']} target positions\n"
             f"(400 held-out pairs);\nmean weight there {al['weight_on_source_t']:.2f}\n\n"
             f"the heat map: the first held-out\nsource of {n} letters, teacher-forced;\n"
             f"seed {al['seed']} of the sweep",
             fontsize=PT_WIDE, va="top", color=ink, linespacing=1.35)
    return fig
