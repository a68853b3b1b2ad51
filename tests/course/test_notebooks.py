"""The lesson notebooks mirror the course: their ``##`` headings are the lesson's
sections, in order, with the course's exact titles; they are committed without outputs;
they hold no model code of their own; and each runs top to bottom (executed here with
nbclient, Jupyter's own notebook runner; skipped, saying why, where the test tools are not
installed).  With ``MINITF_EXECUTED_NOTEBOOKS=DIR`` set, each executed notebook is also written to
DIR, outputs included, for a reviewer to read what a fresh run printed."""
import json
import os
import re
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parents[2] / "lessons"

SECTIONS = {
    "01-the-sequence-to-sequence-problem.ipynb": [
        "Two networks for two lengths",
        "The conditioning vector and its width",
        "Reversing the source",
        "Generating in a loop",
        "Teacher forcing and the gap it leaves",
        "Removing the middle",
    ],
    "02-attention-from-scratch.ipynb": [
        "Queries, keys and values",
        "Scaled dot-product attention",
        "The softmax and its backward",
        "The attention backward, line by line",
        "Many heads",
    ],
    "03-the-causal-mask.ipynb": [
        "Why a decoder must not see the future",
        "Masking before the softmax",
        "Padding masks and fully-masked rows",
        "The mask in the backward",
    ],
    "04-cross-attention.ipynb": [
        "Queries from the decoder, keys and values from the encoder",
        "No causal mask, only source padding",
        "What the decoder looks at",
        "Keys and values computed once per layer",
        "The gradient through cross-attention",
    ],
    "05-the-block.ipynb": [
        "Residual connections",
        "Layer normalization and its backward",
        "Pre-LN and post-LN",
        "The feed-forward network",
        "Positions",
    ],
    "06-the-whole-encoder-decoder.ipynb": [
        "From source ids to logits",
        "Counting parameters",
        "Counting FLOPs",
        "Where the memory goes",
        "Sharing and tying embeddings",
    ],
    "07-pretraining-objectives.ipynb": [
        "Why denoise",
        "T5 span corruption",
        "BART's five noises",
        "Pretraining a tiny model",
        "What pretraining buys",
    ],
    "08-training-teacher-forcing.ipynb": [
        "The tension: autoregression vs. parallel training",
        "Shifted inputs and the causal mask, working together",
        "The loss, summed over positions",
        "The gradient's journey: through cross-attention into the encoder",
        "Training vs. inference: the gap that matters",
    ],
    "09-inference.ipynb": [
        "Encode once, decode many",
        "Two KV caches",
        "Greedy decoding and sampling",
        "Beam search and length normalization",
        "Coverage and copy",
        "Exposure bias, measured",
    ],
    "10-fine-tuning-on-supervised-pairs.ipynb": [
        "The same loss on real pairs",
        "Pretrained vs from scratch",
        "What to update",
        "Evaluate with a self-fed run",
        "Overfitting and the held-out set",
    ],
    # Appendix A, generated from the lesson folders' formulas.py: a section per lesson that has formulas
    "A-formulas.ipynb": [
        "Lesson 1 — The sequence-to-sequence problem (the RNN encoder-decoder)",
        "Lesson 2 — Attention from scratch",
        "Lesson 3 — The causal mask",
        "Lesson 4 — Cross-attention: joining the two stacks",
        "Lesson 5 — The block",
        "Lesson 6 — The whole encoder-decoder",
        "Lesson 7 — Pretraining objectives",
        "Lesson 8 — Training: teacher forcing & the loss",
        "Lesson 9 — Inference",
    ],
    "B-architectures.ipynb": [
        "What each computes",
        "How each trains",
        "How each generates",
        "The cost of a token",
        "The same budget, the same task",
    ],
}


def _cells(name):
    path = LESSONS / name
    if not path.exists():
        pytest.skip(f"{path} not present (an installed copy, not the repository)")
    return json.loads(path.read_text())["cells"]


def _section_titles(cells):
    titles = []
    for c in cells:
        if c["cell_type"] != "markdown":
            continue
        for line in "".join(c["source"]).splitlines():
            if line.startswith("## "):
                title = line[3:].strip()
                number, _, rest = title.partition(". ")
                titles.append(rest if number.isdigit() else title)
    return titles


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_headings_are_the_lesson_sections_in_order(name):
    assert _section_titles(_cells(name)) == SECTIONS[name]


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_committed_without_outputs(name):
    dirty = [i for i, c in enumerate(_cells(name)) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{name}: cells {dirty} carry outputs; clear them before committing"


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_slide_metadata_gives_a_slide_per_section(name):
    from minitf.course.kit.lessons import slide_types

    cells = _cells(name)
    found = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in cells]
    assert found == slide_types(cells), f"{name}: slide metadata out of date; run minitf lessons --tag-slides"
    assert found.count("slide") == len(SECTIONS[name]) + 1  # the title and each section


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_notebooks_import_minitf_and_define_no_model_code(name):
    code = "\n".join("".join(c["source"]) for c in _cells(name) if c["cell_type"] == "code")
    assert "minitf" in code
    for forbidden in ("def forward", "def backward", "class ", "np.exp(", "@ W"):
        assert forbidden not in code, f"{name} defines model code ({forbidden!r}); it belongs in minitf"


_EXECUTED: dict = {}  # name -> the notebook as this process's environment ran it (the kernel test reuses it)


