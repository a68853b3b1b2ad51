"""Figures of Lesson 9, *Inference* (sections 2-5): drawing only.

What they draw is measured by :mod:`minitf.course.l09_inference` on the lesson's model
(:func:`~minitf.course.l09_inference.lesson9_run`, trained once per process and seed and cached,
shared with the notebook) or counted from a model's shapes.

===========================  ==================================================================
figure                       what it is computed from
===========================  ==================================================================
``l09_kv_caches``            a real :class:`~minitf.decoding.KVCache`, snapshotted after
                             several greedy steps of the lesson's model
                             (:func:`~minitf.course.l09_inference.kv_cache_snapshots`)
``l09_beam_tree``            ``beam_search(..., trace=True)`` on the showcase input
                             (:func:`~minitf.course.l09_inference.lesson9_showcase`): every
                             candidate of every step, kept, finished or dropped
``l09_decode_cost``          multiply-adds counted from the shapes
                             (:func:`~minitf.course.l09_inference.decoder_step_macs`) of the
                             decoding benchmark's reference model: a deterministic stand-in
                             for measured time (the notebook measures the time and draws it
                             with :func:`latency_figure`)
``l09_copy_mixture``         section 5: p_gen and the copy part of the mixture at every output
                             token of a trained pointer-generator, its weights stored
                             (:func:`~minitf.course.l09_inference.copy_coverage.stored_copy_run`,
                             :func:`~minitf.course.l09_inference.copy_coverage.copy_example`)
``l09_coverage``             section 5: the coverage vector over decoding steps, the stored
                             pointer-generators without and with coverage, on a report longer
                             than any in training
===========================  ==================================================================

This module imports matplotlib only inside the functions that draw.
"""
from __future__ import annotations

import numpy as np

from .experiments import (decoder_step_macs, first_right_example, kv_cache_snapshots, lesson9_run,
                          lesson9_showcase, once_per_example_macs)
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

__all__ = ["latency_figure", "kv_caches", "beam_tree", "decode_cost", "copy_mixture", "coverage"]

PT = 12
"""Points: the smallest text of this module's registered figures (at most 11.4 inches wide,
so at least 14 pt on a 13.3-inch slide, :func:`minitf.course.kit.figures.draw.slide_pt`)."""
TITLE_PT = 13.5


# =====================================================================================
# Drawing helpers
# =====================================================================================
def _show_token(tok: str) -> str:
    """A token as a figure cell shows it: a visible space, <eos> spelt out."""
    return {" ": "\u2423", "<eos>": "eos", "<bos>": "bos", "<pad>": "pad"}.get(tok, tok)


