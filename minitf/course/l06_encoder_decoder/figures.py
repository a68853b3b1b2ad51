"""Figures of Lesson 6, *The whole encoder-decoder* (drawn from what ``minitf.course.l06_encoder_decoder`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l06_data_flow``            the shapes of one live forward pass of the lesson's model
                             (:func:`~minitf.course.l06_encoder_decoder.lesson6_model_config`) on the
                             lesson's three dates (:func:`~minitf.course.l06_encoder_decoder.lesson6_batch`),
                             read from its caches (:func:`~minitf.course.l06_encoder_decoder.shape_trace`)
``l06_budget``               parameters per part of the four embedding variants
                             (:func:`~minitf.course.l06_encoder_decoder.parameter_formula`, equal to
                             ``num_parameters()``; also for a model with a real vocabulary),
                             forward FLOPs per part (:func:`~minitf.course.l06_encoder_decoder.flop_terms`)
                             and activation bytes per part (``activation_bytes`` of a live
                             forward, :func:`~minitf.course.l06_encoder_decoder.memory_table`) for the
                             shapes of ``MEMORY_SHAPES``: a base shape, B, S and T
                             each doubled, then S and T four times the base
===========================  ==================================================================

No figure depends on a timing or on training: both are deterministic counts.
This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

from ...config import ModelConfig
from .experiments import (MEMORY_SHAPES, VARIANTS, block_parameter_formula, flop_terms, lesson6_batch,
                          lesson6_model_config, lesson6_task, memory_table, parameter_formula, shape_trace)
from ...models import EncoderDecoder
from ..kit.figures.draw import slide_axes, text_box
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["data_flow", "budget", "LARGE_VOCABULARY"]

LARGE_VOCABULARY = dict(src_vocab_size=32_000, tgt_vocab_size=32_000, d_model=512, n_heads=8, d_ff=2048,
                        n_encoder_layers=6, n_decoder_layers=6, max_len=512)
"""A model of the original Transformer's base size with a 32,000-token vocabulary: the
budget figure's second parameter panel (counted by the formula, not built)."""


PT = 12
"""Points: the smallest text of ``l06_budget`` (at most 11.4 inches wide and 6.4 high, so at least
14 pt on a 16:9 slide 13.3 inches wide, :func:`minitf.course.kit.figures.draw.slide_pt`); ``l06_data_flow``,
13 inches wide, uses 14."""
TITLE_PT = 13.5


# ---- the data flow -----------------------------------------------------------------------------------
def _box(ax, x, y, w, h, meaning, tint, lines, fontsize=PT, bold_first=True, line=0.37):
    """A rounded box centred at (x, y) filled with ``meaning``'s tint, ``lines`` of text in it."""
    text_box(ax, x, y, w, h, meaning, lines, fontsize=fontsize, line=line, bold_first=bold_first, tint=tint,
             rounding=0.12, linewidth=1.1)


def _arrow(ax, start, end, meaning=None, text=None, text_xy=None, **kw):
    from matplotlib.patches import FancyArrowPatch

    style = {"color": NEUTRAL["ink"]} if meaning is None else KEY[meaning].arrow()
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", shrinkA=0, shrinkB=0,
                                 **{"linewidth": 1.3, "mutation_scale": 12, **style, **kw}))
    if text:
        ax.text(*text_xy, text, ha="left", va="center", fontsize=PT, color=NEUTRAL["ink"])


