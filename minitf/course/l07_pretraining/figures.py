"""Figures of Lesson 7, *Pretraining objectives*: drawing only.

Every token drawn comes out of :mod:`minitf.data.noise` run on the corpus, through
:mod:`minitf.course.l07_pretraining`:

* ``l07_corruption`` (sections 1-2): one corpus sentence, T5's span corruption and BART's
  default noise side by side (:func:`~minitf.course.l07_pretraining.corruption_example`);
* ``l07_bart_noises`` (section 3): the five noises, each alone on one short document
  (:func:`~minitf.course.l07_pretraining.bart_noise_examples`);
* ``l07_loss_curves`` (section 4): the tiny model's denoising loss on each objective, in a panel
  of its own (the stored runs of every seed, :mod:`~minitf.course.l07_pretraining.pretraining_runs`,
  so the figure trains nothing and draws the same numbers on every machine), and what one
  training step computes (:func:`~minitf.course.l07_pretraining.step_cost`).

Colours, from the key: a token the encoder reads is in the encoder's tint, a token the
decoder must write in the ground-truth tint, and whatever stands for hidden text (a noise
token, a sentinel, ``<mask>``) is a masked position.
"""
from __future__ import annotations

import numpy as np

from .experiments import bart_noise_examples, corruption_example, step_cost
from ...data.corpus import OBJECTIVES
from ..kit.figures.key import KEY
from ..kit.figures.registry import register

PT = 14.0
"""Points: the smallest text (figures at most 13.3 inches wide: at least 14 pt on a slide)."""
TITLE_PT = 15.0
CHAR_IN = 0.118
"""Inches per character of a token at :data:`PT` (a little more than the font's average advance)."""


def _is_hidden(token: str) -> bool:
    return token == "<mask>" or token.startswith("<extra_id_")


def _token_row(ax, x0: float, y: float, tokens, meaning, hidden=None, fontsize: float = PT) -> float:
    """Tokens as boxes sized to their text, left to right from ``x0`` at height ``y`` (axes in
    inches); ``hidden`` (a bool per token, default: the sentinels and ``<mask>``) are drawn as
    masked positions, the rest in ``meaning``'s tint.  Returns the x where the row ends."""
    from ..kit.figures.draw import token_cell

    hidden = [_is_hidden(t) for t in tokens] if hidden is None else hidden
    x = x0
    for tok, h in zip(tokens, hidden):
        w = CHAR_IN * max(len(tok), 2) + 0.26
        token_cell(ax, x + w / 2, y, tok, KEY["masked"] if h else meaning, width=w, height=0.5, fontsize=fontsize)
        x += w + 0.04
    return x


def _inch_axes(fig, width: float, height: float):
    """One axes over the whole figure, in inches (x right, y up)."""
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    return ax


def _legend(fig, y: float):
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(label="read by the encoder", **KEY["encoder"].fill()),
                        Patch(label="written by the decoder (target)", **KEY["ground_truth"].fill()),
                        Patch(label="hidden text: noise, sentinel, <mask>", **KEY["masked"].fill())],
               loc="lower left", bbox_to_anchor=(0.0, y), ncol=3, fontsize=PT, handlelength=1.6,
               columnspacing=1.2, frameon=False)


# ---- sections 1-2: one sentence, corrupted both ways ---------------------------------------------------
@register("l07_corruption", lesson=7, title="T5 span corruption and BART text infilling on one sentence")
def corruption(seed: int = 0):
    """One corpus sentence; T5's noise mask over it, the T5 input (a sentinel per noise span)
    and target (each sentinel, then the span it hides); BART's input (text infilling and
    sentence permutation) and target (the whole sentence)."""
    ex = corruption_example(seed)
    W, H = 12.6, 6.7
    from ..kit.figures.draw import new_figure

    fig = new_figure(W, H)
    ax = _inch_axes(fig, W, H)
    fig.text(0.005, 0.99, "Two ways to corrupt a sentence and ask for it back", fontsize=TITLE_PT,
             fontweight="bold", va="top")
    rows = [
        ("the sentence, T5's noise spans marked", ex.words, KEY["encoder"], list(ex.noise_mask)),
        ("T5 input: each noise span becomes one sentinel", ex.t5_input, KEY["encoder"], None),
        ("T5 target: each sentinel, then the words it hides (short)", ex.t5_target, KEY["ground_truth"], None),
        ("BART input: text infilling, each span becomes one <mask>", ex.bart_input, KEY["encoder"], None),
        ("BART target: the whole sentence", ex.words, KEY["ground_truth"], [False] * len(ex.words)),
    ]
    y = H - 0.95
    for label, tokens, meaning, hidden in rows:
        ax.text(0.1, y + 0.42, label, fontsize=PT, style="italic", va="center")
        _token_row(ax, 0.1, y, tokens, meaning, hidden)
        y -= 1.0
    ax.text(0.1, 0.8, f"T5 noise here: density {ex.noise_density:g}, mean span {ex.mean_noise_span_length:g} "
            f"(at T5's 0.15 and 3, a sentence this short loses just its last two words).\n"
            f"BART: mask ratio 0.3, Poisson(3) span lengths.", fontsize=PT, ha="left", va="center")
    _legend(fig, 0.0)
    return fig


DOCUMENT_SEED = 3
"""Added to ``seed`` for the document of ``l07_bart_noises``: with seed 0, the draw whose
permutation moves every sentence and whose rotation cuts a sentence (other draws may leave
the order as it was: one permutation in six of three sentences is the identity)."""