def _num(x: float) -> str:
    """A sum of log-probs as the figures print it: two decimals, a true minus sign."""
    return f"{x:.2f}".replace("-", "\u2212")


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
    timing, :func:`minitf.course.l09_inference.step_latency`), with the uncached / cached ratio
    above each position; drawn with the figure key under the course style (save it inside
    ``with style():`` too).  Returns a Figure."""
    from ..kit.figures.key import style

    with style():
        return _latency_figure(np.asarray(positions), np.asarray(cached_ms), np.asarray(uncached_ms), title)


def _latency_figure(positions, cached_ms, uncached_ms, title):
    from ..kit.figures.draw import new_figure

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

    from ..kit.figures.draw import new_figure

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
    # inches: four snapshots side by side, below them the shapes and the key side by side, so
    # the figure is as wide as a 16:9 slide and not taller (PT is 14 pt there)
    unit = 0.27  # one cache row
    panel_top = 0.78  # below the title and the subtitle
    panel_h = (T_cap + 0.2 + 2.5) * unit  # the rows, the "self"/"cross" heads and the step line above them
    line = PT * 1.3 / 72  # one line of the shapes
    table_top = panel_top + panel_h + 0.12
    foot = table_top + (n + 1) * line + 0.2
    fig_w, fig_h = 11.2, foot + 0.17
    fig = new_figure(fig_w, fig_h)

    def y(inches: float) -> float:  # figure fraction of a height measured from the top
        return 1.0 - inches / fig_h

    fig.text(0.01, y(0.04), "Two KV caches while decoding: one grows, one was computed before the first step",
             fontsize=TITLE_PT, fontweight="bold", va="top")
    fig.text(0.01, y(0.38), f"greedy decoding of \u201c{source}\u201d \u2192 \u201c{tok.decode(out.tokens)}\u201d; "
             f"keys K of decoder layer 1, head 1 of {model.config.n_heads}; shade = |entry|", fontsize=PT, va="top")
    gap = 3.5  # cells between the two blocks (room for the source labels)
    width = 1.0 / n
    for p, step in enumerate(shown):
        _, K_self, K_cross, self_shape, cross_shape, nbytes = snaps[step]
        t = K_self.shape[0]
        ax = fig.add_axes((p * width + 0.003, y(panel_top + panel_h), width - 0.006, panel_h / fig_h))
        ax.set_axis_off()
        ax.set_xlim(-9.6, 2 * Dh + gap + 0.3)
        ax.set_ylim(T_cap + 0.2, -2.5)
        # self-attention: rows 0..t-1 written, the rest of the buffer scratch
        ax.imshow(np.abs(K_self), cmap=dec.cmap(), vmin=0, vmax=vmax, extent=(0, Dh, t, 0), aspect="auto")
        for r in range(t, T_cap):
            ax.add_patch(Rectangle((0, r), Dh, 1, facecolor="none", edgecolor=rule, linewidth=0.8))
        ax.add_patch(Rectangle((0, 0), Dh, t, facecolor="none", edgecolor=dec.color, linewidth=1.4))
        ax.add_patch(Rectangle((0, t - 1), Dh, 1, facecolor="none", edgecolor=ink, linewidth=2.4))
        for r in range(t):  # the token fed at position r
            ax.text(-0.8, r + 0.5, _show_token(tok.id_to_token(fed[r])), ha="right", va="center",
                    fontsize=PT, fontweight="bold" if r == t - 1 else "normal")
        if p == 0:
            for r in range(T_cap):  # the position itself, once
                ax.text(-7.4, r + 0.5, str(r), ha="right", va="center", fontsize=PT, style="italic", alpha=0.6)
            ax.text(-7.4, -0.3, "t", ha="right", va="bottom", fontsize=PT, style="italic", alpha=0.6)
        # cross-attention: S rows, the same in every panel
        x0 = Dh + gap
        ax.imshow(np.abs(K_cross), cmap=cross.cmap(), vmin=0, vmax=vmax, extent=(x0, x0 + Dh, S, 0), aspect="auto")
        ax.add_patch(Rectangle((x0, 0), Dh, S, facecolor="none", edgecolor=cross.color, linewidth=1.4))
        for r in range(S):
            ax.text(x0 - 0.5, r + 0.5, _show_token(src_toks[r]), ha="right", va="center", fontsize=PT)
        ax.text(Dh / 2, -0.3, "self", ha="center", va="bottom", fontsize=PT, color=ink)
        ax.text(x0 + Dh / 2, -0.3, "cross", ha="center", va="bottom", fontsize=PT, color=ink)
        prev = _show_token(tok.id_to_token(fed[step - 1]))
        nxt = _show_token(tok.id_to_token(out.tokens[step - 1]))
        ax.text(-9.4, -1.85, f"step {step}: \u201c{prev}\u201d \u2192 \u201c{nxt}\u201d", ha="left", va="center",
                fontsize=TITLE_PT - 0.5, fontweight="bold")
    # the shapes, read from the cache's own arrays: one line per snapshot, the bytes in use after them
    rows = [f"step {step:>2}:  K_self[:, :, :{snaps[step].K_self.shape[0]}]  {tuple(snaps[step].self_shape)}"
            for step in shown]
    last = snaps[shown[-1]]
    rows.append(f"every step:  K_cross  {tuple(last.cross_shape)}")
    used = [snaps[step].nbytes["self_attention_used"] for step in shown] + [last.nbytes["cross_attention"]]
    width_rows = max(len(r) for r in rows)
    rows = [f"{r:<{width_rows}}  {b:>6,} B" for r, b in zip(rows, used)]
    fig.text(0.01, y(table_top), "\n".join(rows), ha="left", va="top", fontsize=PT, family="monospace",
             linespacing=1.3)
    fig.text(0.01, y(foot), f"this figure's buffer: T_max = {T_cap} positions, the steps this output takes; "
             "values V are cached alike; bytes in use: K and V of every layer", ha="left", va="center",
             fontsize=PT, style="italic")
    fig.legend(handles=[Patch(label="self-attention cache: a row per position so far", **dec.fill(tint=0.6)),
                        Patch(label="row written at this step", facecolor="none", edgecolor=ink, linewidth=2.4),
                        Patch(label="preallocated, not yet written", facecolor="none", edgecolor=rule, linewidth=0.8),
                        Patch(label=f"cross-attention cache: S = {S} rows, computed once", **cross.fill(tint=0.6))],
               loc="upper left", bbox_to_anchor=(0.515, y(table_top - 0.04)), ncol=1, fontsize=PT,
               handlelength=1.6, borderaxespad=0.0, labelspacing=0.45)
    return fig


# =====================================================================================
# Figure 2 (section 4): a beam-search tree from the trace
# =====================================================================================
@register("l09_beam_tree", lesson=9, title="A beam-search tree, read from the trace")
def beam_tree(seed: int = 0):
    """Every candidate beam search considered on the showcase input (:func:`lesson9_showcase`),
    drawn to be read at a distance: tokens, and only the sums that decide the result.

    Column 0 is ``<bos>``; column t holds the 2K candidates for the t-th token, best
    (highest sum of log-probs) at the top, each a live beam extended by one token.  Kept
    candidates are the live beams; a candidate ending in ``<eos>`` among the K best is
    offered to the pool of K finished hypotheses, which keeps the K best of all offered:
    those it keeps are what the search returns (thick box), those it turns away are
    discarded (dashed box); the rest are dropped.  Sums are printed under the finished
    candidates and the best live beam at the last step only.  Above, the target; the grey
    band is greedy decoding's path, the thick line beam search's best sequence.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure, token_cell

    run = lesson9_run(seed)
    sc = lesson9_showcase(seed)
    tok = run.task.tokenizer
    K = sc.num_beams
    ink, rule, paper = NEUTRAL["ink"], NEUTRAL["rule"], NEUTRAL["paper"]
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
    last = sc.trace[-1]
    returned = {h.tokens for h in last.finished}  # the pool the search ends with: what it returns
    best = set(sc.beam.tokens[:j] for j in range(len(sc.beam.tokens) + 1))  # the winning path's prefixes
    greedy_path = set(sc.greedy.tokens[:j] for j in range(len(sc.greedy.tokens) + 1))
    n_cols = max(max(col for col, _ in pos.values()), len(sc.target) + 1) + 1
    n_rows = 2 * K

    best_live = max((c for c in last.candidates if c.status == "kept"), key=lambda c: c.score, default=None)
    discarded = [c.score for prefix, _, c in nodes if c.status == "finished" and prefix not in returned]
    stops = best_live is not None and len(last.finished) >= K
    # ---- the caption says what the picture shows, in numbers: exactly the boxes drawn -------------------
    returned_text = ", ".join(f"\u201c{tok.decode(hyp.tokens)}\u201d {_num(hyp.log_prob)}" for hyp in last.finished)
    head = f"returned: the {len(last.finished)} finished hypotheses (thick, sums in bold):"
    lines = [f"{head} {returned_text}" if len(head) + len(returned_text) < 115 else f"{head}\n    {returned_text}"]
    lines.append(f"greedy decoding (grey band): \u201c{tok.decode(sc.greedy.tokens)}\u201d, sum "
                 f"{_num(sc.greedy.log_prob)}" + ("; beam search finished it too" if sc.greedy.tokens in returned
                                                else ""))
    if discarded:
        lines.append(f"dashed: ended with <eos> among the {K} best, but worse than the {K} finished, so "
                     f"discarded ({', '.join(_num(v) for v in discarded)})")
    if stops:  # best_live is not None
        worst = min(hyp.log_prob for hyp in last.finished)
        lines.append(f"last column: the best live beam ({_num(best_live.score)}) is below the worst finished "
                     f"sum ({_num(worst)}), and a sum only falls: the search stops")
    caption = "\n".join(lines)
    fig_h = 0.8 + 0.62 * (n_rows + 1.6) + 0.29 * (caption.count("\n") + 1) + 0.25 + 0.65
    fig = new_figure(11.2, fig_h)
    tree_h = 0.62 * (n_rows + 1.6) / fig_h  # the axes: target row and tree, 0.62 inch per row
    ax = fig.add_axes((0.0, 1 - 0.8 / fig_h - tree_h, 1.0, tree_h))
    ax.set_axis_off()
    y_target = -1.35
    ax.set_xlim(-1.75, n_cols + 0.75)
    ax.set_ylim(n_rows - 0.35, -1.95)
    fig.text(0.01, 1 - 0.05 / fig_h, f"Beam search (K = {K}) on \u201c{sc.source}\u201d: the best candidates, step by step",
             fontsize=TITLE_PT + 0.5, fontweight="bold", va="top")
    fig.text(0.01, 1 - 0.42 / fig_h, f"each step extends the {K} live beams and keeps the {2 * K} best candidates "
             "(top: best), ranked by their sum of log-probs", fontsize=PT, va="top")

    # edges first, so the boxes sit on top
    w, h = 0.74, 0.6
    for prefix, parent, c in nodes:
        (x1, y1), (x0, y0) = pos[prefix], pos[parent]
        if c.status == "dropped":
            kw = dict(color=rule, linestyle=":", linewidth=1.2)
        else:
            kw = dict(color=ink, linestyle="-", linewidth=3.2 if prefix in best else 1.2)
        ax.add_line(Line2D([x0 + w / 2, x1 - w / 2], [y0, y1], zorder=1, **kw))
        if prefix in greedy_path and parent in pos:  # a broad rule-grey band under greedy's own path
            ax.add_line(Line2D([x0, x1], [y0, y1], color=rule, linewidth=14, solid_capstyle="round", zorder=0))

    token_cell(ax, 0, 0.0, "bos", None, width=w, height=h, fontsize=PT)
    for prefix, parent, c in nodes:
        x, y = pos[prefix]
        label = _show_token(tok.id_to_token(c.token))
        if c.status == "dropped":
            box = token_cell(ax, x, y, label, None, width=w, height=h, fontsize=PT, alpha=0.5)
            box.set_edgecolor(rule)
            continue
        box = token_cell(ax, x, y, label, pr, width=w, height=h, fontsize=PT)
        if c.status == "finished":
            box.set_edgecolor(ink)
            box.set_linewidth(2.6)
            if prefix not in returned:  # offered to the pool, turned away: discarded
                box.set_linestyle((0, (2, 1.5)))
            ax.text(x, y + 0.36, _num(c.score), ha="center", va="top", fontsize=PT,
                    fontweight="bold" if prefix in returned else "normal")
        elif c is best_live and x == last.step + 1:  # the best live beam when the search stops
            ax.text(x + 0.45, y, _num(c.score), ha="left", va="center", fontsize=PT)

    # the target above, aligned with the columns
    target_ids = tok.encode(sc.target, add_eos=True)
    ax.text(0.35, y_target, "target", ha="right", va="center", fontsize=PT, fontweight="bold")
    for j, i in enumerate(target_ids):
        token_cell(ax, j + 1, y_target, _show_token(tok.id_to_token(i)), gt, width=w, height=h, fontsize=PT)

    fig.text(0.01, 1 - 0.8 / fig_h - tree_h - 0.05 / fig_h, caption, fontsize=PT, va="top", linespacing=1.45)

    handles = [Patch(label=gt.label, **gt.fill()),
               Patch(label="kept: a live beam", **pr.fill()),
               Patch(label="finished, returned", linewidth=2.6, **pr.fill(edgecolor=ink))]
    if discarded:
        handles.append(Patch(label="finished, discarded", linewidth=2.6, linestyle=(0, (2, 1.5)),
                             **pr.fill(edgecolor=ink)))
    handles += [Patch(label="dropped", facecolor=paper, edgecolor=rule),
                Line2D([], [], color=ink, linewidth=1.2, label="a beam extended"),
                Line2D([], [], color=rule, linestyle=":", linewidth=1.2, label="extension dropped"),
                Line2D([], [], color=ink, linewidth=3.2, label="beam search's best"),
                Patch(label="greedy's path", facecolor=rule, edgecolor=rule)]
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 0.0), ncol=4, fontsize=PT,
               handlelength=2.0, columnspacing=1.3)
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

    from matplotlib.ticker import NullLocator

    from ...bench.decode import SOURCE_LENGTH, reference_config
    from ..kit.figures.draw import new_figure, slide_axes

    config = reference_config()
    S = SOURCE_LENGTH
    ts = np.arange(0, 257)
    cached = np.array([decoder_step_macs(config, t, S, True)["total"] for t in ts])
    uncached = np.array([decoder_step_macs(config, t, S, False)["total"] for t in ts])
    once = once_per_example_macs(config, S)
    enc, dec, cross = KEY["encoder"], KEY["decoder"], KEY["cross_attention"]
    ink, rule = NEUTRAL["ink"], NEUTRAL["rule"]

    fig = new_figure(11.0, 6.0)
    fig.text(0.01, 0.99, "What one generated token costs, with and without the caches", fontsize=14,
             fontweight="bold", va="top")
    fig.text(0.01, 0.925, f"multiply-adds counted from the shapes: D {config.d_model}, H {config.n_heads}, "
             f"F {config.d_ff}, {config.n_encoder_layers} + {config.n_decoder_layers} layers, "
             f"V {config.tgt_vocab_size}, source S = {S}", fontsize=PT, va="top")

    a1 = fig.add_axes((0.085, 0.12, 0.5, 0.66))
    _cost_axes(a1, ts, cached, uncached, "multiply-adds, step at position t\n(log scale)", marker=False, log=True)
    a1.axhline(once["encoder"] + once["cross_kv"], color=enc.color, linestyle="-", linewidth=1.6)
    a1.text(256, (once["encoder"] + once["cross_kv"]) * 1.15,
            f"once per example: encoder + cross K, V = {(once['encoder'] + once['cross_kv']) / 1e6:.1f} M",
            ha="right", va="bottom", fontsize=PT, color=ink)
    for t in (16, 64, 256):
        c, u = decoder_step_macs(config, t, S, True)["total"], decoder_step_macs(config, t, S, False)["total"]
        a1.plot([t, t], [c, u], color=rule, linewidth=1.2, zorder=0)
        a1.text(t - 4 if t == 256 else t + 4, c * (u / c) ** 0.3, f"{u / c:.0f}\u00d7",
                ha="right" if t == 256 else "left", va="center", fontsize=PT + 1)
    a1.set_xlim(0, 262)
    a1.set_xticks([16, 64, 128, 192, 256])
    a1.set_xlabel("position t (tokens already generated)")
    a1.set_ylim(1e5, 1e9)
    a1.set_yticks([1e5, 1e6, 1e7, 1e8, 1e9], ["0.1 M", "1 M", "10 M", "100 M", "1000 M"])
    a1.yaxis.set_minor_locator(NullLocator())
    a1.legend(loc="upper left", fontsize=PT)
    slide_axes(a1, PT)

    # ---- right: what a cached step spends its multiply-adds on --------------------------------------
    a2 = fig.add_axes((0.72, 0.47, 0.26, 0.27))
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
        a2.text(left + 8, y, f"{m['total'] / 1e3:.0f} k", va="center", ha="left", fontsize=PT)
    a2.set_yticks([0, 1], ["t = 16", "t = 256"])
    a2.set_ylim(1.6, -0.6)
    a2.set_xlim(0, left * 1.35)
    a2.set_xticks([0, 200, 400, 600])
    a2.set_xlabel("thousand multiply-adds")
    a2.tick_params(axis="y", length=0)
    a2.spines["left"].set_visible(False)
    slide_axes(a2, PT)
    m16, m256 = decoder_step_macs(config, 16, S, True), decoder_step_macs(config, 256, S, True)
    a2.set_title("Inside a cached step", fontsize=TITLE_PT)
    fig.text(0.635, 0.105, f"Only the self-attention over the\ncache grows with t: a step at\nt = 256 costs "
             f"{m256['total'] / m16['total']:.2f}\u00d7 one at t = 16.", fontsize=PT, va="top", linespacing=1.35)
    fig.legend(handles=[Patch(label=label, linewidth=1.0, **style) for _, label, style in parts],
               loc="upper left", bbox_to_anchor=(0.63, 0.315), ncol=2, fontsize=PT, handlelength=1.4,
               columnspacing=1.2)
    return fig