@register("l06_data_flow", lesson=6, title="The whole encoder-decoder: every shape from source ids to logits")
def data_flow(seed: int = 0):
    """The lesson's model as its forward pass runs, bottom to top: the encoder (left) turns
    source ids into H_enc, the decoder (right) turns its input ids and H_enc into logits.
    Every shape is printed twice, in the course's letters and in numbers, and the numbers
    are read from the caches of one live forward pass on the lesson's three dates."""
    from ..kit.figures.draw import new_figure

    task = lesson6_task()
    model = EncoderDecoder(lesson6_model_config(task, seed))
    batch = lesson6_batch(task, seed=seed)
    trace = shape_trace(model, batch)
    d, c = trace.dims, model.config

    def shape(part, name_start, block=None, step=None):
        for r in trace.rows:
            if r.part == part and r.name.startswith(name_start) and (block is None or r.block == block) \
                    and (step is None or r.step == step):
                return f"{r.letters} = {r.shape}"
        raise KeyError(name_start)

    pt = 14  # drawn 13 inches wide: at least 14 pt on a 13.3-inch slide
    fig_w, fig_h = 13.0, 7.05
    fig = new_figure(fig_w, fig_h)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, fig_w)  # one unit = one inch
    ax.set_ylim(0, fig_h)
    ax.axis("off")
    line_h, pad, gap = 0.262, 0.08, 0.22  # a text line, a box's inner margin, the space between boxes

    def column(x, w, y, items):
        """Stack boxes upward from y at centre x; ``items``: (meaning, tint, lines) or a frame
        ("frame", meaning, label, label_side, items).  Returns {first line: (bottom, top)}."""
        where = {}
        for item in items:
            if item[0] == "frame":
                _, meaning, label, side, inner = item
                lo = y
                where.update(column(x, w - 0.3, y + 0.12, inner))
                y = max(t for _, t in where.values()) + 0.12
                if side == "top":
                    y += 0.34
                    ax.text(x - w / 2 + 0.08, y - 0.2, label, ha="left", va="center", fontsize=pt,
                            fontweight="bold", color=KEY[meaning].color)
                else:  # along the right edge
                    ax.text(x + w / 2 + 0.08, (lo + y) / 2, label, ha="left", va="center", rotation=90,
                            fontsize=pt, fontweight="bold", color=KEY[meaning].color)
                _box(ax, x, (lo + y) / 2, w, y - lo, meaning, 0.06, [""])
                where[label] = (lo, y)
            else:
                meaning, tint, lines = item
                h = len(lines) * line_h + 2 * pad
                _box(ax, x, y + h / 2, w, h, meaning, tint, lines, fontsize=pt, line=line_h, bold_first=len(lines) > 1)
                where[lines[0]] = (y, y + h)
                y += h
            y += gap
        return where

    def arrows(x, where, names, meaning):
        for a, b in zip(names, names[1:]):
            _arrow(ax, (x, where[a][1]), (x, where[b][0] + (0.12 if b.startswith(("encoder b", "decoder b")) else 0)),
                   meaning, mutation_scale=16, linewidth=1.6)

    src_text = task.tokenizer.decode([int(i) for i in batch.input_ids[0]])
    tgt_ids = [int(i) for i in batch.decoder_input_ids[0]]
    dec_text = "<bos>" + task.tokenizer.decode(tgt_ids[1:])
    xe, we, xd, wd = 3.1, 6.1, 9.65, 6.1
    enc_block = f"encoder block \u00d7 L_enc = {c.n_encoder_layers}"
    dec_block = f"decoder block \u00d7 L_dec = {c.n_decoder_layers}"
    enc = column(xe, we, 0.05, [
        ("encoder", 0.12, ["source ids", f"{shape('encoder', 'source ids')}   e.g. \u201c{src_text}\u201d"]),
        ("encoder", 0.12, [f"embedding W_E[ids] \u00b7 \u221aD + positions:  x {shape('encoder', 'x', 1)}"]),
        ("frame", "encoder", enc_block, "top", [
            ("encoder", 0.3, ["self-attention (source padding mask)", f"Q, K, V {shape('encoder', 'Q', 1)}",
                              f"A {shape('encoder', 'A', 1)}"]),
            ("encoder", 0.3, [f"feed-forward:  hidden {shape('encoder', 'relu', 1)}"])]),
        ("encoder", 0.45, [f"final LayerNorm \u2192 H_enc {shape('encoder', 'H_enc')}"]),
    ])
    dec = column(xd, wd, 0.05, [
        ("decoder", 0.12, ["decoder input ids (labels shifted right)",
                           f"{shape('decoder', 'decoder input ids')}   e.g. \u201c{dec_text}\u201d"]),
        ("decoder", 0.12, [f"embedding W_E[ids] \u00b7 \u221aD + positions:  x {shape('decoder', 'x', 1)}"]),
        ("frame", "decoder", dec_block, "right", [
            ("decoder", 0.3, ["causal self-attention", f"Q, K, V {shape('decoder', 'Q', 1, 'causal self-attention')}",
                              f"A {shape('decoder', 'A', 1, 'causal self-attention')}"]),
            ("cross_attention", 0.3, ["cross-attention (source padding mask)",
                                      f"Q {shape('decoder', 'Q', 1, 'cross-attention')}",
                                      f"K, V {shape('decoder', 'K', 1, 'cross-attention')}",
                                      f"A {shape('decoder', 'A', 1, 'cross-attention')}"]),
            ("decoder", 0.3, [f"feed-forward:  hidden {shape('decoder', 'relu', 1)}"])]),
        ("decoder", 0.45, [f"final LayerNorm \u2192 H_dec {shape('decoder', 'H_dec')}"]),
        ("decoder", 0.7, ["output head: logits = H_dec W_U",
                          f"W_U {shape('head', 'W_U')}     logits {shape('head', 'logits')}"]),
    ])
    e_names = list(enc)
    arrows(xe, enc, [e_names[0], e_names[1], enc_block, e_names[-1]], "encoder")
    arrows(xe, enc, e_names[2:4], "encoder")
    d_names = list(dec)
    arrows(xd, dec, [d_names[0], d_names[1], dec_block, d_names[-2], d_names[-1]], "decoder")
    arrows(xd, dec, d_names[2:5], "decoder")
    # ---- H_enc into every cross-attention ----
    h_lo, h_hi = enc[e_names[-1]]
    c_lo, c_hi = dec["cross-attention (source padding mask)"]
    _arrow(ax, (xe + we / 2, (h_lo + h_hi) / 2), (xd - (wd - 0.3) / 2, (c_lo + c_hi) / 2), "cross_attention",
           mutation_scale=18, linewidth=2.2)
    ax.text(xe - we / 2, h_hi + 0.15, "H_enc (B, S, D) is the input of the keys and\nvalues of every "
            "decoder block's cross-attention \u2192", ha="left", va="bottom", fontsize=pt,
            color=NEUTRAL["ink"], linespacing=1.3)
    ax.text(xe - we / 2, h_hi + 0.95, "each block: a residual connection around every\nsub-layer, pre-LN; "
            "later blocks have the shapes\nof block 1", ha="left", va="bottom", fontsize=pt,
            color=NEUTRAL["ink"], linespacing=1.3)
    letters = ", ".join(f"{k} = {v}" for k, v in d.items())
    ax.text(0.02, fig_h - 0.03, f"One teacher-forced forward pass of the lesson's model on {d['B']} dates",
            ha="left", va="top", fontsize=pt + 2, fontweight="bold", color=NEUTRAL["ink"])
    ax.text(0.02, fig_h - 0.43, letters, ha="left", va="top", fontsize=pt, color=NEUTRAL["ink"])
    return fig