# ---- section 3: the five noises ---------------------------------------------------------------------------
@register("l07_bart_noises", lesson=7, title="BART's five noises on one document")
def bart_noises(seed: int = 0):
    """A three-sentence corpus document and each of BART's five noises applied to it alone
    (BART's target is always the original document), with what was measured on it."""
    from ..kit.figures.draw import new_figure

    doc, noised = bart_noise_examples(seed + DOCUMENT_SEED, n_sentences=3, max_words=13)
    W, H = 12.8, 6.9
    fig = new_figure(W, H)
    ax = _inch_axes(fig, W, H)
    fig.text(0.005, 0.99, "BART's five noises, each alone on one document", fontsize=TITLE_PT,
             fontweight="bold", va="top")
    y = H - 0.95
    ax.text(0.1, y + 0.42, "the document = every noise's target", fontsize=PT, style="italic", va="center")
    _token_row(ax, 0.1, y, doc, KEY["ground_truth"])
    for item in noised:
        y -= 0.95
        ax.text(0.1, y + 0.42, f"{item.noise}  ({item.rate})", fontsize=PT, style="italic", va="center")
        _token_row(ax, 0.1, y, item.words, KEY["encoder"])
    _legend(fig, 0.0)
    return fig


# ---- section 4: the denoising loss curves --------------------------------------------------------------------
NAMES = {"t5": "T5 span corruption", "bart": "BART (infilling + permutation)"}


@register("l07_loss_curves", lesson=7, title="Denoising loss of a tiny model, and what a step computes")
def loss_curves(seed: int = 0):
    """Left and middle: the training loss of the tiny model on each objective, one panel each
    (the two are per target token of different targets: T5's hidden words, sentinels and
    ``<eos>``; BART's whole text), read from the stored runs
    (:mod:`~minitf.course.l07_pretraining.pretraining_runs`: every seed, 4 digits): each seed's
    20-step running mean thin, their mean bold.  Right: forward + backward FLOPs of one training
    step, encoder and decoder (with the output head), for each objective's batches.  ``seed``:
    the data seed of the step counts; the curves are every stored seed's."""
    from matplotlib.patches import Patch

    from ..kit.figures.draw import new_figure, slide_axes
    from .pretraining_runs import load_results

    results = load_results()
    seeds = sorted(results["runs"], key=int)
    costs = {o: step_cost(o, seed) for o in OBJECTIVES}
    loss = KEY["loss"]
    fig = new_figure(12.6, 5.6)
    window = 20
    what = {"t5": "T5: hidden words,\nsentinels and <eos>", "bart": "BART: the whole text\n(most of it in the input)"}
    top = max(max(results["runs"][s][o]["loss"]) for s in seeds for o in OBJECTIVES)
    for k, objective in enumerate(OBJECTIVES):
        ax = fig.add_axes((0.07 + 0.3 * k, 0.13, 0.23, 0.6))
        curves = np.array([results["runs"][s][objective]["loss"] for s in seeds])  # (seeds, steps)
        steps = np.arange(1, curves.shape[1] + 1)
        smooth = np.array([np.convolve(c, np.ones(window) / window, mode="valid") for c in curves])
        for c in smooth:
            ax.plot(steps[window - 1:], c, linewidth=0.9, alpha=0.45, **loss.line(marker=None))
        ax.plot(steps[window - 1:], smooth.mean(axis=0), linewidth=2.6, **loss.line(marker=None))
        ax.set_xlim(0, steps[-1])
        ax.set_ylim(0, 1.05 * top)
        ax.set_xlabel("training step")
        ax.set_ylabel("loss per target token (nats)")
        ax.grid(True, axis="y")
        slide_axes(ax, PT)
        ax.set_title(what[objective], fontsize=TITLE_PT, loc="left")
    fig.text(0.01, 0.995, f"Denoising loss of the same tiny model on two different targets, {len(seeds)} seeds\n"
             f"(thin: each seed, bold: their mean, {window}-step running means)", fontsize=PT, va="top")

    a2 = fig.add_axes((0.72, 0.13, 0.27, 0.6))
    x = np.arange(len(OBJECTIVES))
    enc = np.array([costs[o].flops["encoder"] for o in OBJECTIVES]) / 1e6
    dec = np.array([costs[o].flops["decoder"] + costs[o].flops["head"] for o in OBJECTIVES]) / 1e6
    a2.bar(x, enc, width=0.6, linewidth=1.2, **KEY["encoder"].fill())
    a2.bar(x, dec, width=0.6, bottom=enc, linewidth=1.2, **KEY["decoder"].fill())
    for i, o in enumerate(OBJECTIVES):
        a2.text(i, enc[i] + dec[i], f"{enc[i] + dec[i]:.0f}\n{costs[o].decoder_positions:.0f} decoder\npositions",
                ha="center", va="bottom", fontsize=PT)
    a2.set_xticks(x, ["T5", "BART"])
    a2.set_ylim(0, 1.75 * float((enc + dec).max()))  # room for the bar labels under the legend
    a2.set_ylabel("MFLOPs per training step")
    slide_axes(a2, PT)
    a2.set_title("What one step computes", fontsize=TITLE_PT)
    a2.legend(handles=[Patch(label="encoder", **KEY["encoder"].fill()),
                       Patch(label="decoder + head", **KEY["decoder"].fill())],
              loc="upper left", fontsize=PT, handlelength=1.4)
    return fig
