"""Figures of Lesson 6, *The whole encoder-decoder* (drawn from what ``minitf.course.lesson06`` measures).

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l06_data_flow``            the shapes of one live forward pass of the lesson's model
                             (:func:`~minitf.course.lesson06.lesson6_model_config`) on the
                             lesson's three dates (:func:`~minitf.course.lesson06.lesson6_batch`),
                             read from its caches (:func:`~minitf.course.lesson06.shape_trace`)
``l06_budget``               parameters per part of the four embedding variants
                             (:func:`~minitf.course.lesson06.parameter_formula`, equal to
                             ``num_parameters()``; also for a model with a real vocabulary),
                             forward FLOPs per part (:func:`~minitf.course.lesson06.flop_terms`)
                             and activation bytes per part (``activation_bytes`` of a live
                             forward, :func:`~minitf.course.lesson06.memory_table`) as B, S and
                             T double
===========================  ==================================================================

No figure depends on a timing or on training: both are deterministic counts.
This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

from ..config import ModelConfig
from ..course.lesson06 import (MEMORY_SHAPES, VARIANTS, block_parameter_formula, flop_terms, lesson6_batch,
                               lesson6_model_config, lesson6_task, memory_table, parameter_formula, shape_trace)
from ..models import EncoderDecoder
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["data_flow", "budget", "LARGE_VOCABULARY"]

LARGE_VOCABULARY = dict(src_vocab_size=32_000, tgt_vocab_size=32_000, d_model=512, n_heads=8, d_ff=2048,
                        n_encoder_layers=6, n_decoder_layers=6, max_len=512)
"""A model of the original Transformer's base size with a 32,000-token vocabulary: the
budget figure's second parameter panel (counted by the formula, not built)."""


PT = 12
"""Points: the smallest text of this module's figures (at most 11.4 inches wide, so at least
14 pt on a 13.3-inch slide, :func:`minitf.figures.draw.slide_pt`)."""
TITLE_PT = 13.5


# ---- the data flow -----------------------------------------------------------------------------------
def _box(ax, x, y, w, h, meaning, tint, lines, fontsize=PT, bold_first=True):
    """A rounded box centred at (x, y) filled with ``meaning``'s tint, ``lines`` of text in it."""
    from matplotlib.patches import FancyBboxPatch

    style = {"facecolor": NEUTRAL["paper"], "edgecolor": NEUTRAL["ink"]} if meaning is None else \
        KEY[meaning].fill(tint)
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                linewidth=1.1, **style))
    n = len(lines)
    for i, text in enumerate(lines):
        ax.text(x, y + (n - 1) / 2 * 0.37 - i * 0.37, text, ha="center", va="center", fontsize=fontsize,
                color=NEUTRAL["ink"], fontweight="bold" if (i == 0 and bold_first) else "normal")


def _arrow(ax, start, end, meaning=None, text=None, text_xy=None, **kw):
    from matplotlib.patches import FancyArrowPatch

    style = {"color": NEUTRAL["ink"]} if meaning is None else KEY[meaning].arrow()
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, shrinkA=0, shrinkB=0,
                                 **{"linewidth": 1.3, **style, **kw}))
    if text:
        ax.text(*text_xy, text, ha="left", va="center", fontsize=PT, color=NEUTRAL["ink"])