# =====================================================================================
# Figures 4 and 5 (section 5): copy and coverage, on one held-out report
# =====================================================================================
def _copy_heatmap(ax, values, ex, vmax: float, row_labels, cmap):
    """values (rows, S) as a heat map over the source tokens of ``ex`` (a CopyExample)."""
    S = len(ex.source)
    ax.imshow(values, cmap=cmap, vmin=0, vmax=vmax, aspect="auto", extent=(0, S, len(row_labels), 0),
              interpolation="nearest")
    ax.set_xticks(np.arange(S) + 0.5, [_show_token(w) for w in ex.source], rotation=90, fontsize=PT)
    ax.set_yticks(np.arange(len(row_labels)) + 0.5, row_labels, fontsize=PT)
    ax.tick_params(length=0)
    ax.xaxis.tick_top()
    for spine in ax.spines.values():
        spine.set_edgecolor(NEUTRAL["rule"])


def _copy_run(variant: str, seed: int):
    """Section 5's trained pointer-generator: the stored weights for the stored seed (the model
    the notebook shows), trained here for another seed."""
    from .copy_coverage import CHECKPOINT_SEED, copy_run, stored_copy_run

    return stored_copy_run(variant) if seed == CHECKPOINT_SEED else copy_run(variant, seed)


@register("l09_copy_mixture", lesson=9,
          title="The pointer-generator's mixture on one report: p_gen per output token, and where it copied from")
