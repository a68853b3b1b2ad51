"""Figures of Lesson 5, *The block* (drawn from what ``minitf.course.l05_block`` measures).

===========================  ==================================================================
figure                       what it is drawn from
===========================  ==================================================================
``l05_block``                the two arrangements of :mod:`minitf.blocks`
                             (``sublayer_forward`` / ``sublayer_backward``), pre-LN and post-LN,
                             with the residual path and the way the gradient travels down it
                             (a diagram: nothing is measured)
``l05_depth``                the gradient at every block's input of a stack of 24 blocks at
                             initialisation, with and without the residual, with and without
                             LayerNorm (:func:`~minitf.course.l05_block.depth_profiles`)
``l05_prepost``              each block's gradient norm at initialisation, pre-LN vs post-LN
                             (:func:`~minitf.course.l05_block.init_gradient_norms`), and both
                             trained with and without warm-up
                             (:func:`~minitf.course.l05_block.warmup_runs`, stored by
                             :mod:`~minitf.course.l05_block.warmup_curves`)
``l05_positions``            the sinusoidal table, the dot products of its rows, and the
                             accuracy by target position of the two position runs
                             (:func:`~minitf.course.l05_block.position_runs`) on strings longer
                             than any in training, stored by
                             :mod:`~minitf.course.l05_block.short_runs`
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from .experiments import (ARRANGEMENTS, DEPTH, HIGH_LR, STACKS, TEST_MAX_LEN, TRAIN_MAX_LEN, WARMUP,
                          depth_profiles, init_gradient_norms, unigram_loss)
from .short_runs import stored_position_accuracy
from .warmup_curves import stored_curves
from ...layers.positional import sinusoidal_table
from ..kit.figures.draw import box_fill
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["block_diagram", "depth", "pre_post", "positions"]

W_SLIDE = 13.0
"""Inches: the width every figure here is drawn at, a little under a 13.3-inch slide."""
PT = 14
"""Points: the smallest text of every figure here.  None is saved wider than 13.3 inches, so
each text is at least 14 pt on a 13.3-inch slide (:func:`minitf.course.kit.figures.draw.slide_pt`)."""


# ---- the block, two ways -----------------------------------------------------------------------
def _box(ax, x, y, w, h, text, meaning=None, fontsize=PT, zorder=3):
    """A rounded box centred at (x, y): the tint of ``meaning``, or paper with an ink edge."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.1",
                                linewidth=1.4, zorder=zorder, **box_fill(meaning)))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=zorder + 1)


def _plus(ax, x, y, r=0.2):
    from matplotlib.patches import Circle

    ax.add_patch(Circle((x, y), r, facecolor=NEUTRAL["paper"], edgecolor=NEUTRAL["ink"], linewidth=1.4, zorder=3))
    ax.text(x, y, "+", ha="center", va="center", fontsize=PT + 4, zorder=4)


def _arrow(ax, points, gradient=False, width=1.6):
    """A polyline through ``points`` ending in an arrow head: ink (the forward data flow), or
    the key's gradient style."""
    from matplotlib.patches import FancyArrowPatch

    xs, ys = zip(*points)
    style = KEY["gradient"].arrow() if gradient else {"color": NEUTRAL["ink"]}
    if len(points) > 2:
        ax.plot(xs[:-1], ys[:-1], linewidth=width, solid_capstyle="butt", color=style["color"],
                linestyle=style.get("linestyle", "-"))
    ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=16, linewidth=width,
                                 shrinkA=0, shrinkB=0, **style))


BLOCK_TITLE = "The block two ways, pre-LN and post-LN: the residual path, and where the LayerNorm sits"


