"""Figures of Lesson 5, *The block* (drawn from what ``minitf.course.lesson05`` measures).

===========================  ==================================================================
figure                       what it is drawn from
===========================  ==================================================================
``l05_block``                the two arrangements of :mod:`minitf.blocks`
                             (``sublayer_forward`` / ``sublayer_backward``), pre-LN and post-LN,
                             with the residual path and the way the gradient travels down it
                             (a diagram: nothing is measured)
``l05_depth``                the gradient at every block's input of a stack of 24 blocks at
                             initialisation, with and without the residual, with and without
                             LayerNorm (:func:`~minitf.course.lesson05.depth_profiles`)
``l05_prepost``              each block's gradient norm at initialisation, pre-LN vs post-LN
                             (:func:`~minitf.course.lesson05.init_gradient_norms`), and both
                             trained with and without warm-up
                             (:func:`~minitf.course.lesson05.warmup_runs`)
``l05_positions``            the sinusoidal table, the dot products of its rows, and the
                             accuracy by target position of the two position runs
                             (:func:`~minitf.course.lesson05.position_runs`) on strings longer
                             than any in training
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson05 import (ARRANGEMENTS, DEPTH, HIGH_LR, STACKS, TEST_MAX_LEN, TRAIN_MAX_LEN, WARMUP,
                               accuracy_by_position, depth_profiles, init_gradient_norms, position_runs,
                               unigram_loss, warmup_runs)
from ..layers.positional import sinusoidal_table
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["block_diagram", "depth", "pre_post", "positions"]


# ---- the block, two ways -----------------------------------------------------------------------
def _box(ax, x, y, w, h, text, meaning=None, fontsize=9.5):
    """A rounded box centred at (x, y): the tint of ``meaning``, or paper with an ink edge."""
    from matplotlib.patches import FancyBboxPatch

    style = meaning.fill() if meaning is not None else {"facecolor": NEUTRAL["paper"], "edgecolor": NEUTRAL["ink"]}
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                linewidth=1.2, **style))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _plus(ax, x, y, r=0.26):
    from matplotlib.patches import Circle

    ax.add_patch(Circle((x, y), r, facecolor=NEUTRAL["paper"], edgecolor=NEUTRAL["ink"], linewidth=1.2, zorder=3))
    ax.text(x, y, "+", ha="center", va="center", fontsize=13, zorder=4)


def _arrow(ax, points, color=None, gradient=False, width=1.3):
    """A polyline through ``points`` ending in an arrow head: ink (the forward data flow), or
    the key's gradient style."""
    from matplotlib.patches import FancyArrowPatch

    xs, ys = zip(*points)
    style = KEY["gradient"].arrow() if gradient else {"color": color or NEUTRAL["ink"]}
    if len(points) > 2:
        ax.plot(xs[:-1], ys[:-1], linewidth=width, solid_capstyle="butt", **({"color": style["color"],
                "linestyle": style.get("linestyle", "-")}))
    ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=12, linewidth=width,
                                 shrinkA=0, shrinkB=0, **style))


