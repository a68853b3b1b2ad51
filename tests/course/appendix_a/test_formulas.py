"""Appendix A (formulas): every formula's links name minitf functions that exist, every
formula's check passes and calls the functions it links, the course's formulas are all there,
and ``lessons/A-formulas.ipynb`` is what the registry generates.  (tests/test_lessons.py runs
the notebook itself.)

The last tests plant errors (a removed function, a wrong formula, a link the check never
calls) and check that each is caught."""
from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from minitf.course import appendix_a_formulas as formulas
from minitf.course.appendix_a_formulas import notebook
from minitf.course.kit.formulas import softmax_rows
from minitf.course.kit.formulas import REPO, compare
from minitf.course.kit.lessons import get_lesson
from minitf.layers.softmax import softmax_backward

LESSONS = Path(__file__).resolve().parents[3] / "lessons"
IDS = [f.id for f in formulas.FORMULAS]

# What the appendix must cover, by topic: the formula ids that cover each.
REQUIRED = {
    "attention, scaled by 1/sqrt(Dh)": ["scaled-dot-product-attention", "multi-head-attention"],
    "softmax and its Jacobian-vector product": ["softmax", "softmax-backward"],
    "the attention backward": ["attention-backward", "cross-attention-backward"],
    "additive masks of -1e9": ["causal-mask", "padding-mask", "masked-attention", "mask-backward"],
    "LayerNorm and its backward": ["layernorm", "layernorm-backward"],
    "residual, pre-LN and post-LN": ["pre-ln", "post-ln"],
    "FFN and its activations": ["ffn", "relu", "gelu", "gelu-tanh"],
    "sinusoidal positions": ["sinusoidal-positions"],
    "cross-entropy, p_hat - y over real tokens, label smoothing": ["cross-entropy", "cross-entropy-gradient",
                                                                   "label-smoothing"],
    "shift right": ["shift-right"],
    "the KV caches": ["kv-cache"],
    "temperature, top-k, top-p": ["temperature", "top-k", "top-p"],
    "beam length normalisation": ["length-normalization"],
    "the pointer-generator: p_gen and the mixture": ["pointer-generator"],
    "coverage: the vector, the loss, GNMT's penalty": ["coverage", "coverage-loss", "coverage-penalty"],
    "scheduled sampling's input mixing (two passes)": ["scheduled-sampling-mix"],
    "LSTM, GRU and BPTT": ["rnn-cell", "lstm-cell", "gru-cell", "lstm-backward", "bptt", "bptt-padding"],
    "additive attention (Bahdanau)": ["additive-attention"],
    "scheduled-sampling decays": ["scheduled-sampling-decay"],
    "AdamW": ["adamw"],
    "the parameter count": ["parameter-count", "rnn-cell-parameters"],
}


@pytest.mark.parametrize("id", IDS)
def test_every_linked_function_exists(id):
    for path in formulas.get(id).computes:
        link = formulas.link(path)  # LinkError, naming the path, if it was removed or renamed
        assert (REPO / link.file).is_file() and link.line >= 1, link


@pytest.mark.parametrize("id", IDS)
def test_every_check_passes_and_calls_what_it_links(id):
    result = formulas.run(id)
    assert result.ok, result.report()


def test_the_appendix_covers_the_course():
    missing = {topic: [i for i in ids if i not in IDS] for topic, ids in REQUIRED.items()}
    assert not any(missing.values()), f"formulas missing from the registry: {missing}"


def test_every_formula_has_a_lesson_latex_and_a_comparison():
    assert len(IDS) == len(set(IDS))
    for f in formulas.FORMULAS:
        get_lesson(f.lesson)
        assert f.latex and "$$" not in f.latex, f.id  # the notebook adds the $$ delimiters
        assert f.id == f.id.lower() and " " not in f.id