@register("l05_block", lesson=5, title=BLOCK_TITLE)
def block_diagram(seed: int = 0):
    """An encoder block in each arrangement of :mod:`minitf.blocks`, drawn left to right:
    the residual stream (the thick horizontal line from x to y), the two sub-layers
    branching off it, the LayerNorms, the additions.  The dashed arrow under the stream:
    where dL/dy goes on the way back down.  Pre-LN leaves the stream itself un-normalised,
    so dy reaches x through additions only; post-LN puts a LayerNorm on the stream after
    every addition, so the gradient passes a LayerNorm's backward at every sub-layer.
    ``seed`` is accepted for the registry's signature; nothing here is random."""
    from ..kit.figures.draw import new_figure

    enc, ink = KEY["encoder"], NEUTRAL["ink"]
    fig = new_figure(W_SLIDE, 6.9)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, W_SLIDE)  # one unit = one inch
    ax.set_ylim(0, 6.9)
    ax.text(0.05, 6.85, BLOCK_TITLE, fontsize=PT + 2, fontweight="bold", va="top")
    x_start, x_end, bh, r = 0.55, W_SLIDE - 0.55, 0.6, 0.2  # stream ends, box height, radius of a +
    panels = [
        ("pre-LN  (norm_first=True, minitf's default)", True, 6.4,
         "forward:  y = x + f(LayerNorm(x))      backward:  dx = dy + LayerNorm\u2032(f\u2032(dy))",
         "the gradient (dashed) reaches x through additions only"),
        ("post-LN  (norm_first=False, Vaswani et al. 2017)", False, 3.25,
         "forward:  y = LayerNorm(x + f(x))      backward:  dz = LayerNorm\u2032(dy);  dx = dz + f\u2032(dz)",
         "the gradient (dashed) passes a LayerNorm backward at every sub-layer"),
    ]
    for title, pre, y0, formulas, note in panels:
        y_b, y_s, y_g = y0 - 1.25, y0 - 2.05, y0 - 2.4  # branch, stream, gradient heights
        ax.text(0.05, y0, title, fontsize=PT + 1, fontweight="bold", va="top")
        ax.text(0.05, y0 - 0.4, formulas, fontsize=PT, va="top", family="monospace")
        ax.text(x_start - 0.12, y_s, "x", ha="right", va="center", fontsize=PT + 4, fontweight="bold")
        ax.text(x_end + 0.12, y_s, "y", ha="left", va="center", fontsize=PT + 4, fontweight="bold")
        x = x_start + 0.35
        stream = [x_start]  # where the stream line starts and stops (it stops at a + and a LayerNorm)
        norms = []  # (left, right) of the LayerNorms on the stream
        for name in ("self-attention", "feed-forward"):
            split = x
            if pre:
                x_ln, x_f, x_add = split + 1.05, split + 3.1, split + 4.55
                _box(ax, x_ln, y_b, 1.5, bh, "LayerNorm")
                _box(ax, x_f, y_b, 2.0, bh, name, enc)
                _arrow(ax, [(split, y_s), (split, y_b), (x_ln - 0.75, y_b)])
                _arrow(ax, [(x_ln + 0.75, y_b), (x_f - 1.0, y_b)])
                _arrow(ax, [(x_f + 1.0, y_b), (x_add, y_b), (x_add, y_s + r)])
                _plus(ax, x_add, y_s)
                stream += [x_add - r, x_add + r]
                x = x_add + 0.6
            else:
                x_f, x_add, x_ln = split + 1.3, split + 2.75, split + 3.85
                _box(ax, x_f, y_b, 2.0, bh, name, enc)
                _arrow(ax, [(split, y_s), (split, y_b), (x_f - 1.0, y_b)])
                _arrow(ax, [(x_f + 1.0, y_b), (x_add, y_b), (x_add, y_s + r)])
                _plus(ax, x_add, y_s)
                # the LayerNorm sits on the stream: both the stream and the gradient pass through it
                _box(ax, x_ln, (y_s + y_g) / 2, 1.5, y_s - y_g + 0.4, "LayerNorm")
                stream += [x_add - r, x_add + r, x_ln - 0.75, x_ln + 0.75]
                norms.append((x_ln - 0.75, x_ln + 0.75))
                x = x_ln + 0.75 + 0.45
        stream.append(x_end)
        for a, b in zip(stream[0::2], stream[1::2]):
            ax.plot([a, b], [y_s, y_s], color=ink, linewidth=3.0, solid_capstyle="butt", zorder=2)
        # the gradient on its way back, under the stream: uninterrupted in pre-LN, through each
        # LayerNorm in post-LN
        stops = [x_end - 0.1]
        for lo, hi in reversed(norms):
            stops += [hi, lo]
        stops.append(x_start + 0.1)
        for a, b in zip(stops[0::2], stops[1::2]):
            _arrow(ax, [(a, y_g), (b, y_g)], gradient=True, width=2.0)
        ax.text(W_SLIDE / 2, y_g - 0.43, note, ha="center", va="center", fontsize=PT, style="italic")
    return fig


