"""Figures of Lesson 9, *Inference* (sections 2-4): drawing only.

What they draw is measured by :mod:`minitf.course.lesson09` on the lesson's model
(:func:`~minitf.course.lesson09.lesson9_run`, trained once per process and seed and cached,
shared with the notebook) or counted from a model's shapes.

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l09_kv_caches``            a real :class:`~minitf.decoding.KVCache`, snapshotted after
                             several greedy steps of the lesson's model
                             (:func:`~minitf.course.lesson09.kv_cache_snapshots`)
``l09_beam_tree``            ``beam_search(..., trace=True)`` on the showcase input
                             (:func:`~minitf.course.lesson09.lesson9_showcase`): every
                             candidate of every step, kept, finished or dropped
``l09_decode_cost``          multiply-adds counted from the shapes
                             (:func:`~minitf.course.lesson09.decoder_step_macs`) of the
                             decoding benchmark's reference model: a deterministic stand-in
                             for measured time (the notebook measures the time and draws it
                             with :func:`latency_figure`)
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from ..course.lesson09 import (decoder_step_macs, first_right_example, kv_cache_snapshots, lesson9_run,
                               lesson9_showcase, once_per_example_macs)
from .key import KEY, NEUTRAL
from .registry import register

__all__ = ["latency_figure", "kv_caches", "beam_tree", "decode_cost"]


# =====================================================================================
# Drawing helpers
# =====================================================================================
def _show_token(tok: str) -> str:
    """A token as a figure cell shows it: a visible space, <eos> spelt out."""
    return {" ": "\u2423", "<eos>": "eos", "<bos>": "bos", "<pad>": "pad"}.get(tok, tok)


def _cost_axes(ax, x, cached, uncached, ylabel: str, marker: bool, log: bool):
    """Cached vs uncached per-token cost against length, on ``ax``."""
    dec = KEY["decoder"]
    kw = {} if marker else {"marker": None}
    ax.plot(x, uncached, color=NEUTRAL["ink"], linestyle=":", linewidth=2.0,
            marker="x" if marker else None, markersize=6,
            label="without cache: the whole prefix again")
    ax.plot(x, cached, label="with both caches: the newest token only", **dec.line(**kw))
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", axis="y")


def latency_figure(positions, cached_ms, uncached_ms, title: str | None = None):
    """Measured time of one decoder step at position t, cached vs uncached (the notebook's
    timing, :func:`minitf.course.lesson09.step_latency`), with the uncached / cached ratio
    above each position; drawn with the figure key under the course style (save it inside
    ``with style():`` too).  Returns a Figure."""
    from .key import style

    with style():
        return _latency_figure(np.asarray(positions), np.asarray(cached_ms), np.asarray(uncached_ms), title)


def _latency_figure(positions, cached_ms, uncached_ms, title):
    from .draw import new_figure

    fig = new_figure(6.4, 3.6)
    ax = fig.add_axes((0.12, 0.16, 0.84, 0.72))
    _cost_axes(ax, positions, cached_ms, uncached_ms, "ms per decoder step (median)", marker=True, log=False)
    hi = max(cached_ms.max(), uncached_ms.max())
    for t, c, u in zip(positions, cached_ms, uncached_ms):
        ax.text(t, max(u, c) + 0.04 * hi, f"{u / c:.1f}\u00d7", ha="center", va="bottom", fontsize=8.5)
    ax.set_xticks(positions, [str(int(t)) for t in positions])
    ax.set_xlim(0, positions.max() * 1.06)
    ax.set_xlabel("position t (tokens already generated)")
    ax.set_ylim(0, hi * 1.35)
    ax.legend(loc="upper left", fontsize=8.5)
    ax.set_title(title or "Measured: one decoder step at position t (uncached / cached above each)", fontsize=10)
    return fig


# =====================================================================================
# Figure 1 (section 2): the two caches over decoding steps
# =====================================================================================
@register("l09_kv_caches", lesson=9,
          title="Two KV caches: self-attention grows by one row per step, cross-attention is computed once")
def kv_caches(seed: int = 0):
    """Snapshots of a real KVCache while the lesson's model decodes greedily.

    For a few steps: the self-attention keys of layer 1, head 1 (positions 0..t, one new
    row per step; the rest of the preallocated buffer not yet written) next to the
    cross-attention keys of the same layer and head (S rows, computed once from H_enc by
    ``start_decoding`` and never touched again).  Cell shade: |entry|, on one scale for
    every snapshot, so a row that does not change looks the same in every panel.
    """
    from matplotlib.patches import Patch, Rectangle

    from .draw import new_figure

    run = lesson9_run(seed)
    model, task = run.model, run.task
    tok = task.tokenizer
    i = first_right_example(run)
    source = run.eval_pairs[i][0]
    src = task.batch([run.eval_pairs[i]]).input_ids  # (1, S)
    out, fed, T_cap, snaps = kv_cache_snapshots(run, i, steps=(1, 2, 3), last=True)
    shown = sorted(snaps)  # the steps snapshotted
    S = src.shape[1]
    Dh = model.config.d_head
    vmax = max(max(np.abs(s.K_self).max(), np.abs(s.K_cross).max()) for s in snaps.values())
    dec, cross, ink, rule = KEY["decoder"], KEY["cross_attention"], NEUTRAL["ink"], NEUTRAL["rule"]
    src_toks = [tok.id_to_token(j) for j in src[0]]

    n = len(shown)
    fig = new_figure(12.4, 6.4)
    fig.text(0.01, 0.985, "Two KV caches while decoding: one grows, one was computed before the first step",
             fontsize=12, fontweight="bold", va="top")
    fig.text(0.01, 0.935, f"lesson model, greedy decoding of \u201c{source}\u201d \u2192 "
             f"\u201c{tok.decode(out.tokens)}\u201d;  keys K of decoder layer 1, head 1 of {model.config.n_heads} "
             "(values V are cached alike);  shade = |entry|", fontsize=8.5, style="italic", va="top")
    gap = 7.0  # cells between the two blocks (room for the source labels)
    width = 1.0 / n
    for p, step in enumerate(shown):
        _, K_self, K_cross, self_shape, cross_shape, nbytes = snaps[step]
        t = K_self.shape[0]
        ax = fig.add_axes((p * width + 0.02, 0.25, width - 0.03, 0.655))
        ax.set_axis_off()
        ax.set_xlim(-7.5, 2 * Dh + gap + 1.0)
        ax.set_ylim(T_cap + 0.3, -2.6)
        # self-attention: rows 0..t-1 written, the rest of the buffer scratch
        ax.imshow(np.abs(K_self), cmap=dec.cmap(), vmin=0, vmax=vmax, extent=(0, Dh, t, 0), aspect="auto")
        for r in range(t, T_cap):
            ax.add_patch(Rectangle((0, r), Dh, 1, facecolor="none", edgecolor=rule, linewidth=0.8))
        ax.add_patch(Rectangle((0, 0), Dh, t, facecolor="none", edgecolor=dec.color, linewidth=1.2))
        ax.add_patch(Rectangle((0, t - 1), Dh, 1, facecolor="none", edgecolor=ink, linewidth=2.0))
        for r in range(t):  # the token fed at position r
            ax.text(-0.8, r + 0.5, _show_token(tok.id_to_token(fed[r])), ha="right", va="center",
                    fontsize=8, fontweight="bold" if r == t - 1 else "normal")
        for r in range(T_cap):  # the position itself
            ax.text(-5.6, r + 0.5, str(r), ha="right", va="center", fontsize=6.5, style="italic", alpha=0.6)
        # cross-attention: S rows, the same in every panel
        x0 = Dh + gap
        ax.imshow(np.abs(K_cross), cmap=cross.cmap(), vmin=0, vmax=vmax, extent=(x0, x0 + Dh, S, 0), aspect="auto")
        ax.add_patch(Rectangle((x0, 0), Dh, S, facecolor="none", edgecolor=cross.color, linewidth=1.2))
        for r in range(S):
            ax.text(x0 - 0.6, r + 0.5, _show_token(src_toks[r]), ha="right", va="center", fontsize=8)
        ax.text(-5.6, -0.45, "t", ha="right", va="bottom", fontsize=7, style="italic", alpha=0.6)
        ax.text(Dh / 2, -0.45, "self-attn K", ha="center", va="bottom", fontsize=8.5, color=ink)
        ax.text(x0 + Dh / 2, -0.45, "cross-attn K", ha="center", va="bottom", fontsize=8.5, color=ink)
        ax.text(x0 + Dh / 2, S + 0.35, "source x", ha="center", va="top", fontsize=7.5, style="italic")
        prev = _show_token(tok.id_to_token(fed[step - 1]))
        nxt = _show_token(tok.id_to_token(out.tokens[step - 1]))
        ax.text(-7.3, -1.9, f"step {step}: fed \u201c{prev}\u201d, predicts \u201c{nxt}\u201d", ha="left",
                va="center", fontsize=10, fontweight="bold")
        # the shapes, read from the cache's own arrays
        fig.text(p * width + 0.03, 0.235,
                 f"K_self[:, :, :{t}]  {tuple(self_shape)}\nK_cross  {tuple(cross_shape)}\n"
                 f"in use: self {nbytes['self_attention_used']:,} B, cross {nbytes['cross_attention']:,} B",
                 ha="left", va="top", fontsize=7.8, family="monospace", linespacing=1.4)
    fig.legend(handles=[Patch(label="self-attention cache: one row per decoder position so far (one more each step)",
                              **dec.fill(tint=0.6)),
                        Patch(label="row written at this step", facecolor="none", edgecolor=ink, linewidth=2.0),
                        Patch(label="preallocated, not yet written", facecolor="none", edgecolor=rule, linewidth=0.8),
                        Patch(label=f"cross-attention cache: K of H_enc, S = {S} source rows, computed once",
                              **cross.fill(tint=0.6))],
               loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8.5, handlelength=1.6,
               columnspacing=2.0)
    fig.text(0.5, 0.125, f"buffer capacity T_max = {T_cap} positions (the steps this output takes); V_self and "
             "V_cross have the same shapes as K_self and K_cross", ha="center", va="center", fontsize=7.5,
             style="italic")
    return fig


# =====================================================================================
# Figure 2 (section 4): a beam-search tree from the trace
# =====================================================================================
@register("l09_beam_tree", lesson=9, title="A beam-search tree, read from the trace")
def beam_tree(seed: int = 0):
    """Every candidate beam search considered on the showcase input (:func:`lesson9_showcase`).

    Column 0 is ``<bos>``; column t holds the 2K candidates for the t-th token, best
    (highest sum of log-probs) at the top, each a live beam extended by one token.  Kept candidates become the next
    step's beams; candidates ending in ``<eos>`` among the K best become finished
    hypotheses; the rest are dropped.  Under each node, the sum of log-probs of its
    sequence.  Above, the target; below, greedy decoding's output with its token log-probs.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .draw import new_figure, token_cell

    run = lesson9_run(seed)
    sc = lesson9_showcase(seed)
    tok = run.task.tokenizer
    K = sc.num_beams
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]
    pr, gt = KEY["predicted"], KEY["ground_truth"]

    # ---- lay the trace out: node = the token tuple it ends; column = step + 1 -------------------
    pos = {(): (0, 0.0)}  # prefix -> (column, row)
    nodes = []  # (prefix, parent prefix, candidate)
    for s in sc.trace:
        rows = dict(zip(s.beam_rows, s.beams))  # beam row -> its tokens
        for r, c in enumerate(s.candidates):
            parent = rows[c.beam]
            prefix = parent + (c.token,)
            pos[prefix] = (s.step + 1, float(r))
            nodes.append((prefix, parent, c))
    best = set(sc.beam.tokens[:j] for j in range(len(sc.beam.tokens) + 1))  # the winning path's prefixes
    n_cols = max(max(col for col, _ in pos.values()), len(sc.greedy.tokens), len(sc.target) + 1) + 1
    greedy_path = set(sc.greedy.tokens[:j] for j in range(len(sc.greedy.tokens) + 1))
    n_rows = 2 * K

    fig = new_figure(max(9.0, 0.62 * n_cols + 2.6), 2.35 + 0.62 * n_rows + 2.0)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    y_target, y_greedy = -1.25, n_rows + 0.55
    ax.set_xlim(-2.7, n_cols + 0.2)
    ax.set_ylim(n_rows + 3.05, -3.15)
    ax.text(-2.6, -2.7, f"Beam search (K = {K}) on \u201c{sc.source}\u201d: every candidate, step by step",
            fontsize=12, fontweight="bold", va="center")
    ax.text(-2.6, -2.2, "length_penalty 0: sequences ranked by their sum of log-probs (printed under each node); "
            f"each step keeps the {2 * K} best extensions of the {K} beams", fontsize=8.5, style="italic",
            va="center")

    # edges first, so the boxes sit on top
    for prefix, parent, c in nodes:
        (x1, y1), (x0, y0) = pos[prefix], pos[parent]
        on_best = prefix in best
        if c.status == "dropped":
            kw = dict(color=rule, linestyle=":", linewidth=1.0)
        else:
            kw = dict(color=ink, linestyle="-", linewidth=2.6 if on_best else 1.1)
        ax.add_line(Line2D([x0 + 0.3, x1 - 0.3], [y0, y1], zorder=1, **kw))
        if prefix in greedy_path:  # a broad rule-grey band under greedy's own path
            ax.add_line(Line2D([x0, x1], [y0, y1], color=rule, linewidth=9, solid_capstyle="round", zorder=0))

    token_cell(ax, 0, 0.0, "bos", None, width=0.62, height=0.5, fontsize=8)
    ax.text(0, 0.42, "0.00", ha="center", va="top", fontsize=7)
    for prefix, parent, c in nodes:
        x, y = pos[prefix]
        label = _show_token(tok.id_to_token(c.token))
        if c.status == "dropped":
            box = token_cell(ax, x, y, label, None, width=0.62, height=0.5, fontsize=8, alpha=0.55)
            box.set_edgecolor(rule)
        else:
            box = token_cell(ax, x, y, label, pr, width=0.62, height=0.5, fontsize=8)
            if c.status == "finished":
                box.set_edgecolor(ink)
                box.set_linewidth(2.2)
        ax.text(x, y + 0.42, f"{c.score:.2f}", ha="center", va="top", fontsize=7,
                alpha=0.55 if c.status == "dropped" else 1.0,
                fontweight="bold" if prefix in best and c.status != "dropped" else "normal")

    # the target above, greedy's output below, aligned with the columns
    target_ids = tok.encode(sc.target, add_eos=True)
    ax.text(-0.55, y_target, "target y", ha="right", va="center", fontsize=9, fontweight="bold")
    for j, i in enumerate(target_ids):
        token_cell(ax, j + 1, y_target, _show_token(tok.id_to_token(i)), gt, width=0.62, height=0.5, fontsize=8)
    ax.text(-0.55, y_greedy - 0.08, "greedy", ha="right", va="center", fontsize=9, fontweight="bold")
    ax.text(-0.55, y_greedy + 0.3, "log p per token", ha="right", va="center", fontsize=7.5, style="italic")
    for j, (i, lp) in enumerate(zip(sc.greedy.tokens, sc.greedy_token_log_probs)):
        token_cell(ax, j + 1, y_greedy, _show_token(tok.id_to_token(i)), pr, width=0.62, height=0.5, fontsize=8)
        ax.text(j + 1, y_greedy + 0.42, f"{lp:.2f}", ha="center", va="top", fontsize=7)
    ax.text(-2.6, y_greedy + 1.25,
            f"greedy: \u201c{tok.decode(sc.greedy.tokens)}\u201d, sum of log-probs {sc.greedy.log_prob:.2f}     "
            f"beam search: \u201c{tok.decode(sc.beam.tokens)}\u201d, sum {sc.beam.log_prob:.2f} "
            f"(its path drawn thick)", fontsize=9, va="center")
    last = sc.trace[-1]
    live = [c.score for c in last.candidates if c.status == "kept"]
    if len(last.finished) >= K and live:
        ax.text(-2.6, y_greedy + 1.7, f"The search stops after step {last.step + 1}: its {K} finished "
                f"hypotheses ({', '.join(f'{h.score:.2f}' for h in last.finished)}) beat the best live beam "
                f"({max(live):.2f}).", ha="left", va="center", fontsize=8.5, style="italic")

    ax.legend(handles=[Patch(label=gt.label, **gt.fill()),
                       Patch(label="kept: a beam of the next step", **pr.fill()),
                       Patch(label="finished: ended with <eos>", linewidth=2.2, **pr.fill(edgecolor=ink)),
                       Patch(label="dropped (pruned)", facecolor=NEUTRAL["paper"], edgecolor=rule),
                       Line2D([], [], color=ink, linewidth=2.6, label="beam search's best sequence"),
                       Line2D([], [], color=rule, linewidth=9, label="greedy's path")],
              loc="lower left", bbox_to_anchor=(0.0, 0.0), ncol=6, fontsize=8.5, handlelength=1.6,
              columnspacing=1.6)
    return fig