def copy_mixture(seed: int = 0):
    """The copy part of the mixture, (1 - p_gen) a_t,i, for every output position t (rows)
    and source token i (columns), and p_gen per position (bars), read from the section's
    trained pointer-generator with coverage (its stored weights,
    :func:`~minitf.course.l09_inference.copy_coverage.stored_copy_run`)
    while it decodes a held-out report with unseen names
    (:func:`~minitf.course.l09_inference.copy_coverage.figure_pair`).  A box marks the source positions
    holding the token written at that step: where a copy of it comes from.  Bold output
    tokens are names outside the output vocabulary: only the copy part can write them.
    """
    from matplotlib.patches import Patch, Rectangle

    from .copy_coverage import copy_example, figure_pair
    from ..kit.figures.draw import new_figure, slide_axes

    run = _copy_run("copy+coverage", seed)
    _, pair = figure_pair(run.task)
    ex = copy_example(run, pair)
    T, S = ex.attention.shape
    cross, dec, ink = KEY["cross_attention"], KEY["decoder"], NEUTRAL["ink"]
    copy_part = (1 - ex.p_gen)[:, None] * ex.attention  # (T, S)

    fig = new_figure(11.2, 5.9)
    fig.text(0.01, 0.995, "Copy or generate? The pointer-generator on a report with unseen names",
             fontsize=TITLE_PT + 0.5, fontweight="bold", va="top")
    fig.text(0.01, 0.935, "P(w) = p_gen \u00b7 P_vocab(w) + (1 \u2212 p_gen) \u00b7 \u03a3 a_t,i over the source "
             "positions i holding w", fontsize=PT, va="top")
    ax = fig.add_axes((0.15, 0.03, 0.6, 0.66))
    _copy_heatmap(ax, copy_part, ex, 1.0, [_show_token(w) for w in ex.output], cross.cmap())
    for t, label in enumerate(ax.get_yticklabels()):
        if ex.copied_id[t]:
            label.set_fontweight("bold")
    src = np.array(ex.source)
    for t, w in enumerate(ex.output):
        for i in np.flatnonzero(src == w):  # where a copy of the written token comes from
            ax.add_patch(Rectangle((i, t), 1, 1, facecolor="none", edgecolor=ink, linewidth=1.8))
    ax.set_ylabel("output token (greedy)", fontsize=PT)
    slide_axes(ax, PT)

    bx = fig.add_axes((0.77, 0.03, 0.15, 0.66))
    bx.barh(np.arange(T) + 0.5, ex.p_gen, height=0.7, **dec.fill(tint=0.6))
    for t, p in enumerate(ex.p_gen):
        bx.text(1.03, t + 0.5, f"{p:.2f}", va="center", ha="left", fontsize=PT)
    bx.set_ylim(T, 0)
    bx.set_xlim(0, 1)
    bx.set_yticks([])
    bx.set_xticks([0, 1], ["0", "1"])
    bx.xaxis.tick_top()
    bx.set_title("p_gen", fontsize=PT, pad=24)
    slide_axes(bx, PT)
    fig.legend(handles=[Patch(label="copy part (1 \u2212 p_gen) a_t,i  (darker: more)", **cross.fill(tint=0.8)),
                        Patch(label="source token = the token written", facecolor="none", edgecolor=ink,
                              linewidth=1.8),
                        Patch(label="p_gen: the generation share", **dec.fill(tint=0.6))],
               loc="upper left", bbox_to_anchor=(0.005, 0.895), ncol=3, fontsize=PT, handlelength=1.4,
               columnspacing=1.2)
    return fig


