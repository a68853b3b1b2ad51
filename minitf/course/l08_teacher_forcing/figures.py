"""Figures of Lesson 8, *Training: teacher forcing & the loss*: drawing only.

Every figure is computed from minitf itself, so the picture shows what the code does,
not what someone typed:

* Figure 1 (section 2), ``l08_shift``: the decoder inputs come from
  :func:`minitf.data.shift_right` and the mask from :func:`minitf.masks.causal_mask`;
* Figure 2 (section 4), ``l08_gradient_journey``, and Figure 3 (section 5),
  ``l08_exposure_gap``: measured on the lesson's trained model by
  :mod:`minitf.course.l08_teacher_forcing` (:func:`~minitf.course.l08_teacher_forcing.lesson8_run`, trained once
  per process and seed and cached, shared with the notebook).
"""
from __future__ import annotations

import numpy as np

from .experiments import cross_attention_off, gradient_journey as measure_journey, lesson8_batch, lesson8_run
from ...data import SPECIAL_TOKENS, shift_right
from ...masks import causal_mask
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

# A word-level example for the picture (the course's tokenizer is character-level; words
# read better).  Ids: the specials in minitf.data's order, then the words.
_EXAMPLE = ("a", "cat", "sat", "down")


PT = 12.5
"""Points: the smallest text of this module's figures (at most 11.8 inches wide, so at least
14 pt on a 13.3-inch slide, :func:`minitf.course.kit.figures.draw.slide_pt`; ``l08_exposure_gap`` is also
at most 6.68 inches high, so that it fits a 16:9 slide at that size); ``l08_gradient_journey``,
13 inches wide, uses 14."""
TITLE_PT = 14


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

    from ..kit.figures.draw import new_figure, slide_axes, token_cell

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

    fig = new_figure(11.0, 5.2)

    # ---- left: two rows of tokens -------------------------------------------------------------
    ax = fig.add_axes((0.0, 0.25, 0.62, 0.64))
    ax.set_axis_off()
    ax.set_xlim(-3.45, T - 0.4)
    ax.set_ylim(-1.1, 3.0)
    y_lab, y_in = 2.2, 0.0
    fig.text(0.005, 0.985, "Shift right by one", fontsize=TITLE_PT, fontweight="bold", va="top")

    ax.text(-0.6, y_lab + 0.14, "labels", ha="right", va="center", fontsize=PT + 1, fontweight="bold")
    ax.text(-0.6, y_lab - 0.22, "what position t must output", ha="right", va="center", fontsize=PT,
            style="italic")
    ax.text(-0.6, y_in + 0.14, "decoder input", ha="right", va="center", fontsize=PT + 1, fontweight="bold")
    ax.text(-0.6, y_in - 0.22, "what position t is fed", ha="right", va="center", fontsize=PT, style="italic")

    for t in range(T):
        token_cell(ax, t, y_lab, label_toks[t], gt, fontsize=PT)
        start = input_toks[t] == "<bos>"
        token_cell(ax, t, y_in, input_toks[t], None if start else gt, fontsize=PT)
        ax.text(t, -0.62, f"t = {t}", ha="center", va="center", fontsize=PT)
        # the prediction: position t, fed y_{t-1}, is trained to output y_t
        ax.add_patch(FancyArrowPatch((t, y_in + 0.36), (t, y_lab - 0.36), arrowstyle="-|>", mutation_scale=15,
                                     linewidth=2.2, **dec.arrow()))
        # the copy: label t becomes the input of position t + 1
        if t + 1 < T:
            ax.add_line(Line2D([t + 0.2, t + 0.8], [y_lab - 0.36, y_in + 0.36], color=ink, linestyle=":",
                               linewidth=1.4))
    ax.text(0, -1.0, "start token", ha="center", va="center", fontsize=PT, style="italic")
    ax.text(T - 1, y_lab + 0.42, "never fed", ha="center", va="bottom", fontsize=PT, style="italic")
    ax.text(-0.6, (y_lab + y_in) / 2, "position t\npredicts", ha="right", va="center", fontsize=PT, color=ink)

    # ---- right: the causal mask over the same positions ----------------------------------------
    mx = fig.add_axes((0.725, 0.25, 0.26, 0.56))
    for t in range(T):  # rows: query position t
        for s in range(T):  # columns: key position s
            cell = masked.fill() if blocked[t, s] else dec.fill()
            mx.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, linewidth=1.0, **cell))
    mx.set_xlim(-0.5, T - 0.5)
    mx.set_ylim(T - 0.5, -0.5)
    mx.set_aspect("equal")
    mx.set_xticks(range(T), [str(s) for s in range(T)])
    mx.set_yticks(range(T), [f"{tok}  {t}" for t, tok in enumerate(input_toks)])
    mx.xaxis.tick_top()
    mx.tick_params(length=0)
    for side in mx.spines.values():
        side.set_visible(False)
    mx.set_xlabel("key s: the inputs it sees", labelpad=6)
    mx.set_ylabel("query t")
    slide_axes(mx, PT)
    fig.text(0.66, 0.985, "Causal mask: t sees inputs 0..t", fontsize=TITLE_PT, fontweight="bold", va="top")

    fig.legend(handles=[Patch(label=gt.label, **gt.fill()),
                        Line2D([], [], label="position t is trained to output label t", linewidth=2.2,
                               **dec.arrow()),
                        Line2D([], [], label="label t is fed at t + 1", color=ink, linestyle=":", linewidth=1.4),
                        Patch(label="may attend (decoder self-attention)", **dec.fill()),
                        Patch(label=masked.label, **masked.fill())],
               loc="lower left", ncol=3, bbox_to_anchor=(0.0, 0.0), handlelength=1.8, fontsize=PT,
               columnspacing=1.4)
    return fig