def _execute(name):
    why = "executing the notebooks needs the test tools: pip install -e '.[test]'"
    pytest.importorskip("nbformat", reason=why)
    pytest.importorskip("nbclient", reason=why)
    from minitf.cli.lessons import execute

    _cells(name)  # skips outside the repository
    return execute(LESSONS / name)  # raises CellExecutionError, naming the cell, if a cell fails


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_notebook_runs_top_to_bottom(name):
    notebook, seconds = _execute(name)
    if name in KERNEL_INDEPENDENT:
        _EXECUTED[name] = notebook
    if os.environ.get("MINITF_EXECUTED_NOTEBOOKS"):
        import nbformat

        out = Path(os.environ["MINITF_EXECUTED_NOTEBOOKS"])
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, out / name)
    print(f"{name}: ran top to bottom in {seconds:.1f} s")


# ---- "run with another CPU kernel of the same BLAS library, the notebook printed the same numbers" ----
KERNEL_INDEPENDENT = ("06-the-whole-encoder-decoder.ipynb", "07-pretraining-objectives.ipynb",
                      "08-training-teacher-forcing.ipynb", "09-inference.ipynb",
                      "10-fine-tuning-on-supervised-pairs.ipynb")
"""The notebooks whose text says so, in these words or nearly."""
OTHER_KERNEL = "Prescott"
TIMING_TAG = "timing"
"""A code cell tagged so prints measured times and numbers computed from them (ratios, shares,
rates): what a machine's load decides.  Its integers (counts, shapes, steps) are still compared."""
_SECONDS = re.compile(r"\d+(?:\.\d+)?\s?(?:ms|s)\b")  # a measured time: "6.0 s", "3.7 ms"
_ROUNDING = re.compile(r"\d(?:\.\d+)?e-(?:09|[1-9]\d)\b")  # below 1e-8: rounding level in float64
_MEASURED = re.compile(r"\d+(?:\.\d+)?(?:%|x\b)|\d+\.\d+")  # in a timing cell: "2.5x", "10%", "0.312", "x1.04"


def printed_numbers(notebook) -> list:
    """The text each code cell printed, cell by cell, with measured times and rounding-level
    numbers (below 10**-8) written as placeholders; in a cell tagged ``timing`` every decimal
    number, ratio and percentage as well; runs of spaces as one.  What two kernels must agree on."""
    out = []
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        text = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                       for o in cell.get("outputs", []))
        text = _ROUNDING.sub("<rounding>", _SECONDS.sub("<time>", text))
        if TIMING_TAG in cell.get("metadata", {}).get("tags", []):
            text = _MEASURED.sub("<measured>", text)
        out.append((i, re.sub(r"[ \t]+", " ", text)))  # a column's padding follows its widest number
    return out


def test_printed_numbers_mask_times_and_rounding_only():
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [
        {"text": "trained in 6.0 s, one pass 3.7 ms; rel. error 5.0e-14, 2.1e-10, gap 1.2e-03; loss 1.521, 2.5x\n"}]},
        {"cell_type": "code", "metadata": {"tags": ["timing"]}, "outputs": [
            {"text": "   16    0.312     2.5x       10,462     21.3x; share 10%; x1.04 measured; (32, 13, 12) True\n"}]},
        {"cell_type": "markdown", "metadata": {}, "source": "6.0 s"}]}
    assert printed_numbers(nb) == [
        (0, "trained in <time>, one pass <time>; rel. error <rounding>, <rounding>, gap 1.2e-03; loss 1.521, 2.5x\n"),
        (1, " 16 <measured> <measured> 10,462 <measured>; share <measured>; x<measured> measured; "
            "(32, 13, 12) True\n")]


def _blas_kernel(**env) -> str | None:
    """The kernel OpenBLAS picks in a fresh process with ``env`` added (None: not OpenBLAS)."""
    import subprocess
    import sys

    code = "from minitf.bench.blas import numpy_blas; print(numpy_blas()['kernel'])"
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          check=True)
    return None if done.stdout.strip() == "None" else done.stdout.strip()


@pytest.mark.parametrize("name", KERNEL_INDEPENDENT)
def test_printed_numbers_do_not_depend_on_the_blas_kernel(name, monkeypatch):
    """The notebook run again with OpenBLAS forced to another CPU kernel prints the same text,
    times, the numbers computed from them and rounding-level numbers aside (:func:`printed_numbers`).
    Skipped, saying so, where the variable would not change the kernel."""
    here_kernel, other_kernel = _blas_kernel(), _blas_kernel(OPENBLAS_CORETYPE=OTHER_KERNEL)
    if here_kernel is None or here_kernel == other_kernel:
        pytest.skip(f"OPENBLAS_CORETYPE={OTHER_KERNEL} does not change NumPy's BLAS kernel here "
                    f"({here_kernel} both ways): there is nothing to compare")
    here = _EXECUTED.pop(name, None) or _execute(name)[0]
    monkeypatch.setenv("OPENBLAS_CORETYPE", OTHER_KERNEL)  # the kernel process inherits it
    other, _ = _execute(name)
    for (i, a), (_, b) in zip(printed_numbers(here), printed_numbers(other)):
        assert a == b, (f"{name}, cell {i}: printed differently on OpenBLAS's {other_kernel} kernel than on its "
                        f"{here_kernel}:\n{a}\n---\n{b}")
