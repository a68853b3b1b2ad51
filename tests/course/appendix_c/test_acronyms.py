"""Appendix C (acronyms): every acronym in the markdown of every lesson notebook
(``lessons/*.ipynb``, whichever exist, so a notebook added later is covered too) is defined in
``lessons/C-acronyms.ipynb``, with its expansion and the lesson that introduces it.

**What counts as an acronym.**  The text is each markdown cell with its inline code, code
blocks, LaTeX, HTML tags and ``<eos>``-like tokens (a ``<`` followed at once by a letter or ``/``, up to
the next ``>`` on its line: ``T < 1 ... T > 1`` is kept) and link targets removed, split into words at anything but letters,
digits and underscores (so ``pre-LN`` gives ``LN`` and ``GPT-2`` gives ``GPT``).  A word whose
last letter is a lower-case plural "s" after a capital loses it (``FLOPs`` -> ``FLOP``,
``RNNs`` -> ``RNN``).  The word is an acronym when

* it has at least two capital letters, and capitals are at least half of its letters: ``RNN``,
  ``GELU``, ``KV``, ``ReLU``, ``NaN``, ``ALiBi`` are; CamelCase names (``LayerNorm``, ``NumPy``,
  ``AdamW``, ``PyTorch``) and single letters are not; or it is capitals and digits, starting with
  a capital (a name made of initials and a number: ``T5``, ``C4``);
* it has no underscore (an identifier: ``W_U``, ``H_enc``, ``MASK_VALUE``) and does not start with
  a digit (a coefficient: ``4D``, ``2DF``, ``12BTD``);
* it is not written only in the course's shape letters B S T D H F V L (a product of dimensions:
  ``BT``, ``BHS``, ``BLD``);
* it is not in :data:`ALLOWLIST`.

The appendix's table has one row per acronym: ``| acronym | expansion | Lesson N |``, sorted.
"Introduced in" is checked both ways where it can be: no notebook of an earlier lesson uses the
acronym, and the named lesson's notebook, once written, does.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from minitf.course.kit.lessons import all_lessons, get_lesson

FOLDER = Path(__file__).resolve().parents[3] / "lessons"
APPENDIX = "C-acronyms.ipynb"

SHAPE_LETTERS = set("BSTDHFVL")
ALLOWLIST = {
    # words in capitals that are not acronyms
    "LEARNED": "a label of Lesson 8's learned / config / state table",
    "CONFIG": "a label of Lesson 8's learned / config / state table",
    "STATE": "a label of Lesson 8's learned / config / state table",
}

_STRIP = [
    re.compile(r"```.*?```", re.S),  # fenced code
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"\$[^$\n]+\$"),  # inline math
    re.compile(r"\]\([^)]*\)"),  # link targets (file names, URLs)
    # HTML tags and raw <eos>-like tokens: a "<" followed at once by a letter or "/", up to the next ">" on its
    # line, no "<" between; so "T < 1 sharpens ... T > 1" is read, not dropped
    re.compile(r"</?[A-Za-z][^<>\n]*>"),
]


def prose(markdown: str) -> str:
    """The text of a markdown cell that a reader reads as words."""
    for pattern in _STRIP:
        markdown = pattern.sub(" ", markdown)
    return markdown


def words(text: str) -> list[str]:
    out = []
    for w in re.findall(r"[A-Za-z0-9_]+", text):
        if len(w) > 2 and w.endswith("s") and w[-2].isupper():
            w = w[:-1]  # FLOPs -> FLOP
        out.append(w)
    return out


def is_acronym(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    capitals = sum(c.isupper() for c in letters)
    initials = capitals >= 2 and 2 * capitals >= len(letters)
    with_number = bool(letters) and capitals == len(letters) and any(c.isdigit() for c in word)  # T5, C4
    return ((initials or with_number) and "_" not in word and not word[0].isdigit()
            and not set(word) <= SHAPE_LETTERS and word not in ALLOWLIST)


def markdown_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "markdown"]


def used_words(path: Path) -> set[str]:
    return {w for cell in markdown_cells(path) for w in words(prose(cell))}


def acronyms_in(path: Path) -> dict[str, str]:
    """Each acronym of a notebook's markdown, with a little of the text around its first use."""
    found: dict[str, str] = {}
    for cell in markdown_cells(path):
        text = prose(cell)
        for w in words(text):
            if is_acronym(w) and w not in found:
                i = text.find(w)
                found[w] = " ".join(text[max(0, i - 40):i + len(w) + 40].split())
    return found


def notebooks(folder: Path = FOLDER) -> list[Path]:
    """Every notebook in the folder, in course order (lessons, then appendices; unknown ones last)."""
    order = {l.notebook: i for i, l in enumerate(all_lessons()) if l.notebook}
    return sorted(folder.glob("*.ipynb"), key=lambda p: (order.get(p.name, len(order)), p.name))


