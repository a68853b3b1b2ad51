"""The slides (``minitf lessons --slides``): offline, and every slide inside a 1280x720 screen.

Lesson 3 (executed: its printouts and figures are what would run off a slide) and Appendix C
(a table) are rendered with reveal.js copied from its npm package (fetched once into the cache
with npm, or $MINITF_REVEALJS), served on localhost and opened in headless Chromium at
1280x720.  Every slide is visited: no content box may lie outside the viewport or be cut on its
right, no request may leave the machine, and the title slide holds no code (the set-up cell is
left out by the slide rule, :func:`minitf.course.kit.lessons.slide_types`).  Skipped, saying
why, without reveal.js (no npm, no registry), nbconvert, Chromium or Playwright.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from minitf.cli import main
from minitf.course.kit.lessons import all_lessons, slide_types

from .browser import browser_page, check_slides, serve

REPO = Path(__file__).resolve().parents[2]
LESSONS = REPO / "lessons"


@pytest.fixture(scope="module")
def slides(tmp_path_factory):
    pytest.importorskip("nbconvert", reason="the slides need pip install -e '.[lessons]'")
    pytest.importorskip("jupyter_server_mathjax", reason="the slides need pip install -e '.[lessons]'")
    pytest.importorskip("nbclient", reason="executing Lesson 3 needs nbclient: pip install -e '.[test]'")
    from minitf.course.kit.assets import AssetMissing, revealjs_source

    try:
        revealjs_source()
    except AssetMissing as e:
        pytest.skip(f"no reveal.js: {e}")
    out = tmp_path_factory.mktemp("slides")
    assert main(["lessons", "--slides", str(out), "3", "C"]) == 0
    return out


def test_the_set_up_cell_is_left_out_of_every_notebooks_slides():
    for lesson in all_lessons():
        if not (lesson.notebook and (LESSONS / lesson.notebook).is_file()):
            continue
        cells = json.loads((LESSONS / lesson.notebook).read_text(encoding="utf-8"))["cells"]
        types = slide_types(cells)
        assert types[0] == "slide"
        first_prose = next((i for i, c in enumerate(cells) if i and c["cell_type"] == "markdown"), len(cells))
        for i in range(1, first_prose):  # the code between the title and the first prose: the set-up
            assert types[i] == "skip", (lesson.notebook, i)
        assert "skip" not in types[first_prose:], lesson.notebook  # nothing else is left out


def test_slides_are_offline_with_a_slide_per_section(slides):
    text = (slides / "03-the-causal-mask.slides.html").read_text(encoding="utf-8")
    cells = json.loads((LESSONS / "03-the-causal-mask.ipynb").read_text(encoding="utf-8"))["cells"]
    n_sections = sum(1 for c in cells if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## "))
    assert text.count("<section") >= n_sections + 1  # the title, each section, and their sub-slides
    assert 'src="reveal.js/dist/reveal.js"' in text and (slides / "reveal.js" / "dist" / "reveal.js").is_file()
    assert (slides / "mathjax" / "MathJax.js").is_file() and (slides / "reveal.js" / "LICENSE").is_file()
    assert "unpkg.com" not in text and "cdnjs" not in text and "require.min.js" not in text


@pytest.mark.parametrize("name", ["03-the-causal-mask", "C-acronyms"])
def test_every_slide_fits_a_1280x720_screen(slides, name):
    from minitf.course.kit.slides import MIN_SCALE

    with serve(slides) as base, browser_page(1280, 720) as page:
        report = check_slides(page, f"{base}{name}.slides.html")
        failed, external = list(page.failed), list(page.external)
    print(f"\n{name}: {report.slides} slides, shrunk on {sum(s < 1 for s in report.scales)}, "
          f"smallest scale {min(report.scales):.2f}")
    assert report.slides >= 2
    assert report.overflowing == []
    assert min(report.scales) > MIN_SCALE  # shrunk to fit, never stopped at the floor
    assert report.title_slide_code_cells == 0, report.title
    assert failed == [] and external == []