@register("l05_block", lesson=5, title="The block two ways: pre-LN and post-LN, and the residual path")
def block_diagram(seed: int = 0):
    """An encoder block in each arrangement of :mod:`minitf.blocks`, drawn bottom to top:
    the residual stream (the vertical line on the left), the two sub-layers branching off
    it, the LayerNorms, the additions.  Dashed arrows: where dL/dy goes on the way down.
    Pre-LN leaves the stream itself un-normalised, so dy reaches x through additions only;
    post-LN puts a LayerNorm on the stream after every addition, so the gradient passes a
    LayerNorm's backward at every sub-layer.  ``seed`` is accepted for the registry's
    signature; nothing here is random."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .draw import new_figure

    enc, grad, ink = KEY["encoder"], KEY["gradient"], NEUTRAL["ink"]
    fig = new_figure(11.0, 7.2)
    fig.text(0.01, 0.99, "The block two ways: the same sub-layers, the LayerNorm in another place",
             fontsize=12, fontweight="bold", va="top")
    xs, xb, bw = 2.3, 4.7, 2.5  # stream x, branch x, box width
    panels = [
        ("pre-LN  (norm_first=True, minitf's default)", True,
         "forward:   y = x + f(LayerNorm(x))", "backward:  dx = dy + LayerNorm\u2032(f\u2032(dy))"),
        ("post-LN  (norm_first=False, Vaswani et al. 2017)", False,
         "forward:   y = LayerNorm(x + f(x))", "backward:  dz = LayerNorm\u2032(dy);  dx = dz + f\u2032(dz)"),
    ]
    for i, (title, pre, fwd, bwd) in enumerate(panels):
        ax = fig.add_axes((0.01 + 0.5 * i, 0.09, 0.47, 0.84))
        ax.set_axis_off()
        ax.set_xlim(0, 7.0)
        ax.set_ylim(-0.7, 13.2)
        ax.text(0.1, 13.1, title, fontsize=10.5, fontweight="bold", va="top")
        ax.text(0.1, 12.45, fwd, fontsize=9, va="top", family="monospace")
        ax.text(0.1, 11.95, bwd, fontsize=9, va="top", family="monospace")
        ax.text(xs, -0.4, "x  (B, S, D)", ha="center", va="center", fontsize=9.5)
        ax.text(xs, 10.95, "y  (B, S, D)", ha="center", va="center", fontsize=9.5)
        y = 0.0
        norms_on_stream = []  # (bottom, top) of the LayerNorms the stream passes through
        for name in ("self-attention", "feed-forward"):
            if pre:
                split, y_ln, y_f, y_add = y + 0.7, y + 1.6, y + 3.0, y + 4.3
                _box(ax, xb, y_ln, bw, 0.8, "LayerNorm")
                _box(ax, xb, y_f, bw, 0.95, name, enc)
                _arrow(ax, [(xs, split), (xb, split), (xb, y_ln - 0.4)])
                _arrow(ax, [(xb, y_ln + 0.4), (xb, y_f - 0.48)])
                _arrow(ax, [(xb, y_f + 0.48), (xb, y_add), (xs + 0.26, y_add)])
                _plus(ax, xs, y_add)
                ax.plot([xs, xs], [y, y_add - 0.26], color=ink, linewidth=2.4)
                y = y_add + 0.26
            else:
                split, y_f, y_add, y_ln = y + 0.7, y + 2.0, y + 3.2, y + 4.3
                _box(ax, xb, y_f, bw, 0.95, name, enc)
                _arrow(ax, [(xs, split), (xb, split), (xb, y_f - 0.48)])
                _arrow(ax, [(xb, y_f + 0.48), (xb, y_add), (xs + 0.26, y_add)])
                _plus(ax, xs, y_add)
                _box(ax, xs - 0.35, y_ln, 2.0, 0.7, "LayerNorm")
                norms_on_stream.append((y_ln - 0.35, y_ln + 0.35))
                ax.plot([xs, xs], [y, y_add - 0.26], color=ink, linewidth=2.4)
                ax.plot([xs, xs], [y_add + 0.26, y_ln - 0.35], color=ink, linewidth=2.4)
                y = y_ln + 0.35
        ax.plot([xs, xs], [y, 10.6], color=ink, linewidth=2.4)
        # the gradient on its way down, just left of the stream: uninterrupted in pre-LN, through
        # each LayerNorm box (drawn across the stream) in post-LN
        gx, top, bottom = xs - 0.7, 10.4, 0.2
        stops = [top]
        for lo, hi in reversed(norms_on_stream):
            stops += [hi, lo]
        stops.append(bottom)
        for a, b in zip(stops[0::2], stops[1::2]):
            _arrow(ax, [(gx, a), (gx, b)], gradient=True, width=1.6)
        note = "dy reaches x through\nadditions only" if pre else "a LayerNorm backward\nat every sub-layer"
        ax.text(gx - 0.15, 6.6 if not pre else 5.3, note, ha="right", va="center", fontsize=8.5, rotation=90)
    fig.legend(handles=[Patch(label="sub-layer f of the encoder block", linewidth=1.2, **enc.fill()),
                        Patch(label="LayerNorm (\u03b3, \u03b2 learned)", facecolor=NEUTRAL["paper"],
                              edgecolor=ink, linewidth=1.2),
                        Line2D([], [], color=ink, linewidth=2.4, label="residual stream (forward)"),
                        Line2D([], [], linewidth=1.6, label="gradient dL/d(stream), backward", **grad.arrow())],
               loc="lower center", ncol=4, bbox_to_anchor=(0.5, 0.0), fontsize=8.5, handlelength=2.0)
    return fig


# ---- section 1: the gradient by depth ---------------------------------------------------------------
@register("l05_depth", lesson=5, title="Gradient norm by depth, with and without the residual, at initialisation")
def depth(seed: int = 0):
    """|dL/dx_l| at the input of every block l of a stack of 24 encoder blocks at
    initialisation (log scale; l = 24 is the top, where the random upstream gradient G
    enters), and cos(dL/dx_l, G).  Left: the sub-layers alone, y = x + f(x) against
    y = f(x).  Middle: with LayerNorm, y = x + f(LayerNorm(x)) (minitf's pre-LN block)
    against y = f(LayerNorm(x)).  Right: how much of G's direction is left at block l.
    Same weights, input and G in all four stacks (``seed``)."""
    from .draw import new_figure

    profiles = depth_profiles(seed)
    grad, ink = KEY["gradient"], NEUTRAL["ink"]
    l = np.arange(DEPTH + 1)
    fig = new_figure(12.5, 4.6)
    fig.text(0.01, 0.99, f"A stack of {DEPTH} blocks at initialisation: the gradient at each block's input",
             fontsize=12, fontweight="bold", va="top")

    def style(residual):
        return grad.line(linestyle="-" if residual else "--", marker="o" if residual else "s", markersize=4.5,
                         markevery=2, alpha=1.0 if residual else 0.55,
                         markerfacecolor=grad.color if residual else NEUTRAL["paper"])

    names = list(STACKS)
    panels = ((0, "(a) sub-layers alone", names[:2]), (1, "(b) with LayerNorm", names[2:]))
    axes = []
    for k, title, pair in panels:
        ax = fig.add_axes((0.06 + 0.32 * k, 0.14, 0.25, 0.68))
        for name in pair:
            p = profiles[name]
            ax.semilogy(l, p.grad_norm, label=name, **style(p.residual))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("block l (0 = bottom, input; 24 = top)")
        ax.grid(True, which="major")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8.5, ncol=1)
        axes.append(ax)
    axes[0].set_ylabel("|dL/dx_l|  (log scale)")
    ax = fig.add_axes((0.72, 0.14, 0.25, 0.68))
    for name in names[2:]:
        p = profiles[name]
        ax.plot(l, p.cosine, label=name, **style(p.residual))
    ax.axhline(0.0, color=ink, linewidth=0.6)
    ax.set_ylim(-0.25, 1.05)
    ax.set_title("(c) with LayerNorm: cos(dL/dx_l, G)", fontsize=10)
    ax.set_xlabel("block l")
    ax.grid(True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8.5, ncol=1)
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
    """Top: the norm of each block's parameter gradient at initialisation, six encoder and
    six decoder blocks, one teacher-forced batch, pre-LN (left) and post-LN (right), same
    initial weights and batch.  Bottom: the training loss (running mean over 10 steps) of
    the lesson's two-block model in each arrangement, with 30 warm-up steps and with none,
    peak learning rate 1.5e-2; the dotted line is the loss of predicting letter
    frequencies (:func:`~minitf.course.lesson05.unigram_loss`)."""
    from .draw import new_figure

    enc, dec, loss, ink = KEY["encoder"], KEY["decoder"], KEY["loss"], NEUTRAL["ink"]
    inits = {name: init_gradient_norms(nf, seed) for name, nf in ARRANGEMENTS.items()}
    runs = warmup_runs(seed)
    floor = unigram_loss()
    top = 1.1 * max(max(g.encoder.max(), g.decoder.max()) for g in inits.values())
    fig = new_figure(11.0, 8.0)
    fig.text(0.01, 0.99, "Pre-LN and post-LN: where the gradient is at initialisation, and what warm-up does",
             fontsize=12, fontweight="bold", va="top")
    for k, name in enumerate(ARRANGEMENTS):
        g = inits[name]
        ax = fig.add_axes((0.07 + 0.48 * k, 0.58, 0.4, 0.32))
        blocks = np.arange(1, len(g.encoder) + 1)
        ax.plot(blocks, g.encoder, label="encoder block l", **enc.line())
        ax.plot(blocks, g.decoder, label="decoder block l", **dec.line())
        ax.set_ylim(0, top)
        ax.set_xticks(blocks)
        ax.set_xlabel("block l (1 = bottom, next to the embedding)")
        ax.set_title(f"{name}: |dL/d\u03b8| of each block at initialisation", fontsize=10)
        ax.grid(True)
        ax.text(0.98, 0.04, f"decoder top / bottom = {g.decoder[-1] / g.decoder[0]:.2f}", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=8.5)
        if k == 0:
            ax.set_ylabel("gradient norm")
            ax.legend(loc="upper right", fontsize=8.5)
    for k, name in enumerate(ARRANGEMENTS):
        ax = fig.add_axes((0.07 + 0.48 * k, 0.08, 0.4, 0.34))
        for warmup in (WARMUP, 0):
            h = runs[name, warmup].history
            label = f"warm-up {warmup} steps" if warmup else "no warm-up"
            ax.plot(h.step, _running_mean(h.loss), label=label,
                    **loss.line(alpha=1.0 if warmup else 0.5, linewidth=2.0 if warmup else 1.6))
        ax.axhline(floor, color=ink, linestyle=":", linewidth=1.0)
        ax.text(h.step[-1], floor + 0.04, "letter frequencies only", ha="right", va="bottom", fontsize=8)
        ax.set_ylim(0, 4.0)
        ax.set_xlabel("training step")
        ax.set_title(f"{name}: training loss, peak learning rate {HIGH_LR:g}", fontsize=10)
        ax.grid(True)
        ax.legend(loc="upper right", fontsize=8.5)
        if k == 0:
            ax.set_ylabel("loss (mean of 10 steps)")
    return fig


# ---- section 5: positions ----------------------------------------------------------------------------
@register("l05_positions", lesson=5, title="Positions: the sinusoidal table, and lengths beyond training")
def positions(seed: int = 0):
    """Left: the sinusoidal table P (position t x dimension i, D = 32, 48 positions).
    Middle: P[t] . P[s] for every pair of positions: it depends on t - s only.  Right: the
    teacher-forced accuracy on the letters, by target position, of the two ``copy`` runs
    (trained on 1 to 8 letters, tested on 1 to 16) with sinusoidal and with learned
    positions (:func:`~minitf.course.lesson05.accuracy_by_position`); positions from 8 on
    never held a letter in training."""
    from .draw import new_figure

    enc, tf, ink = KEY["encoder"], KEY["teacher_forced"], NEUTRAL["ink"]
    runs = position_runs(seed)
    P = sinusoidal_table(48, 32)  # (max_len, D)
    fig = new_figure(13.0, 4.9)
    fig.text(0.01, 0.99, "Positions: a fixed table, distances in its dot products, and what happens past the "
             "training lengths", fontsize=12, fontweight="bold", va="top")
    ax = fig.add_axes((0.05, 0.12, 0.2, 0.7))
    im = ax.imshow(P, cmap=enc.cmap(), vmin=-1, vmax=1, aspect="auto")
    ax.set_xlabel("dimension i")
    ax.set_ylabel("position t")
    ax.set_title("(a) sinusoidal P[t, i]", fontsize=10)
    bar = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03)
    bar.ax.tick_params(labelsize=8)
    ax = fig.add_axes((0.33, 0.12, 0.2, 0.7))
    im = ax.imshow(P @ P.T, cmap=enc.cmap(), aspect="auto")
    ax.set_xlabel("position s")
    ax.set_ylabel("position t")
    ax.set_title("(b) P[t] \u00b7 P[s]: a function of t \u2212 s", fontsize=10)
    bar = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03)
    bar.ax.tick_params(labelsize=8)
    ax = fig.add_axes((0.62, 0.12, 0.36, 0.7))
    chance = None
    for kind, filled in (("sinusoidal", True), ("learned", False)):
        acc = accuracy_by_position(runs[kind].model, seed=seed)
        chance = acc.chance
        t = np.arange(len(acc.accuracy))
        ax.plot(t, acc.accuracy, label=f"{kind} positions", **tf.line(
            alpha=1.0 if filled else 0.6, markerfacecolor=tf.color if filled else NEUTRAL["paper"],
            linestyle="-" if filled else "--"))
    ax.axvspan(TRAIN_MAX_LEN - 0.5, TEST_MAX_LEN - 0.5, facecolor=NEUTRAL["rule"], edgecolor="none", alpha=0.6)
    ax.text(TRAIN_MAX_LEN - 0.3, 1.02, "no letter here in training \u2192", ha="left", va="bottom", fontsize=8.5)
    ax.axhline(chance, color=ink, linestyle=":", linewidth=1.0)
    ax.text(TEST_MAX_LEN - 0.6, chance + 0.015, "a random letter", ha="right", va="bottom", fontsize=8)
    ax.set_xlim(-0.5, TEST_MAX_LEN - 0.5)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("target position t")
    ax.set_ylabel("teacher-forced accuracy on the letters")
    ax.set_title(f"(c) copy, trained on 1\u2013{TRAIN_MAX_LEN} letters, tested on 1\u2013{TEST_MAX_LEN}",
                 fontsize=10)
    ax.legend(loc="center left", fontsize=8.5)
    return fig