# ---- the budget: parameters, FLOPs, memory ----------------------------------------------------------------
def _parameter_segments(config: ModelConfig) -> dict:
    """Parameters per drawn segment: the formula's parts, the decoder blocks split into
    their cross-attention and the rest, final norms with their stacks."""
    p = parameter_formula(config)
    cross = config.n_decoder_layers * block_parameter_formula(config)["decoder block"]["cross-attention"]
    return {"source embedding": p["source embedding"] + p["positions"] // 2,
            "encoder": p["encoder blocks"] + p["encoder final norm"],
            "target embedding": p["target embedding"] + p["positions"] // 2,
            "decoder (self-attention, feed-forward, norms)": p["decoder blocks"] - cross + p["decoder final norm"],
            "cross-attention": cross,
            "output head": p["output head"]}


_SEGMENT_STYLE = {  # segment -> (meaning, tint)
    "source embedding": ("encoder", 0.25),
    "encoder": ("encoder", 0.8),
    "target embedding": ("decoder", 0.25),
    "decoder (self-attention, feed-forward, norms)": ("decoder", 0.8),
    "cross-attention": ("cross_attention", 0.8),
    "output head": ("decoder", 0.5),
}


def _stacked(ax, x, columns: list, scale: float, total_fmt):
    """Stacked bars: ``columns`` is a list of {segment: value}; values divided by ``scale``."""
    for i, col in enumerate(columns):
        bottom = 0.0
        for seg, value in col.items():
            meaning, tint = _SEGMENT_STYLE[seg]
            v = value / scale
            if v > 0:
                ax.bar(x[i], v, bottom=bottom, width=0.62, linewidth=0.7, **KEY[meaning].fill(tint))
            bottom += v
        ax.text(x[i], bottom, total_fmt(bottom), ha="center", va="bottom", fontsize=PT, color=NEUTRAL["ink"])
    ax.set_xlim(-0.6, len(columns) - 0.4)
    ax.grid(True, axis="y")


def _stacked_panel(fig, rect, columns: list, names: list, scale: float, total_fmt, ylabel: str, title: str):
    """One panel of ``l06_budget``: axes at ``rect``, :func:`_stacked` bars with ``names`` under
    them, headroom above the totals, the y label and the title."""
    ax = fig.add_axes(rect)
    _stacked(ax, range(len(names)), columns, scale, total_fmt)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    ax.set_title(title, fontsize=TITLE_PT)
    slide_axes(ax, PT)