def test_the_notebook_is_generated_from_the_registry():
    path = LESSONS / notebook.NOTEBOOK
    if not path.exists():
        pytest.skip(f"{path} not present (an installed copy, not the repository)")
    problems = notebook.out_of_date(path)
    assert not problems, (f"{path.name} is out of date with the lesson folders' formulas.py: {problems[:5]}; "
                          f"regenerate it: python -m minitf.course.appendix_a_formulas --write")


def test_the_notebook_has_a_section_per_lesson_and_a_live_cell_per_formula():
    cells = notebook.cells()
    headings = [c["source"].splitlines()[0][3:] for c in cells if c["source"].startswith("## ")]
    assert headings == [notebook.heading(k) for k in notebook.lessons()]
    checks = [c["source"] for c in cells if c["cell_type"] == "code"][1:]
    assert checks == [f'formulas.show("{i}")' for i in IDS]


# ---- planted errors: each must be caught ----------------------------------------------------------
def test_a_removed_function_fails_its_formula(monkeypatch):
    module = importlib.import_module("minitf.layers.softmax")  # (the attribute minitf.layers.softmax is the function)
    monkeypatch.delattr(module, "softmax_backward")  # as if someone deleted it
    result = formulas.run("softmax-backward")
    assert not result.ok and "softmax_backward" in result.error and "LinkError" in result.error
    with pytest.raises(formulas.LinkError, match="softmax_backward"):
        formulas.link("minitf.layers.softmax.softmax_backward")


def test_a_misspelt_link_fails():
    planted = dataclasses.replace(formulas.get("softmax"), computes=("minitf.layers.softmax.sofmax",))
    result = formulas.run(planted)
    assert not result.ok and "sofmax" in result.error


def test_a_wrong_formula_fails_its_check():
    def wrong(rng):  # the softmax backward without its <g, p> term: the classic mistake
        z, g = rng.standard_normal(6), rng.standard_normal(6)
        p = softmax_rows(z)
        return [compare("∂L/∂z", p * g, softmax_backward(g, p))]

    result = formulas.run(dataclasses.replace(formulas.get("softmax-backward"), check=wrong))
    assert not result.ok and not result.comparisons[0].ok and result.comparisons[0].diff > 1e-3
    with pytest.raises(formulas.FormulaCheckFailed, match="FAILED"):
        formulas.show(dataclasses.replace(formulas.get("softmax-backward"), check=wrong))


def test_a_link_the_check_never_calls_fails():
    planted = dataclasses.replace(formulas.get("softmax-backward"),
                                  computes=("minitf.layers.softmax.softmax_backward",
                                            "minitf.layers.softmax.log_softmax"))
    result = formulas.run(planted)
    assert not result.ok
    assert result.called == {"minitf.layers.softmax.softmax_backward": True, "minitf.layers.softmax.log_softmax": False}


def test_a_nan_never_passes():
    assert not compare("x", np.array([np.nan]), np.array([np.nan])).ok
    assert not compare("x", np.array([1.0, -np.inf]), np.array([1.0, 0.0])).ok
    assert compare("x", np.array([1.0, -np.inf]), np.array([1.0, -np.inf])).ok  # a filtered logit on both sides
    assert not compare("x", np.zeros(3), np.zeros(4)).ok


def test_an_aligned_block_starting_with_a_bracket_keeps_its_first_line():
    """MathJax reads ``[...]`` right after ``\\begin{aligned}`` as the environment's optional
    position argument and drops it: the LSTM formula's ``[a_i, a_f, a_g, a_o] = ...`` lost its
    left-hand side.  The generator puts an empty group in front of such a bracket, and leaves an
    option written on the ``\\begin`` line alone."""
    md = notebook.formula_markdown(formulas.get("lstm-cell"))
    assert "\\begin{aligned}{}\n[a_i" in md
    for f in formulas.FORMULAS:
        shown = notebook.display_latex(f.latex)
        assert re.search(r"\\begin\{(aligned|gathered|split)\}\s*\n\s*\[", shown) is None, f.id
    assert notebook.display_latex("\\begin{aligned}[t] x \\end{aligned}") == "\\begin{aligned}[t] x \\end{aligned}"