# =====================================================================================
# Figure 3 (section 2): per-token cost, cached vs uncached, against length
# =====================================================================================
@register("l09_decode_cost", lesson=9, title="Per-token cost of decoding, with and without the caches")
def decode_cost(seed: int = 0):
    """Multiply-adds per generated token, counted from the shapes (:func:`decoder_step_macs`).

    The decoding benchmark's reference model (``minitf.bench.decode.reference_config``:
    D 128, H 4, F 512, 2 + 2 layers, V 64) with a 32-token source.  Left: the cost of the
    step at position t with both caches and without.  Right: what a cached step spends
    its multiply-adds on at t = 16 and t = 256.  Counted rather than timed, so the figure
    is the same on every machine; the notebook measures the time.  ``seed`` is accepted
    for the registry's signature; nothing here is random.
    """
    from matplotlib.patches import Patch

    from ..bench.decode import SOURCE_LENGTH, reference_config
    from .draw import new_figure

    config = reference_config()
    S = SOURCE_LENGTH
    ts = np.arange(0, 257)
    cached = np.array([decoder_step_macs(config, t, S, True)["total"] for t in ts])
    uncached = np.array([decoder_step_macs(config, t, S, False)["total"] for t in ts])
    once = once_per_example_macs(config, S)
    enc, dec, cross = KEY["encoder"], KEY["decoder"], KEY["cross_attention"]
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]

    fig = new_figure(11.6, 4.7)
    fig.text(0.01, 0.985, "What one generated token costs, with and without the caches", fontsize=12,
             fontweight="bold", va="top")
    fig.text(0.01, 0.925, f"multiply-adds of the matrix products, counted from the shapes (deterministic, unlike a "
             f"timing): D {config.d_model}, H {config.n_heads}, F {config.d_ff}, {config.n_encoder_layers} + "
             f"{config.n_decoder_layers} layers, V {config.tgt_vocab_size}, source S = {S}",
             fontsize=8.5, style="italic", va="top")

    a1 = fig.add_axes((0.07, 0.13, 0.50, 0.68))
    _cost_axes(a1, ts, cached, uncached, "multiply-adds for the step at position t", marker=False, log=True)
    a1.axhline(once["encoder"] + once["cross_kv"], color=enc.color, linestyle="-", linewidth=1.4)
    a1.text(256, (once["encoder"] + once["cross_kv"]) * 1.12,
            f"once per example: encoder + cross-attention K, V = {(once['encoder'] + once['cross_kv']) / 1e6:.1f} M",
            ha="right", va="bottom", fontsize=8.5, color=ink)
    for t in (16, 64, 256):
        c, u = decoder_step_macs(config, t, S, True)["total"], decoder_step_macs(config, t, S, False)["total"]
        a1.plot([t, t], [c, u], color=rule, linewidth=1.0, zorder=0)
        a1.text(t - 3 if t == 256 else t + 3, c * (u / c) ** 0.3, f"{u / c:.0f}\u00d7",
                ha="right" if t == 256 else "left", va="center", fontsize=9)
    a1.set_xlim(0, 262)
    a1.set_xticks([0, 16, 64, 128, 192, 256])
    a1.set_xlabel("position t (tokens already generated)")
    a1.set_ylim(cached.min() / 3, uncached.max() * 6)
    a1.legend(loc="upper left", fontsize=8.5)

    # ---- right: what a cached step spends its multiply-adds on --------------------------------------
    a2 = fig.add_axes((0.69, 0.40, 0.29, 0.38))
    parts = [("self_attention", "self-attention", dec.fill(tint=0.6)),
             ("cross_attention", "cross-attention", cross.fill(tint=0.6)),
             ("feed_forward", "feed-forward", {"facecolor": rule, "edgecolor": ink}),
             ("head", "head W_U", {"facecolor": NEUTRAL["paper"], "edgecolor": ink})]
    for y, t in enumerate((16, 256)):
        m = decoder_step_macs(config, t, S, True)
        left = 0.0
        for key, _, style in parts:
            a2.barh(y, m[key] / 1e3, left=left, height=0.55, linewidth=1.0, **style)
            left += m[key] / 1e3
        a2.text(left + 4, y, f"{m['total'] / 1e3:.0f} k", va="center", ha="left", fontsize=9)
    a2.set_yticks([0, 1], ["t = 16", "t = 256"])
    a2.set_ylim(1.6, -0.6)
    a2.set_xlim(0, left * 1.25)
    a2.set_xlabel("thousand multiply-adds, one cached step")
    a2.tick_params(axis="y", length=0)
    a2.spines["left"].set_visible(False)
    m16, m256 = decoder_step_macs(config, 16, S, True), decoder_step_macs(config, 256, S, True)
    a2.set_title("Inside a cached step", fontsize=10.5)
    fig.text(0.69, 0.105, f"Only the self-attention over the cache grows with t:\na step at t = 256 costs "
             f"{m256['total'] / m16['total']:.2f}\u00d7 one at t = 16.", fontsize=8.5, va="top")
    fig.legend(handles=[Patch(label=label, linewidth=1.0, **style) for _, label, style in parts],
               loc="upper left", bbox_to_anchor=(0.685, 0.26), ncol=2, fontsize=8.5, handlelength=1.4)
    return fig