@register("l06_budget", lesson=6, title="Where the parameters, the FLOPs and the activation memory go, part by part")
def budget(seed: int = 0):
    """Four panels of stacked bars, one colour per part (encoder, decoder, cross-attention;
    the embeddings and the head in lighter tints of their stack's colour):

    * parameters of the lesson's model in the four embedding variants (separate, shared,
      tied, shared + tied; the formula, equal to ``num_parameters()``);
    * the same for a base-size model with a 32,000-token vocabulary, where the embeddings
      are a large share (formula only);
    * forward FLOPs (matrix products) of the lesson's model for the batch shapes of
      :data:`~minitf.course.l06_encoder_decoder.MEMORY_SHAPES`;
    * activation bytes (``activation_bytes`` of a live forward, float32) for the same shapes.
    """
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure

    config = lesson6_model_config(seed=seed)
    fig_w, fig_h = 11.0, 6.4  # inches: 16:9 at a size where PT is still 14 pt on the slide
    fig = new_figure(fig_w, fig_h)
    names = [v[0] for v in VARIANTS]
    left, right, width = 0.08, 0.585, 0.39
    # 2 x 2 panels 1.7 inches high: the legend above, two-line titles on top, three-line shapes below
    top_row, bottom_row, height = 3.3 / fig_h, 0.87 / fig_h, 1.7 / fig_h
    # ---- parameters, the lesson's model ----
    cols = [_parameter_segments(config.replace(share_embeddings=s, tie_output=t)) for _, s, t in VARIANTS]
    _stacked_panel(fig, (left, top_row, width, height), cols, names, 1e3, lambda v: f"{v:.1f}k", "thousands",
                   f"Parameters: the lesson's model\n(V = {config.tgt_vocab_size}, D = {config.d_model})")
    # ---- parameters, a real vocabulary ----
    large = ModelConfig(**LARGE_VOCABULARY)
    cols = [_parameter_segments(large.replace(share_embeddings=s, tie_output=t)) for _, s, t in VARIANTS]
    _stacked_panel(fig, (right, top_row, width, height), cols, names, 1e6, lambda v: f"{v:.1f}M", "millions",
                   f"Parameters, base size (formula):\nV = {large.tgt_vocab_size:,}, D = {large.d_model}, "
                   f"{large.n_encoder_layers} + {large.n_decoder_layers} blocks")
    # ---- FLOPs and memory as B, S, T grow ----
    labels = [f"B={B}\nS={S}\nT={T}" for B, S, T in MEMORY_SHAPES]
    flops = []
    for B, S, T in MEMORY_SHAPES:
        col = dict.fromkeys(_SEGMENT_STYLE, 0)
        for term in flop_terms(config, B, S, T):
            seg = {"encoder": "encoder", "head": "output head"}.get(term.part)
            if seg is None:
                seg = "cross-attention" if term.sublayer == "cross-attention" else \
                    "decoder (self-attention, feed-forward, norms)"
            col[seg] += term.flops
        flops.append(col)
    _stacked_panel(fig, (left, bottom_row, width, height), flops, labels, 1e6, lambda v: f"{v:.0f}M",
                   "millions\n(matrix products)", "Forward FLOPs as B, S, T grow")
    memory = []
    for row in memory_table(lesson6_model_config(seed=seed, dtype="float32", max_len=128)):
        t = row.terms
        dec = t["decoder"]
        memory.append({"encoder": sum(t["encoder"].values()),
                       "decoder (self-attention, feed-forward, norms)": sum(dec.values()) - dec["cross-attention"],
                       "cross-attention": dec["cross-attention"], "output head": t["head"]["H_dec"]})
        if sum(memory[-1].values()) != row.measured["total"]:
            raise AssertionError("the formula's terms do not add up to activation_bytes")
    _stacked_panel(fig, (right, bottom_row, width, height), memory, labels, 2 ** 20, lambda v: f"{v:.2f}",
                   "MiB (float32)", "Activations kept for backward")
    labels = {"output head": "output head (parameters: W_U; memory: H_dec)"}
    order = ["source embedding", "encoder", "cross-attention", "target embedding",
             "decoder (self-attention, feed-forward, norms)", "output head"]
    handles = [Patch(linewidth=0.7, label=labels.get(seg, seg), **KEY[meaning].fill(tint))
               for seg in order for meaning, tint in [_SEGMENT_STYLE[seg]]]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False, fontsize=PT,
               columnspacing=2.0, borderaxespad=0.0, labelspacing=0.3)
    return fig