@register("l06_data_flow", lesson=6, title="The whole encoder-decoder: every shape from source ids to logits")
def data_flow(seed: int = 0):
    """The lesson's model as its forward pass runs, bottom to top: the encoder (left) turns
    source ids into H_enc, the decoder (right) turns its input ids and H_enc into logits.
    Every shape is printed twice, in the course's letters and in numbers, and the numbers
    are read from the caches of one live forward pass on the lesson's three dates."""
    from matplotlib.patches import Patch

    from .draw import new_figure

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

    fig = new_figure(11.0, 10.6)
    ax = fig.add_axes((0.0, 0.0, 1.0, 0.915))
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 12.6)
    ax.axis("off")
    xe, xd, we, wd = 2.45, 8.4, 4.5, 4.7
    src_text = task.tokenizer.decode([int(i) for i in batch.input_ids[0]])
    # ---- encoder (left) ----
    _box(ax, xe, 0.75, we, 0.95, "encoder", 0.12,
         ["source ids", f"{shape('encoder', 'source ids')}   e.g. \u201c{src_text}\u201d"])
    _box(ax, xe, 2.2, we, 0.95, "encoder", 0.12,
         ["embedding W_E[ids] \u00b7 \u221aD + positions", f"x {shape('encoder', 'x', 1)}"])
    enc_lo, enc_hi = 3.05, 6.65
    _box(ax, xe, (enc_lo + enc_hi) / 2, we + 0.3, enc_hi - enc_lo, "encoder", 0.06, [""])
    ax.text(xe - we / 2 - 0.05, enc_hi - 0.24, f"encoder block \u00d7 L_enc = {c.n_encoder_layers}", ha="left",
            va="center", fontsize=PT + 0.5, fontweight="bold", color=KEY["encoder"].color)
    _box(ax, xe, 4.05, we - 0.3, 1.3, "encoder", 0.3,
         ["self-attention (source padding mask)", f"Q, K, V {shape('encoder', 'Q', 1)}",
          f"A {shape('encoder', 'A', 1)}"])
    _box(ax, xe, 5.6, we - 0.3, 0.95, "encoder", 0.3,
         ["feed-forward", f"hidden {shape('encoder', 'relu', 1)}"])
    _box(ax, xe, 7.55, we, 0.95, "encoder", 0.45,
         ["final LayerNorm \u2192 H_enc", shape("encoder", "H_enc")])
    for y0, y1 in ((1.225, 1.725), (2.675, 3.4), (4.7, 5.125), (6.075, 7.075)):
        _arrow(ax, (xe, y0), (xe, y1), "encoder")
    # ---- decoder (right) ----
    tgt_ids = [int(i) for i in batch.decoder_input_ids[0]]
    dec_text = "<bos>" + task.tokenizer.decode(tgt_ids[1:])
    _box(ax, xd, 0.75, wd, 0.95, "decoder", 0.12,
         ["decoder input ids (labels shifted right)", f"{shape('decoder', 'decoder input ids')}   "
                                                      f"e.g. \u201c{dec_text}\u201d"])
    _box(ax, xd, 2.2, wd, 0.95, "decoder", 0.12,
         ["embedding W_E[ids] \u00b7 \u221aD + positions", f"x {shape('decoder', 'x', 1)}"])
    dec_lo, dec_hi = 3.05, 9.0
    _box(ax, xd, (dec_lo + dec_hi) / 2, wd + 0.3, dec_hi - dec_lo, "decoder", 0.06, [""])
    ax.text(xd - wd / 2 - 0.05, dec_hi - 0.24, f"decoder block \u00d7 L_dec = {c.n_decoder_layers}", ha="left",
            va="center", fontsize=PT + 0.5, fontweight="bold", color=KEY["decoder"].color)
    _box(ax, xd, 4.05, wd - 0.3, 1.3, "decoder", 0.3,
         ["causal self-attention", f"Q, K, V {shape('decoder', 'Q', 1, 'causal self-attention')}",
          f"A {shape('decoder', 'A', 1, 'causal self-attention')}"])
    _box(ax, xd, 6.0, wd - 0.3, 1.65, "cross_attention", 0.3,
         ["cross-attention (source padding mask)", f"Q {shape('decoder', 'Q', 1, 'cross-attention')}",
          f"K, V {shape('decoder', 'K', 1, 'cross-attention')}",
          f"A {shape('decoder', 'A', 1, 'cross-attention')}"])
    _box(ax, xd, 7.95, wd - 0.3, 0.95, "decoder", 0.3,
         ["feed-forward", f"hidden {shape('decoder', 'relu', 1)}"])
    _box(ax, xd, 9.9, wd, 0.95, "decoder", 0.45, ["final LayerNorm \u2192 H_dec", shape("decoder", "H_dec")])
    _box(ax, xd, 11.55, wd, 1.3, "decoder", 0.7,
         ["output head: logits = H_dec W_U", f"W_U {shape('head', 'W_U')}", f"logits {shape('head', 'logits')}"])
    for y0, y1 in ((1.225, 1.725), (2.675, 3.4), (4.7, 5.175), (6.825, 7.475), (8.425, 9.425),
                   (10.375, 10.9)):
        _arrow(ax, (xd, y0), (xd, y1), "decoder")
    # ---- H_enc into every cross-attention ----
    _arrow(ax, (xe + we / 2, 7.55), (xd - (wd - 0.3) / 2, 6.0), "cross_attention", linewidth=1.8)
    ax.text(xe - we / 2, 8.3, "H_enc (B, S, D) is the input of the\nkeys and values of every decoder\n"
            "block's cross-attention \u2192", ha="left", va="bottom", fontsize=PT, color=NEUTRAL["ink"],
            linespacing=1.3)
    ax.legend(handles=[Patch(linewidth=1.1, label=KEY[m].label, **KEY[m].fill(0.3))
                       for m in ("encoder", "decoder", "cross_attention")],
              loc="upper left", bbox_to_anchor=(0.0, 1.0), frameon=False, fontsize=PT)
    letters = ", ".join(f"{k} = {v}" for k, v in d.items())
    fig.text(0.005, 0.998, f"One teacher-forced forward pass of the lesson's model on {d['B']} dates",
             ha="left", va="top", fontsize=14, fontweight="bold", color=NEUTRAL["ink"])
    fig.text(0.005, 0.962, letters, ha="left", va="top", fontsize=PT, color=NEUTRAL["ink"])
    fig.text(0.005, 0.935, "each block: a residual connection around every sub-layer, pre-LN; "
             "later blocks have the shapes of block 1", ha="left", va="top", fontsize=PT, color=NEUTRAL["ink"])
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