@register("l09_coverage", lesson=9, title="Coverage over decoding steps, without and with coverage")
def coverage(seed: int = 0):
    """The coverage vector c_t over the decoding steps of a long report (the first of the
    held-out reports with :data:`~minitf.course.l09_inference.copy_coverage.LONG_EVENTS` events, more than
    any training report, and unseen names), for the pointer-generator without coverage and
    with it (its w_c c_t term and the coverage loss).  Rows: c after step t; columns: the
    source's names (the template words left out), in source order.  A name written once ends
    near 1; one never attended to stays at 0 (dropped); one read twice goes towards 2.
    """
    from .copy_coverage import LONG_EVENTS, copy_example, eval_sets, omission_rate, repetition_rate
    from ..kit.figures.draw import new_figure, slide_axes

    cross = KEY["cross_attention"]
    task = _copy_run("copy", seed).task
    pair = eval_sets(task)["long"][0]
    fig = new_figure(10.6, 5.75)
    fig.text(0.01, 0.995, "Coverage c_t: the copy attention each name has received after step t",
             fontsize=TITLE_PT + 0.5, fontweight="bold", va="top")
    fig.text(0.01, 0.94, f"a held-out report of {LONG_EVENTS} events (training: at most {task.max_events}), "
             f"unseen names; columns: its names in source order", fontsize=PT, va="top")
    vmax = 1.5
    for k, variant in enumerate(("copy", "copy+coverage")):
        ex = copy_example(_copy_run(variant, seed), pair)
        is_name = task.is_name(np.array([task.tokenizer.encode(w)[0] for w in ex.source]))
        cov = ex.coverage[1:][:, is_name]  # (T, names) after each step
        names = [w for w, n in zip(ex.source, is_name) if n]
        ax = fig.add_axes((0.075 + 0.48 * k, 0.02, 0.36, 0.63))
        im = ax.imshow(cov, cmap=cross.cmap(), vmin=0, vmax=vmax, aspect="auto", interpolation="nearest",
                       extent=(0, len(names), cov.shape[0], 0))
        ax.set_xticks(np.arange(len(names)) + 0.5, names, rotation=90, fontsize=PT)
        steps = np.arange(0, cov.shape[0], 4)
        ax.set_yticks(steps + 0.5, [str(t + 1) for t in steps], fontsize=PT)
        ax.tick_params(length=0)
        ax.xaxis.tick_top()
        ax.set_ylabel("after step t", fontsize=PT)
        slide_axes(ax, PT)
        out = [w for w in ex.output if w != "<eos>"]
        missing = round(omission_rate([out], [names]) * len(names))
        repeated = round(repetition_rate([out], [pair[1].split()], 1) * len(out))
        title = "without coverage" if variant == "copy" else "with coverage (w_c c_t and the loss)"
        fig.text(0.075 + 0.48 * k - 0.065, 0.865, f"{title}: {len(out)} tokens written\n{missing} of {len(names)} "
                 f"names missing, {repeated} token{'' if repeated == 1 else 's'} repeated beyond the target",
                 fontsize=PT, va="top",
                 linespacing=1.3)
    cax = fig.add_axes((0.93, 0.02, 0.012, 0.63))
    bar = fig.colorbar(im, cax=cax, ticks=[0, 0.5, 1, 1.5])
    bar.set_label("c (saturates at 1.5)", fontsize=PT)
    bar.ax.tick_params(labelsize=PT)
    return fig
