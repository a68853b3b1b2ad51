"""Figures of Lesson 10, *Fine-tuning on supervised pairs*: drawing only.

Both figures read Lesson 10's stored sweep (:func:`minitf.course.l10_finetuning.load_results`,
``minitf/course/l10_finetuning/results/sweep.json``, written by ``python -m minitf.course.l10_finetuning``),
so they are deterministic and cost no training:

* ``l10_sample_efficiency`` (section 2): free-running exact match against the number of
  supervised pairs, fine-tuned from the pretrained checkpoint, with its encoder frozen, and
  trained from scratch; mean over the seeds, the band from the lowest to the highest seed;
* ``l10_tf_loss_vs_free_running`` (section 4): one fine-tuning run's teacher-forced validation
  loss and free-running exact match at each evaluation, and the checkpoint early stopping on
  each would keep; both axes start at 0.

Every number drawn is a free-running one or a teacher-forced one, so lines take the key's
``free_running`` and ``teacher_forced`` colours; what differs between the curves of the first
figure (where the weights started) is told by line style and marker, and by a label on the line.
"""
from __future__ import annotations

import numpy as np

from . import experiments as l10
from ..kit.figures.key import KEY, NEUTRAL
from ..kit.figures.registry import register

PT = 12.5
"""Points: the smallest text (figures at most 11.8 inches wide, so at least 14 pt on a 13.3-inch slide)."""
TITLE_PT = 14.5


@register("l10_sample_efficiency", lesson=10, title="What pretraining buys: quality against the number of pairs")
def sample_efficiency(seed: int = 0):
    """Free-running exact match (greedy, 256 held-out pairs) after fine-tuning on n pairs, for
    n in :data:`~minitf.course.l10_finetuning.N_PAIRS`: from the pretrained checkpoint (all weights
    updated, or the encoder frozen) and from scratch.  Points are the mean over the stored
    seeds, the shaded band spans the lowest to the highest seed.  ``seed`` is accepted for
    the registry's signature; the figure draws every stored seed."""
    from ..kit.figures.draw import new_figure, slide_axes

    table = l10.summary()
    fr, ink, paper = KEY["free_running"], NEUTRAL["ink"], NEUTRAL["paper"]
    # every curve is a free-running measurement: the pretrained ones in the key's free-running style
    # (filled markers: all weights; hollow: encoder frozen), the one from scratch in neutral ink,
    # dotted, with a marker the key gives no meaning
    variants = [("bart", "pretrained, all weights", fr.line()),
                ("frozen", "pretrained, encoder frozen", fr.line(markerfacecolor=paper)),
                ("scratch", "from scratch", {"color": ink, "linestyle": ":", "marker": "X",
                                             "markerfacecolor": paper, "markeredgecolor": ink})]
    offsets = {"bart": 9, "frozen": -9, "scratch": 0}  # points: keep the two pretrained labels apart
    fig = new_figure(11.0, 5.6)
    ax = fig.add_axes((0.085, 0.13, 0.56, 0.72))
    n_seeds = 0
    for name, label, kw in variants:
        ns = [n for n in l10.N_PAIRS if (name, n) in table]
        if not ns:
            continue
        mean = np.array([table[(name, n)][0] for n in ns]) * 100
        lo = np.array([table[(name, n)][1] for n in ns]) * 100
        hi = np.array([table[(name, n)][2] for n in ns]) * 100
        n_seeds = max(n_seeds, max(table[(name, n)][3] for n in ns))
        ax.fill_between(ns, lo, hi, color=kw["color"], alpha=0.18, linewidth=0)
        ax.plot(ns, mean, linewidth=2.4, markersize=9, markeredgewidth=1.8, label=label, **kw)
        ax.annotate(f"{mean[-1]:.0f}%  {label}", (ns[-1], mean[-1]), xytext=(14, offsets[name]),
                    textcoords="offset points", va="center", fontsize=PT, color=ink, annotation_clip=False)
        ax.annotate(f"{mean[0]:.0f}%", (ns[0], mean[0]), xytext=(-12, offsets[name]), textcoords="offset points",
                    va="center", ha="right", fontsize=PT, color=ink, annotation_clip=False)
    ax.set_xscale("log")
    ax.set_xticks(list(l10.N_PAIRS))
    ax.set_xticklabels([str(n) for n in l10.N_PAIRS])
    ax.minorticks_off()
    ax.set_xlim(l10.N_PAIRS[0] / 1.6, l10.N_PAIRS[-1] * 1.15)
    ax.set_ylim(0, 100)
    ax.set_xlabel("supervised pairs fine-tuned on (log scale)")
    ax.set_ylabel("free-running exact match (%)")
    ax.grid(True, axis="y")
    slide_axes(ax, PT)
    fig.text(0.01, 0.985, "What pretraining buys: the same model, the same steps, fewer pairs needed",
             fontsize=TITLE_PT, fontweight="bold", va="top")
    fig.text(0.01, 0.925, f"tense task, {l10.STEPS} fine-tuning steps; mean of {n_seeds} seeds, "
             "band: lowest to highest seed", fontsize=PT, va="top")
    return fig