# ---- section 1: the gradient by depth ---------------------------------------------------------------
@register("l05_depth", lesson=5, title="Gradient norm by depth, with and without the residual, at initialisation")
def depth(seed: int = 0):
    """|dL/dx_l| at the input of every block l of a stack of 24 encoder blocks at
    initialisation (log scale; l = 24 is the top, where the random upstream gradient G
    enters), and cos(dL/dx_l, G).  Left: the sub-layers alone, y = x + f(x) against
    y = f(x).  Middle: with LayerNorm, y = x + f(LayerNorm(x)) (minitf's pre-LN block)
    against y = f(LayerNorm(x)).  Right: how much of G's direction is left at block l.
    Every line is a gradient, in the key's dashes; filled plus: with the residual, hollow
    cross: without (markers the key gives no meaning).  Same weights, input and G in all four
    stacks (``seed``)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from ..kit.figures.draw import new_figure, slide_axes

    profiles = depth_profiles(seed)
    grad, ink = KEY["gradient"], NEUTRAL["ink"]
    l = np.arange(DEPTH + 1)
    fig = new_figure(W_SLIDE, 6.0)
    fig.text(0.005, 0.99, f"A stack of {DEPTH} blocks at initialisation: the gradient at each block's input",
             fontsize=PT + 2, fontweight="bold", va="top")

    def style(residual):
        return grad.line(marker="P" if residual else "X", markersize=7,
                         markevery=4, linewidth=2.4, alpha=1.0 if residual else 0.6,
                         markerfacecolor=grad.color if residual else NEUTRAL["paper"])

    names = list(STACKS)
    panels = ((0, "(a) sub-layers alone", names[:2]), (1, "(b) with LayerNorm", names[2:]))
    axes = []
    for k, title, pair in panels:
        ax = fig.add_axes((0.085 + 0.325 * k, 0.24, 0.23, 0.6))
        for name in pair:
            p = profiles[name]
            ax.semilogy(l, p.grad_norm, **style(p.residual))
        ax.set_title(title, fontsize=PT + 1)
        axes.append(ax)
    # log ticks as plain text (1e-15): mathtext's superscripts are drawn at 0.7 of the size
    axes[0].yaxis.set_major_locator(FixedLocator([1e-15, 1e-10, 1e-5, 1e0, 1e5]))
    axes[1].yaxis.set_major_locator(FixedLocator([10, 30, 100, 300]))
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")))
    axes[1].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for ax in axes:
        ax.yaxis.set_minor_formatter(NullFormatter())
    for ax in axes:
        ax.set_ylabel("|dL/dx_l|  (log scale)")
    ax = fig.add_axes((0.745, 0.24, 0.23, 0.6))
    for name in names[2:]:
        p = profiles[name]
        ax.plot(l, p.cosine, **style(p.residual))
    ax.axhline(0.0, color=ink, linewidth=0.8)
    ax.set_ylim(-0.25, 1.05)
    ax.set_yticks([0, 0.5, 1])
    ax.set_title("(c) with LayerNorm: cos(dL/dx_l, G)", fontsize=PT + 1, loc="right")
    axes.append(ax)
    for ax in axes:
        ax.set_xticks([0, 8, 16, 24])
        ax.set_xlabel("block l (24 = top)")
        ax.grid(True, which="major")
        slide_axes(ax, PT)
    fig.legend(handles=[Line2D([], [], label="with the residual:  y = x + f(\u2026)", **style(True)),
                        Line2D([], [], label="without:  y = f(\u2026)", **style(False))],
               loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=PT, handlelength=3.0,
               columnspacing=3.0)
    return fig


# ---- section 3: pre-LN and post-LN -------------------------------------------------------------------
def _running_mean(x, n: int = 10) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    c = np.cumsum(np.insert(x, 0, 0.0))
    out = np.empty_like(x)
    for i in range(len(x)):
        lo = max(0, i + 1 - n)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out


@register("l05_prepost", lesson=5, title="Pre-LN and post-LN: gradients at initialisation, training with and "
                                         "without warm-up")
def pre_post(seed: int = 0):
    """Top: the norm of each block's parameter gradient at initialisation, one teacher-forced
    batch, pre-LN (left) and post-LN (right), same initial weights and batch: on the left of
    each panel the lesson's model, two encoder and two decoder blocks, the one trained below;
    on the right the same configuration with six blocks a side, where post-LN's tilt toward
    the top decoder block is much larger.  Bottom: the training loss (running mean over 10
    steps) of the lesson's two-block model in each arrangement, with 30 warm-up steps and with
    none, peak learning rate 1.5e-2, as stored (:mod:`~minitf.course.l05_block.warmup_curves`:
    the post-LN run without warm-up differs between CPU kernels); the dotted line is the loss of predicting letter
    frequencies (:func:`~minitf.course.l05_block.unigram_loss`)."""
    from ..kit.figures.draw import new_figure, slide_axes

    enc, dec, loss, ink, rule = KEY["encoder"], KEY["decoder"], KEY["loss"], NEUTRAL["ink"], NEUTRAL["rule"]
    depths = (2, 6)  # the trained model's blocks a side, and a deeper one
    inits = {(L, name): init_gradient_norms(nf, seed, n_layers=L) for L in depths for name, nf in ARRANGEMENTS.items()}
    curves = stored_curves(seed)  # the warm-up runs' loss curves, stored: one of them moves between CPU kernels
    floor = unigram_loss()
    top = 1.3 * max(max(g.encoder.max(), g.decoder.max()) for g in inits.values())
    x_of = {2: np.array([1.0, 2.0]), 6: np.arange(3.6, 9.6)}  # the two models side by side, a gap between
    fig = new_figure(W_SLIDE, 7.1)
    fig.text(0.005, 0.995, "Pre-LN and post-LN: the gradient at initialisation, and what warm-up does",
             fontsize=PT + 2, fontweight="bold", va="top")
    ratio = {key: g.decoder[-1] / g.decoder[0] for key, g in inits.items()}
    fig.text(0.005, 0.935, "decoder's top block / bottom block:  "
             + ";   ".join(f"{name} {ratio[2, name]:.2f} (2 + 2), {ratio[6, name]:.2f} (6 + 6)"
                           for name in ARRANGEMENTS), fontsize=PT, va="top")
    for k, name in enumerate(ARRANGEMENTS):
        ax = fig.add_axes((0.075 + 0.5 * k, 0.575, 0.42, 0.25))
        for L in depths:
            g, x = inits[L, name], x_of[L]
            ax.plot(x, g.encoder, label="encoder" if L == 2 else None, **enc.line(linewidth=2.4, markersize=7))
            ax.plot(x, g.decoder, label="decoder" if L == 2 else None, **dec.line(linewidth=2.4, markersize=7))
        ax.axvline(2.8, color=rule, linewidth=1.5)
        ax.text(x_of[2].mean(), 0.97 * top, "2 + 2\n(trained)", ha="center", va="top", fontsize=PT, linespacing=1.1)
        ax.text(x_of[6].mean(), 0.97 * top, "6 + 6", ha="center", va="top", fontsize=PT)
        ax.set_ylim(0, top)
        ax.set_yticks([0, 1, 2])
        ax.set_xlim(0.6, 9.0)
        ax.set_xticks(np.concatenate([x_of[2], x_of[6]]), [str(l) for L in depths for l in range(1, L + 1)])
        ax.set_xlabel("block l (1 = bottom)", labelpad=1)
        ax.set_title(f"{name}: |dL/d\u03b8| per block at initialisation", fontsize=PT + 1)
        ax.grid(True, axis="y")
        if k == 0:
            ax.set_ylabel("gradient norm")
            ax.legend(loc="center right", fontsize=PT, ncol=2, handlelength=1.6, columnspacing=1.2,
                      bbox_to_anchor=(1.0, 0.6), borderaxespad=0.2)
        slide_axes(ax, PT)
    for k, name in enumerate(ARRANGEMENTS):
        ax = fig.add_axes((0.075 + 0.5 * k, 0.085, 0.42, 0.32))
        for warmup in (WARMUP, 0):
            h = curves[name, warmup]
            label = f"warm-up {warmup} steps" if warmup else "no warm-up"
            ax.plot(h["step"], _running_mean(np.asarray(h["loss"])), label=label,
                    **loss.line(alpha=1.0 if warmup else 0.5, linewidth=2.8 if warmup else 2.2))
        ax.axhline(floor, color=ink, linestyle=":", linewidth=1.4)
        ax.text(h["step"][-1], floor + 0.06, "letter frequencies only", ha="right", va="bottom", fontsize=PT)
        ax.set_ylim(0, 4.0)
        ax.set_yticks([0, 1, 2, 3, 4])
        ax.set_xlabel("training step", labelpad=1)
        ax.set_title(f"{name}: training loss, peak learning rate {HIGH_LR:g}", fontsize=PT + 1)
        ax.grid(True)
        if k == 0:
            ax.set_ylabel("loss (10-step mean)")
            ax.legend(loc="lower left", fontsize=PT, ncol=1, handlelength=1.6)
        slide_axes(ax, PT)
    return fig


# ---- section 5: positions ----------------------------------------------------------------------------
@register("l05_positions", lesson=5, title="Positions: the sinusoidal table, and lengths beyond training")
def positions(seed: int = 0):
    """Left: the sinusoidal table P (position t x dimension i, D = 32, 48 positions).
    Middle: P[t] . P[s] for every pair of positions: it depends on t - s only.  Right: the
    teacher-forced accuracy on the letters, by target position, of the two ``copy`` runs
    (trained on 1 to 8 letters, tested on 1 to 16) with sinusoidal and with learned
    positions (:func:`~minitf.course.l05_block.accuracy_by_position`), read from the stored runs
    (:func:`~minitf.course.l05_block.short_runs.stored_position_accuracy`, checked against live
    runs by ``tests/course/l05``); positions from 8 on never held a letter in training."""
    from matplotlib.ticker import MaxNLocator

    from ..kit.figures.draw import new_figure, slide_axes

    enc, tf, ink = KEY["encoder"], KEY["teacher_forced"], NEUTRAL["ink"]
    stored = stored_position_accuracy(seed)  # {kind: PositionAccuracy}
    P = sinusoidal_table(48, 32)  # (max_len, D)
    fig = new_figure(W_SLIDE, 6.0)
    fig.text(0.005, 0.99, "Positions: a fixed table, distances in its dot products, lengths past training",
             fontsize=PT + 2, fontweight="bold", va="top")
    ax = fig.add_axes((0.06, 0.13, 0.19, 0.68))
    im = ax.imshow(P, cmap=enc.cmap(), vmin=-1, vmax=1, aspect="auto")
    ax.set_xlabel("dimension i")
    ax.set_ylabel("position t")
    ax.set_xticks([0, 15, 31])
    ax.set_yticks([0, 15, 30, 45])
    ax.set_title("(a) sinusoidal P[t, i]", fontsize=PT + 1)
    slide_axes(ax, PT)
    bar = fig.colorbar(im, ax=ax, fraction=0.1, pad=0.04, ticks=[-1, 0, 1])
    bar.ax.tick_params(labelsize=PT)
    ax = fig.add_axes((0.345, 0.13, 0.19, 0.68))
    im = ax.imshow(P @ P.T, cmap=enc.cmap(), aspect="auto")
    ax.set_xlabel("position s")
    ax.set_xticks([0, 15, 30, 45])
    ax.set_yticks([0, 15, 30, 45])
    ax.set_title("(b) P[t] \u00b7 P[s]", fontsize=PT + 1)
    ax.text(0.5, -0.17, "a function of t \u2212 s", transform=ax.transAxes, ha="center", va="top",
            fontsize=PT, style="italic")
    slide_axes(ax, PT)
    bar = fig.colorbar(im, ax=ax, fraction=0.1, pad=0.04)
    bar.ax.yaxis.set_major_locator(MaxNLocator(3))
    bar.ax.tick_params(labelsize=PT)
    ax = fig.add_axes((0.66, 0.13, 0.335, 0.68))
    chance = None
    for kind, filled in (("sinusoidal", True), ("learned", False)):
        acc = stored[kind]
        chance = acc.chance
        t = np.arange(len(acc.accuracy))
        ax.plot(t, acc.accuracy, label=kind, **tf.line(
            alpha=1.0 if filled else 0.6, markerfacecolor=tf.color if filled else NEUTRAL["paper"],
            linestyle="-" if filled else "--", linewidth=2.4, markersize=7))
    ax.axvspan(TRAIN_MAX_LEN - 0.5, TEST_MAX_LEN - 0.5, facecolor=NEUTRAL["rule"], edgecolor="none", alpha=0.6)
    ax.text(TRAIN_MAX_LEN - 0.1, 0.62, "no letter here\nin training", ha="left", va="center", fontsize=PT)
    ax.axhline(chance, color=ink, linestyle=":", linewidth=1.4)
    ax.text(TEST_MAX_LEN - 0.6, chance + 0.02, "a random letter", ha="right", va="bottom", fontsize=PT)
    ax.set_xlim(-0.5, TEST_MAX_LEN - 0.5)
    ax.set_ylim(0, 1.1)
    ax.set_xticks([0, 4, 8, 12])
    ax.set_yticks([0, 0.5, 1])
    ax.set_xlabel("target position t")
    ax.set_ylabel("accuracy (teacher-forced)")
    ax.set_title(f"(c) copy: trained on \u2264 {TRAIN_MAX_LEN} letters", fontsize=PT + 1)
    ax.legend(loc="center left", bbox_to_anchor=(0.0, 0.45), fontsize=PT, title="positions", title_fontsize=PT)
    slide_axes(ax, PT)
    return fig