_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*(?:Lesson|Appendix)\s+(\w+)\s*\|\s*$")


def table(path: Path) -> dict[str, tuple[str, str]]:
    """The appendix's rows: acronym -> (expansion, lesson key), in the order written."""
    rows: dict[str, tuple[str, str]] = {}
    for cell in markdown_cells(path):
        for line in cell.splitlines():
            m = _ROW.match(line)
            if m:
                acronym, expansion, key = m.groups()
                assert acronym not in rows, f"{path.name}: {acronym} is defined twice"
                rows[acronym] = (expansion, key)
    return rows


def undefined(folder: Path, defined) -> dict[str, list[str]]:
    """acronym -> ["notebook: ...context...", ...] for every acronym not in ``defined``."""
    out: dict[str, list[str]] = {}
    for path in notebooks(folder):
        for acronym, context in acronyms_in(path).items():
            if acronym not in defined:
                out.setdefault(acronym, []).append(f"{path.name}: ...{context}...")
    return out


@pytest.fixture(scope="module")
def rows():
    path = FOLDER / APPENDIX
    if not path.exists():
        pytest.skip(f"{path} not present (an installed copy, not the repository)")
    return table(path)


def test_every_acronym_in_the_notebooks_is_defined(rows):
    missing = undefined(FOLDER, rows)
    assert not missing, ("acronyms used in the lessons but not defined in lessons/C-acronyms.ipynb (add a row "
                         "| ACRONYM | expansion | Lesson N |, or, if a word is not an acronym, see ALLOWLIST in "
                         "tests/course/appendix_c/test_acronyms.py):\n"
                         + "\n".join(f"  {a}: {'; '.join(where)}" for a, where in sorted(missing.items())))


def test_the_table_is_sorted_and_complete(rows):
    assert len(rows) >= 20
    assert list(rows) == sorted(rows, key=str.lower), "keep the table in alphabetical order"
    for acronym, (expansion, key) in rows.items():
        get_lesson(key)  # a lesson or appendix of the course
        assert expansion and expansion.lower() != acronym.lower(), acronym


def test_each_acronym_is_introduced_where_the_table_says(rows):
    order = [l.key for l in all_lessons()]
    uses = {p.name: used_words(p) for p in notebooks()}
    key_of = {l.notebook: l.key for l in all_lessons() if l.notebook}
    problems = []
    for acronym, (_, key) in rows.items():
        users = [key_of[name] for name, ws in uses.items() if acronym in ws and name in key_of and name != APPENDIX]
        first = min(users, key=order.index, default=None)
        if first is not None and order.index(first) < order.index(key):
            problems.append(f"{acronym}: the table says Lesson {key}, but Lesson {first} already uses it")
        own = get_lesson(key).notebook
        if own in uses and acronym not in uses[own]:
            problems.append(f"{acronym}: the table says Lesson {key}, whose notebook does not use it")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("word, expected", [
    ("RNN", True), ("GELU", True), ("KV", True), ("LN", True), ("ReLU", True), ("NaN", True), ("ALiBi", True),
    ("LayerNorm", False), ("NumPy", False), ("AdamW", False), ("W_U", False), ("H_enc", False), ("Dh", False),
    ("MASK_VALUE", False), ("4D", False), ("2DF", False), ("BHS", False), ("BT", False), ("Q", False),
    ("T5", True), ("C4", True), ("W_1", False), ("x4", False), ("CONFIG", False),
])
def test_what_counts_as_an_acronym(word, expected):
    assert is_acronym(word) is expected


def test_only_tags_are_dropped_not_comparisons():
    assert words(prose("T < 1 sharpens, T > 1 flattens; <eos> and <br/> and <extra_id_0> go")) == \
        ["T", "1", "sharpens", "T", "1", "flattens", "and", "and", "go"]


def test_plurals_and_code_are_handled():
    assert words(prose("FLOPs of two RNNs, `BLAS` in code, $QK^T$ in math, [a](BERT.md)")) == \
        ["FLOP", "of", "two", "RNN", "in", "code", "in", "math", "a"]


def test_a_planted_undefined_acronym_is_caught(tmp_path, rows):
    source = notebooks()[0]
    planted = json.loads(source.read_text(encoding="utf-8"))
    planted["cells"].append({"cell_type": "markdown", "id": "planted", "metadata": {},
                             "source": "Each step then runs the XYZW trick of Lesson 4."})
    (tmp_path / source.name).write_text(json.dumps(planted), encoding="utf-8")
    missing = undefined(tmp_path, rows)
    assert list(missing) == ["XYZW"] and "XYZW trick" in missing["XYZW"][0]