@register("l06_budget", lesson=6, title="Where the parameters, the FLOPs and the activation memory go, part by part")
def budget(seed: int = 0):
    """Four panels of stacked bars, one colour per part (encoder, decoder, cross-attention;
    the embeddings and the head in lighter tints of their stack's colour):

    * parameters of the lesson's model in the four embedding variants (separate, shared,
      tied, shared + tied; the formula, equal to ``num_parameters()``);
    * the same for a base-size model with a 32,000-token vocabulary, where the embeddings
      are a large share (formula only);
    * forward FLOPs (matrix products) of the lesson's model for the batch shapes of
      :data:`~minitf.course.lesson06.MEMORY_SHAPES`;
    * activation bytes (``activation_bytes`` of a live forward, float32) for the same shapes.
    """
    from matplotlib.patches import Patch

    from .draw import new_figure, slide_axes

    config = lesson6_model_config(seed=seed)
    fig = new_figure(11.0, 8.9)
    names = [v[0] for v in VARIANTS]
    left, right, width = 0.08, 0.585, 0.39
    top_row, bottom_row, height = 0.53, 0.125, 0.27
    # ---- parameters, the lesson's model ----
    ax = fig.add_axes((left, top_row, width, height))
    cols = [_parameter_segments(config.replace(share_embeddings=s, tie_output=t)) for _, s, t in VARIANTS]
    _stacked(ax, range(4), cols, 1e3, lambda v: f"{v:.1f}k")
    ax.set_xticks(range(4), names)
    ax.set_ylabel("thousands")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    ax.set_title(f"Parameters: the lesson's model\n(V = {config.tgt_vocab_size}, D = {config.d_model})",
                 fontsize=TITLE_PT)
    slide_axes(ax, PT)
    # ---- parameters, a real vocabulary ----
    large = ModelConfig(**LARGE_VOCABULARY)
    ax = fig.add_axes((right, top_row, width, height))
    cols = [_parameter_segments(large.replace(share_embeddings=s, tie_output=t)) for _, s, t in VARIANTS]
    _stacked(ax, range(4), cols, 1e6, lambda v: f"{v:.1f}M")
    ax.set_xticks(range(4), names)
    ax.set_ylabel("millions")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    ax.set_title(f"Parameters, base size (formula):\nV = {large.tgt_vocab_size:,}, D = {large.d_model}, "
                 f"{large.n_encoder_layers} + {large.n_decoder_layers} blocks", fontsize=TITLE_PT)
    slide_axes(ax, PT)
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
    ax = fig.add_axes((left, bottom_row, width, height))
    _stacked(ax, range(len(labels)), flops, 1e6, lambda v: f"{v:.0f}M")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("millions (matrix products)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    ax.set_title("Forward FLOPs as B, S, T double", fontsize=TITLE_PT)
    slide_axes(ax, PT)
    memory = []
    for row in memory_table(lesson6_model_config(seed=seed, dtype="float32", max_len=128)):
        t = row.terms
        dec = t["decoder"]
        memory.append({"encoder": sum(t["encoder"].values()),
                       "decoder (self-attention, feed-forward, norms)": sum(dec.values()) - dec["cross-attention"],
                       "cross-attention": dec["cross-attention"], "output head": t["head"]["H_dec"]})
        if sum(memory[-1].values()) != row.measured["total"]:
            raise AssertionError("the formula's terms do not add up to activation_bytes")
    ax = fig.add_axes((right, bottom_row, width, height))
    _stacked(ax, range(len(labels)), memory, 2 ** 20, lambda v: f"{v:.2f}")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("MiB (float32)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    ax.set_title("Activations kept for backward", fontsize=TITLE_PT)
    slide_axes(ax, PT)
    labels = {"output head": "output head (parameters: W_U; memory: H_dec)"}
    order = ["source embedding", "encoder", "cross-attention", "target embedding",
             "decoder (self-attention, feed-forward, norms)", "output head"]
    handles = [Patch(linewidth=0.7, label=labels.get(seg, seg), **KEY[meaning].fill(tint))
               for seg in order for meaning, tint in [_SEGMENT_STYLE[seg]]]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False, fontsize=PT,
               columnspacing=2.0)
    return fig
