"""The course as one whole: every lesson and appendix, its notebook, figures and homework.

``minitf lessons`` prints this table; ``lessons/README.md`` is its reading copy.  A lesson's
notebook lives in the repository's ``lessons/`` folder (not in the installed package), named
``NN-<slug>.ipynb``; a lesson whose notebook is not written yet has ``notebook=None``.

Slides: each notebook carries reveal.js metadata (``cell.metadata.slideshow.slide_type``) so
that ``jupyter nbconvert --to slides`` (or ``minitf lessons --slides``) gives a slide per
section and a sub-slide per demonstration.  :func:`slide_types` is the rule;
``minitf lessons --tag-slides`` writes it into the notebooks.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Lesson:
    """One entry of the course."""

    key: str  # "1" .. "10", or "A" .. "C" for an appendix
    title: str
    shows: str  # one line: what the notebook demonstrates
    notebook: str | None = None  # file name in lessons/, None until it is written

    @property
    def number(self) -> int | None:
        return int(self.key) if self.key.isdigit() else None


LESSONS: tuple[Lesson, ...] = (
    Lesson("1", "The sequence-to-sequence problem (the RNN encoder-decoder)",
           "the fixed vector's accuracy against source length, reversal, attention that removes the middle",
           "01-the-sequence-to-sequence-problem.ipynb"),
    Lesson("2", "Attention from scratch",
           "why 1/sqrt(Dh); the softmax Jacobian and its cheap form; the attention backward line by line; heads",
           "02-attention-from-scratch.ipynb"),
    Lesson("3", "The causal mask",
           "the leak measured; -1e9 vs -inf; the 0/1-after-softmax mistake; fully padded rows give no NaN",
           "03-the-causal-mask.ipynb"),
    Lesson("4", "Cross-attention: joining the two stacks",
           "alignment heatmaps of a trained model; K and V once per layer; dX_q, dX_kv and each block's share",
           "04-cross-attention.ipynb"),
    Lesson("5", "The block",
           "residuals, LayerNorm's backward, pre-LN vs post-LN and warm-up, ReLU vs GELU, positions",
           "05-the-block.ipynb"),
    Lesson("6", "The whole encoder-decoder",
           "every shape from ids to logits; parameters, FLOPs and activation memory counted and measured",
           "06-the-whole-encoder-decoder.ipynb"),
    Lesson("7", "Pretraining objectives",
           "T5 span corruption and BART's five noises on corpus text; target lengths and cost; denoising loss curves",
           "07-pretraining-objectives.ipynb"),
    Lesson("8", "Training: teacher forcing & the loss",
           "shifted inputs and the causal mask; the masked loss; dL/dH_enc over all blocks; exposure bias",
           "08-training-teacher-forcing.ipynb"),
    Lesson("9", "Inference",
           "encode once, decode many; two KV caches; greedy, sampling, beam search; copy and coverage; exposure bias",
           "09-inference.ipynb"),
    Lesson("10", "Fine-tuning on supervised pairs",
           "pretrained vs scratch by number of pairs; frozen encoder; early stopping on loss vs self-fed run; overfitting",
           "10-fine-tuning-on-supervised-pairs.ipynb"),
    Lesson("A", "Appendix A: formulas", "every formula, linked to the function that computes it and checked numerically",
           "A-formulas.ipynb"),
    Lesson("B", "Appendix B: architecture comparison",
           "encoder-decoder, decoder-only, encoder-only, RNN: inputs and labels, caches, FLOPs, memory, quality",
           "B-architectures.ipynb"),
    Lesson("C", "Appendix C: acronyms", "every acronym the course uses, its expansion and the lesson that introduces it",
           "C-acronyms.ipynb"),
)


def get_lesson(key) -> Lesson:
    key = str(key).upper()
    for lesson in LESSONS:
        if lesson.key == key:
            return lesson
    raise ValueError(f"lesson: expected one of {', '.join(l.key for l in LESSONS)}, got {key!r}")


def lessons_dir(start: Path | None = None) -> Path | None:
    """The repository's ``lessons/`` folder: under ``start`` (the working directory by
    default), else beside the package (an editable install).  None if neither exists."""
    for base in (Path.cwd() if start is None else Path(start), Path(__file__).resolve().parents[2]):
        candidate = base / "lessons" if base.name != "lessons" else base
        if candidate.is_dir() and any(candidate.glob("*.ipynb")):
            return candidate
    return None


def slide_types(cells) -> list[str]:
    """The reveal.js slide type of each cell: a slide for the title and for each ``##``
    section, a sub-slide for each demonstration (a code cell, together with the prose cell
    just before it), and the rest continuing the current one (``"-"``)."""
    types = []
    for i, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first = source.lstrip().splitlines()[0] if source.strip() else ""
        if i == 0 or (cell["cell_type"] == "markdown" and first.startswith(("# ", "## "))):
            types.append("slide")
        elif cell["cell_type"] == "markdown":
            nxt = cells[i + 1]["cell_type"] if i + 1 < len(cells) else None
            types.append("subslide" if nxt == "code" else "-")
        elif cell["cell_type"] == "code":
            prev = types[-1] if types else "slide"
            prev_is_intro = cells[i - 1]["cell_type"] == "markdown" and prev == "subslide"
            after_heading = prev == "slide"
            types.append("-" if prev_is_intro or after_heading else "subslide")
        else:
            types.append("-")
    return types