# ---- Figure 2 (section 4): how a loss at the decoder's head trains the encoder -------------
def _box(ax, x, y, w, h, meaning, title, value, fontsize=PT + 0.5):
    """A rounded box centred at (x, y) in the tint of ``meaning``: a bold title, a value below."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                linewidth=1.2, **meaning.fill()))
    ax.text(x, y + 0.17 * h, title, ha="center", va="center", fontsize=fontsize, fontweight="bold")
    ax.text(x, y - 0.22 * h, value, ha="center", va="center", fontsize=max(PT, fontsize - 0.5))


def _grad_arrow(ax, start, end, rad=0.0, width=1.8):
    from matplotlib.patches import FancyArrowPatch

    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=13, linewidth=width,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0,
                                 **KEY["gradient"].arrow()))


@register("l08_gradient_journey", lesson=8, title="How a loss at the decoder's head trains the encoder")
def gradient_journey(seed: int = 0):
    """The gradient's path, measured on the lesson's trained model.

    Left: p_hat - y at the head -> W_U -> decoder blocks (last first) -> each block's
    cross-attention K, V -> H_enc -> encoder blocks -> source embedding, every stop labelled
    with the norm of the gradient measured there (one teacher-forced backward on a fixed
    batch, :func:`minitf.course.l08_teacher_forcing.gradient_journey`).  Right: each decoder block's share
    of dL/dH_enc, their sum, and what is left of it with cross-attention switched off.
    """
    from matplotlib.patches import Ellipse

    from ..kit.figures.draw import new_figure, slide_axes

    run = lesson8_run(seed)
    batch = lesson8_batch(seed)
    journey = measure_journey(run.model, batch)
    with cross_attention_off(run.model):
        closed = measure_journey(run.model, batch)
    run.model.zero_grad()
    norms = {st.key: st.norm for st in journey.stages}
    L_dec, L_enc = len(run.model.decoder_layers), len(run.model.encoder_layers)
    enc, dec, cross, loss = KEY["encoder"], KEY["decoder"], KEY["cross_attention"], KEY["loss"]

    pt = 14  # drawn 13 inches wide: at least 14 pt on a 13.3-inch slide
    fig_w, fig_h = 13.0, 7.1
    fig = new_figure(fig_w, fig_h)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0, fig_w)  # one unit = one inch
    ax.set_ylim(0, fig_h)
    ax.text(0.03, fig_h - 0.03, "The gradient's journey: from p\u0302 \u2212 y at the head down to the source "
            "embedding", fontsize=pt + 2, fontweight="bold", va="top")
    ax.text(0.03, fig_h - 0.43, f"gradient norms of one backward pass, lesson model after {run.train_config.steps} "
            f"steps, batch of {batch.batch_size}", fontsize=pt, style="italic", va="top")

    def fmt(x):
        return f"{x:#.2g}"

    def box(x, y, w, h, meaning, title, value):
        _box(ax, x, y, w, h, meaning, title, value, fontsize=pt + 0.5)

    # rows, top to bottom in the order backward visits them
    bh, pitch = 0.78, 1.08  # box height, row pitch
    y_loss, y_head = 5.95, 5.95 - pitch
    block_y = y_head - 0.35 - pitch * (1 + np.arange(max(L_dec, L_enc + 1)))
    # decoder column (right of the diagram): each block with its cross-attention at its left
    xc, wc = 5.05, 2.6
    xb, wb = 7.5, 2.1
    xd, wd = (xc - wc / 2 + xb + wb / 2) / 2, (xb + wb / 2) - (xc - wc / 2)
    box(xd, y_loss, wd, bh, loss, "loss: cross-entropy",
        f"\u2016\u2202L/\u2202z\u2016 = \u2016p\u0302 \u2212 y\u2016 / m = {fmt(norms['loss'])}")
    box(xb, y_head, wb, bh, dec, "output head W_U", f"\u2016\u2202L/\u2202W_U\u2016 = {fmt(norms['head'])}")
    _grad_arrow(ax, (xb, y_loss - bh / 2), (xb, y_head + bh / 2))
    _grad_arrow(ax, (xb, y_head - bh / 2), (xb, block_y[0] + bh / 2))
    ax.text(xb - 0.12, (y_head + block_y[0]) / 2, f"\u2016\u2202L/\u2202H_dec\u2016 = {fmt(norms['H_dec'])}",
            ha="right", va="center", fontsize=pt)

    # encoder column (left)
    xe, we = 1.35, 2.6
    y_henc = y_head
    box(xe, y_henc, we, bh, enc, "encoder output H_enc", f"\u2016\u2202L/\u2202H_enc\u2016 = {fmt(norms['H_enc'])}")
    for i, l in enumerate(reversed(range(L_enc))):
        box(xe, block_y[i], we, bh, enc, f"encoder block {l + 1}",
            f"\u2016\u2202L/\u2202\u03b8\u2016 = {fmt(norms[f'encoder.{l}'])}")
    y_emb = block_y[L_enc]
    box(xe, y_emb, we, bh, enc, "source embedding", f"\u2016\u2202L/\u2202W_E\u2016 = {fmt(norms['src_embed'])}")
    stops = [y_henc] + list(block_y[:L_enc]) + [y_emb]
    for a, b in zip(stops, stops[1:]):
        _grad_arrow(ax, (xe, a - bh / 2), (xe, b + bh / 2))

    # the shares meet in a sum, which is all H_enc receives
    sx, sy, r = 3.25, y_henc, 0.24
    ax.add_patch(Ellipse((sx, sy), 2 * r, 2 * r, facecolor=NEUTRAL["paper"], edgecolor=NEUTRAL["ink"],
                         linewidth=1.2))
    ax.text(sx, sy, "+", ha="center", va="center", fontsize=pt + 4)
    _grad_arrow(ax, (sx - r, sy), (xe + we / 2, sy))
    ax.text(sx, sy + r + 0.06, "sum", ha="center", va="bottom", fontsize=pt, style="italic")

    # decoder blocks, each with its cross-attention and its share of dL/dH_enc
    for i, l in enumerate(reversed(range(L_dec))):
        y = block_y[i]
        box(xb, y, wb, bh, dec, f"decoder block {l + 1}",
            f"\u2016\u2202L/\u2202\u03b8\u2016 = {fmt(norms[f'decoder.{l}'])}")
        # three lines: the weights' gradient, and the share it hands to H_enc
        _box(ax, xc, y, wc, 1.0, cross, "", "", fontsize=pt + 0.5)
        ax.text(xc, y + 0.27, "cross-attn W_K, W_V", ha="center", va="center", fontsize=pt + 0.5,
                fontweight="bold")
        ax.text(xc, y, f"\u2016\u2202L/\u2202W\u2016 = {fmt(norms[f'decoder.{l}.cross_kv'])}", ha="center",
                va="center", fontsize=pt)
        ax.text(xc, y - 0.27, f"share {l + 1} \u2192 H_enc: {fmt(norms[f'decoder.{l}.share'])}", ha="center",
                va="center", fontsize=pt)
        if i + 1 < L_dec:
            _grad_arrow(ax, (xb, y - bh / 2), (xb, block_y[i + 1] + bh / 2))
        # this block's share travels back through W_K^c, W_V^c into the sum
        start = np.array([xc - wc / 2, y])
        end = np.array([sx, sy])
        d = start - end
        end = end + d / np.hypot(*d) * r  # stop at the circle
        _grad_arrow(ax, tuple(start), tuple(end), width=1.6)
    ax.text(0.03, 0.03, "\u03b8: all of a block's weights.  Dashed arrows: the backward pass, gradient norms "
            "measured where they arrive.", ha="left", va="bottom", fontsize=pt, style="italic")

    # ---- right: the shares, and their sum ---------------------------------------------------
    x0 = 9.0  # inches: where the right panel starts
    ax.text(x0, 5.95 + bh / 2, "Each block's share of \u2202L/\u2202H_enc", fontsize=pt + 1, fontweight="bold",
            va="top")
    bx = fig.add_axes((10.2 / fig_w, 3.55 / fig_h, 1.55 / fig_w, 2.1 / fig_h))
    order = list(reversed(range(L_dec)))  # as the backward visits them: last block first
    names = [f"block {l + 1}" for l in order] + ["sum"]
    fractions = [float(journey.share_fractions[l]) for l in order] + [float(np.sum(journey.share_fractions))]
    share_norms = [float(journey.share_norms[l]) for l in order] + [float(np.linalg.norm(journey.dH_enc))]
    ys = np.arange(len(names))[::-1]
    for y, name, f, n in zip(ys, names, fractions, share_norms):
        meaning = enc if name == "sum" else cross
        bx.barh(y, f, height=0.62, linewidth=1.2, **meaning.fill())
        bx.text(max(f, 0) + 0.04, y, f"{100 * f:.0f}%", va="center", ha="left", fontsize=pt)
    bx.set_yticks(ys, [n if n != "sum" else "sum" for n in names])
    bx.axvline(0, color=NEUTRAL["ink"], linewidth=0.8)
    lo = min(0.0, min(fractions))
    bx.set_xlim(lo - 0.05 if lo < 0 else 0, 1.45)
    bx.set_xticks([0, 1.0], ["0", "100%"])
    bx.spines["left"].set_visible(False)
    bx.tick_params(axis="y", length=0)
    slide_axes(bx, pt)
    ax.text(x0, 3.1, "projection onto \u2202L/\u2202H_enc:\n\u27e8share, total\u27e9 / \u2016total\u2016\u00b2",
            fontsize=pt, va="top", linespacing=1.3)
    closed_norm = float(np.linalg.norm(closed.dH_enc))
    ax.text(x0, 2.2, "shares summed vs \u2202L/\u2202H_enc:\n"
            f"   max |difference| = {journey.sum_max_abs_diff:.1g}\n"
            f"every cross-attention's W_o, b_o = 0:\n   \u2016\u2202L/\u2202H_enc\u2016 = {closed_norm:.1g}: "
            "no gradient\n   for the encoder", fontsize=pt, va="top", linespacing=1.3)
    return fig


# ---- Figure 3 (section 5): teacher forcing, and the gap it leaves behind --------------------
@register("l08_exposure_gap", lesson=8, title="Teacher forcing, and the gap it leaves behind")
def exposure_gap(seed: int = 0):
    """What teacher-forced numbers hide, measured on the lesson's model as it trains.

    Top left: per-token accuracy with the true prefix fed (teacher-forced) and with the
    model's own prefix fed (free-running, greedy), over training.  Top right: halfway
    through training, the share of free-running outputs that are wrong, by target length
    T, next to 1 - (1 - eps)^T from the teacher-forced per-token error eps.  Bottom: one
    example at that point, token by token, both ways.
    """
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure, slide_axes, token_cell

    run = lesson8_run(seed)
    evals = run.history.evals
    steps = np.array([e["step"] for e in evals])
    tf_acc = np.array([e["teacher_forced_token_accuracy"] for e in evals])
    fr_acc = np.array([e["free_running_token_accuracy"] for e in evals])
    comp, mid = run.midpoint, run.midpoint_step
    tf, fr, gt, pr = KEY["teacher_forced"], KEY["free_running"], KEY["ground_truth"], KEY["predicted"]
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]

    # inches: 16:9 at a size where PT is still 14 pt on the slide; the plots above, the example below
    fig_w, fig_h = 11.4, 6.5
    fig = new_figure(fig_w, fig_h)
    strip_h, plot_y, plot_h = 2.85, 3.47, 1.85  # the example's strip, the plots' bottom and height

    # ---- top left: accuracy over training, both ways ------------------------------------------
    a1 = fig.add_axes((0.075, plot_y / fig_h, 0.39, plot_h / fig_h))
    a1.fill_between(steps, fr_acc, tf_acc, where=tf_acc >= fr_acc, facecolor=rule, edgecolor="none",
                    label="the gap, position by position")
    a1.plot(steps, tf_acc, label="teacher-forced: true prefix fed", markersize=6, **tf.line())
    a1.plot(steps, fr_acc, label="free-running: own prefix fed", markersize=6, **fr.line())
    a1.axvline(mid, color=ink, linestyle=":", linewidth=1.2)
    a1.set_xlim(0, steps[-1] + 5)
    a1.set_ylim(0, 1.05)
    a1.set_yticks([0, 0.5, 1])
    a1.set_xlabel("training step")
    a1.set_ylabel("token accuracy")
    a1.grid(True, axis="y")
    a1.legend(loc="lower right", bbox_to_anchor=(1.0, 0.0), fontsize=PT, handlelength=2.4, borderaxespad=0.1,
              labelspacing=0.3)
    a1.set_title("One model, evaluated both ways", fontsize=TITLE_PT - 0.5)
    slide_axes(a1, PT)

    # ---- top right: errors compound with length ----------------------------------------------
    a2 = fig.add_axes((0.59, plot_y / fig_h, 0.39, plot_h / fig_h))
    T = comp.lengths
    a2.plot(T, comp.free_running_error, label="measured, free-running", markersize=7, **fr.line())
    grid_T = np.linspace(T.min(), T.max(), 200)
    a2.plot(grid_T, 1 - (1 - comp.epsilon) ** grid_T, linewidth=2.2,
            label=f"from one \u03b5 = {100 * comp.epsilon:.1f}%", **tf.line(marker=None))
    a2.plot(T, comp.predicted_by_length, linestyle="none", markersize=8, markerfacecolor=NEUTRAL["paper"],
            label="from \u03b5 at each length T",
            **{k: v for k, v in tf.line().items() if k not in ("linestyle", "markerfacecolor")})
    a2.set_xlim(T.min() - 0.5, T.max() + 0.5)
    a2.set_ylim(0, 1.05)
    a2.set_yticks([0, 0.5, 1])
    a2.set_xticks(T[::2] if len(T) > 8 else T)
    a2.set_xlabel("target length T (<eos> included)")
    a2.set_ylabel("outputs with an error")
    a2.grid(True, axis="y")
    a2.legend(loc="upper left", fontsize=PT, handlelength=2.4, borderaxespad=0.1, labelspacing=0.3)
    a2.set_title(f"Errors compound with length (step {mid})", fontsize=TITLE_PT - 0.5)
    slide_axes(a2, PT)
    fig.text(0.01, 1.0, "Teacher forcing, and the gap it leaves behind", fontsize=TITLE_PT + 0.5, fontweight="bold",
             va="top")
    fig.text(0.01, 1.0 - 0.33 / fig_h, f"left: {run.train_config.eval_size} fixed examples; dotted: step {mid}, the "
             f"right panel ({int(comp.counts.sum())} examples) and the example below;\nright: errors predicted from "
             "the teacher-forced error per token \u03b5 as 1 \u2212 (1 \u2212 \u03b5)^T", fontsize=PT, va="top",
             linespacing=1.25)

    # ---- bottom: one example, token by token (y in inches from the strip's bottom) -----------------
    ex = run.midpoint_example
    n = len(ex["target"])
    a3 = fig.add_axes((0.0, 0.0, 1.0, strip_h / fig_h))
    a3.set_axis_off()
    a3.set_xlim(-2.75, max(n, 13) + 1.45)
    a3.set_ylim(0.0, strip_h)
    a3.text(-2.65, 2.68, f"One example at step {mid}:  source \u201c{ex['source']}\u201d, reversed",
            fontsize=TITLE_PT - 0.5, fontweight="bold", va="center")
    rows = [("target y", ex["target"], None, gt, 2.2),
            ("teacher-forced", ex["teacher_forced"], ex["teacher_forced_right"], pr, 1.56),
            ("free-running", ex["free_running"], ex["free_running_right"], pr, 0.92)]
    for title, toks, right, meaning, y in rows:
        a3.text(-0.6, y, title, ha="right", va="center", fontsize=PT + 0.5, fontweight="bold")
        for t, tok in enumerate(toks):
            box = token_cell(a3, t, y, tok if tok else "\u2013", meaning, width=0.94, height=0.44, fontsize=PT)
            if right is not None and not right[t]:
                box.set_edgecolor(ink)
                box.set_linewidth(2.4)
                a3.text(t + 0.4, y + 0.3, "\u2717", ha="center", va="center", fontsize=PT, fontweight="bold")
        if right is not None:
            edits = f"\n{ex['free_running_edits']} edits away" if title == "free-running" else ""
            a3.text(n - 0.4, y, f"{n - sum(right)} wrong{edits}", ha="left", va="center", fontsize=PT)
    a3.text(-2.65, 0.46, "Teacher-forced, every slip is repaired: the next position is fed the true token. "
            "Free-running, every slip is fed back in.", fontsize=PT, style="italic", va="center")
    a3.legend(handles=[Patch(label=gt.label, **gt.fill()), Patch(label=pr.label, **pr.fill()),
                       Patch(label="wrong token (\u2717)", facecolor=NEUTRAL["paper"], edgecolor=ink, linewidth=2.4)],
              loc="lower left", bbox_to_anchor=(0.0, 0.0), ncol=3, fontsize=PT, handlelength=1.6,
              columnspacing=2.0, borderaxespad=0.0)
    return fig