@register("l10_tf_loss_vs_free_running", lesson=10,
          title="Teacher-forced validation loss against free-running quality, over fine-tuning")
def tf_loss_vs_free_running(seed: int = 0):
    """The pretrained model fine-tuned on 100 pairs (stored run of ``seed``): left, the
    teacher-forced loss on the held-out pairs; right, the free-running exact match on the
    same pairs; at each evaluation.  A vertical line marks the evaluation early stopping would
    keep on each number (the loss's minimum, the exact match's maximum), on both panels."""
    from ..kit.figures.draw import new_figure, slide_axes

    h = l10.history(seed=seed)
    picks = l10.early_stopping_picks(h)
    tf, fr, ink = KEY["teacher_forced"], KEY["free_running"], NEUTRAL["ink"]
    steps = h["step"]
    fig = new_figure(11.0, 5.4)
    panels = [(fig.add_axes((0.075, 0.13, 0.39, 0.62)), h["teacher_forced_loss"], tf,
               "teacher-forced validation loss", "teacher_forced_loss"),
              (fig.add_axes((0.59, 0.13, 0.39, 0.62)), 100 * h["free_running_exact_match"], fr,
               "free-running exact match (%)", "exact_match")]
    # the two stopping points: dotted (on the loss, a style the key leaves free), dash-dot (on the
    # free-running exact match, the key's free-running style); the key's dashes are the gradient's
    pick_style = {"teacher_forced_loss": (tf, ":", "min loss"), "exact_match": (fr, "-.", "max exact match")}
    for ax, y, meaning, ylabel, _ in panels:
        ax.plot(steps, y, linewidth=2.4, markersize=7, **meaning.line())
        for which, (m, ls, text) in pick_style.items():
            s = picks[which]["step"]
            ax.axvline(s, color=m.color, linestyle=ls, linewidth=2.0)
        ax.set_xlabel("fine-tuning step")
        ax.set_ylabel(ylabel)
        ax.set_xlim(0, steps[-1] + 5)
        ax.grid(True, axis="y")
        slide_axes(ax, PT)
    panels[1][0].set_ylim(0, 100)
    # both axes start at 0: a loss axis cut to its own range would blow a rise of a few
    # hundredths up to the height of the exact-match panel's 0-100 %
    panels[0][0].set_ylim(0, 1.15 * h["teacher_forced_loss"].max())
    for ax, _, _, _, which in panels:
        p = picks[which]
        value = f"{p['teacher_forced_loss']:.3f}" if which == "teacher_forced_loss" else f"{100 * p['exact_match']:.1f}%"
        y = p["teacher_forced_loss"] if which == "teacher_forced_loss" else 100 * p["exact_match"]
        ax.annotate(f"{'min' if which == 'teacher_forced_loss' else 'max'}: {value}\nat step {p['step']}",
                    (p["step"], y), xytext=(30, 22 if which == "exact_match" else -70), textcoords="offset points",
                    fontsize=PT, color=ink, arrowprops={"arrowstyle": "-", "color": ink, "linewidth": 1.0})
    lo, em = picks["teacher_forced_loss"], picks["exact_match"]
    n = l10.EVAL_SIZE
    apart = round((em["exact_match"] - lo["exact_match"]) * n)
    fig.text(0.01, 0.985, "Early stopping on the loss or on the output: checkpoints "
             + (f"{apart} sentence{'' if apart == 1 else 's'} of {n} apart" if apart else "the same"),
             fontsize=TITLE_PT, fontweight="bold", va="top")
    em_sentences = np.rint(h["free_running_exact_match"] * n)
    ties = int((em_sentences == em_sentences.max()).sum())
    fig.text(0.01, 0.925, f"pretrained, {l10.N_PAIRS[0]} pairs, seed {seed}; dotted: stop on the loss (step "
             f"{lo['step']}, exact match {100 * lo['exact_match']:.1f}%);\ndash-dot: stop on exact match (step "
             f"{em['step']}, {100 * em['exact_match']:.1f}%"
             + (f", the first of {ties} evaluations tied at the maximum)" if ties > 1 else ")"),
             fontsize=PT, va="top", linespacing=1.3)
    return fig
