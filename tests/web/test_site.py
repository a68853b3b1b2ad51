"""The course website (``minitf lessons --site``), built and opened in headless Chromium.

What this covers, to keep CI short: the whole course is built -- every lesson and appendix
page, every homework page, every source page Appendix A links -- but only Lesson 3 (the
quickest lesson with figures) is executed first; the other notebooks are shown as committed
(their prose, code and formulas, no outputs).  Executing all thirteen takes minutes; their
execution is tested on its own (tests/course/test_notebooks.py), and what execution adds to a
page -- outputs and figures -- is the same for every lesson as for Lesson 3.

The site is served on localhost and crawled from its front page: every page reached, every
internal link (its page or file, and its #fragment), image, stylesheet and script must resolve,
no page may ask for anything from another host, every image has alt text.  Then: the contents
and previous/next links, MathJax typesetting Appendix A's formulas, and search finding
"teacher forcing".  Each browser test is skipped, saying why, without Chromium or Playwright;
everything is skipped without Jupyter Book.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from minitf.course.kit.lessons import all_lessons, get_lesson
from minitf.course.kit.site import jupyter_book_missing
from minitf.grading import homeworks

from .browser import chromium, crawl, new_page, opened, serve

REPO = Path(__file__).resolve().parents[2]
LESSONS = REPO / "lessons"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    problem = jupyter_book_missing()
    if problem:
        pytest.skip(problem)
    pytest.importorskip("nbclient", reason="executing Lesson 3 needs nbclient: pip install -e '.[test]'")
    from minitf.course.kit.site import build_site

    out = tmp_path_factory.mktemp("site")
    t0 = time.perf_counter()
    built = build_site(out, execute={"3"}, log=lambda line: None)
    print(f"\nsite built in {time.perf_counter() - t0:.0f} s: {len(built.pages)} pages, "
          f"{len(built.source_pages)} source pages")
    return built


@pytest.fixture(scope="module")
def served(site):
    """The site on localhost and one headless Chromium for every test: (base URL, browser)."""
    with serve(site.out) as base, chromium() as browser:
        yield base, browser


def _doc(lesson) -> str:
    return Path(lesson.notebook).stem


def test_the_site_has_every_lesson_appendix_and_homework_page(site):
    lessons = [l for l in all_lessons() if l.notebook and (LESSONS / l.notebook).is_file()]
    expected = ["index"] + [_doc(l) for l in lessons] + [f"homework/{name}" for name in homeworks()]
    assert site.pages == expected
    for page in expected:
        assert (site.out / f"{page}.html").is_file(), page
    assert (site.out / "search.html").is_file() and (site.out / "_static" / "mathjax" / "MathJax.js").is_file()


def test_no_link_points_at_a_notebook_or_at_the_repository(site):
    """The committed notebooks link each other as ``NN-<slug>.ipynb`` and Appendix A links
    ``../minitf/*.py``; in the site every such link is a page's (the download buttons aside)."""
    committed = {"ipynb": 0, "source": 0}
    for path in LESSONS.glob("*.ipynb"):
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                       if c["cell_type"] == "markdown")
        committed["ipynb"] += len(re.findall(r"\]\([^)\s]*\.ipynb", text))
        committed["source"] += len(re.findall(r"\]\(\.\./minitf/", text))
    assert committed["ipynb"] > 30 and committed["source"] > 30, committed  # what there is to rewrite
    for page in site.out.rglob("*.html"):
        hrefs = re.findall(r'href="([^"]+)"', page.read_text(encoding="utf-8"))
        assert not [h for h in hrefs if h.split("#")[0].endswith(".ipynb") and "_sources/" not in h], page
        assert not [h for h in hrefs if "../minitf/" in h], page
    appendix = (site.out / "A-formulas.html").read_text(encoding="utf-8")
    assert appendix.count('href="source/minitf/') >= committed["source"] // 2
    assert appendix.count('href="01-the-sequence-to-sequence-problem.html"') >= 5


def test_source_pages_show_the_installed_file_with_line_numbers(site):
    import minitf.rnn.cells

    page = (site.out / "source" / "minitf" / "rnn" / "cells.html").read_text(encoding="utf-8")
    assert "minitf/rnn/cells.py" in page and "linenos" in page
    first_def = next(line for line in Path(minitf.rnn.cells.__file__).read_text().splitlines()
                     if line.startswith("class "))
    assert first_def.split("(")[0].split()[-1] in page


def test_figures_carry_their_registry_title_as_caption_and_alt_text(site):
    from minitf.course.kit.figures import registry

    page = (site.out / "03-the-causal-mask.html").read_text(encoding="utf-8")
    for name in ("l03_before_after", "l03_mask"):
        title = registry.get(name).title
        escaped = title.replace("&", "&amp;").replace('"', "&quot;")
        assert f'alt="{escaped}"' in page, name
        assert re.search(r"<figcaption>.*?" + re.escape(escaped.split(",")[0]), page, re.S), name


def test_every_link_and_image_resolves_in_the_browser(site, served):
    base, browser = served
    page = new_page(browser, javascript=False)  # the pages as served; what their scripts do is tested below
    t0 = time.perf_counter()
    report = crawl(page, base)
    seconds = time.perf_counter() - t0
    page.context.close()
    print(f"\ncrawled {len(report.pages)} pages in {seconds:.0f} s: {report.links} internal links, "
          f"{report.images} images, {report.assets} stylesheets and scripts; "
          f"{report.external_links} links to other sites (not followed)")
    assert report.broken == []
    assert report.requests_elsewhere == []  # offline: nothing from a CDN
    assert report.images_without_alt == []
    reached = set(report.pages)
    assert {f"{p}.html" for p in site.pages} <= reached, sorted({f"{p}.html" for p in site.pages} - reached)
    assert {f"source/{p[:-3]}.html" for p in site.source_pages} <= reached
    assert report.images >= 2 and report.links > 1000


def test_contents_and_previous_next_links(site, served):
    base, browser = served
    with opened(browser) as page:
        page.goto(base + "index.html")
        contents = page.evaluate("() => Array.from(document.querySelectorAll('nav.bd-links a.reference'))"
                                 ".map(a => a.getAttribute('href'))")
        captions = page.evaluate("() => Array.from(document.querySelectorAll('nav.bd-links p.caption'))"
                                 ".map(p => p.innerText.trim())")
        page.goto(base + "03-the-causal-mask.html")
        prev = page.get_attribute("a.left-prev", "href")
        nxt = page.get_attribute("a.right-next", "href")
    assert captions == ["Lessons", "Appendices", "Homework"]
    assert contents == [f"{p}.html" for p in site.pages[1:]]
    assert (prev, nxt) == (f"{_doc(get_lesson(2))}.html", f"{_doc(get_lesson(4))}.html")


def test_mathjax_typesets_every_formula_of_appendix_a(site, served):
    cells = json.loads((LESSONS / "A-formulas.ipynb").read_text(encoding="utf-8"))["cells"]
    n_display = sum("".join(c["source"]).count("$$") // 2 for c in cells if c["cell_type"] == "markdown")
    assert n_display > 20
    base, browser = served
    with opened(browser) as page:
        page.goto(base + "A-formulas.html", wait_until="load")
        page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                               " && MathJax.Hub.queue.running === 0 && document.querySelector('.MathJax_Display')",
                               timeout=120_000)
        typeset = page.evaluate("() => ({display: document.querySelectorAll('.MathJax_Display').length,"
                                " errors: document.querySelectorAll('.MathJax_Error, merror').length,"
                                " raw: document.body.innerText.includes('\\\\frac')})")
        failed = list(page.failed)
    assert typeset == {"display": n_display, "errors": 0, "raw": False}
    assert failed == []  # every font and extension MathJax asked for was there


def test_search_finds_teacher_forcing(site, served):
    base, browser = served
    with opened(browser) as page:
        page.goto(base + "search.html?q=teacher+forcing", wait_until="load")
        page.wait_for_selector("ul.search li a", timeout=60_000)
        page.wait_for_function("() => !document.querySelector('#search-progress') || "
                               "!/searching/i.test(document.querySelector('#search-progress').innerText)",
                               timeout=60_000)
        found = page.evaluate("() => Array.from(document.querySelectorAll('ul.search li a'))"
                              ".map(a => a.getAttribute('href').split('?')[0].split('#')[0])")
    assert f"{_doc(get_lesson(8))}.html" in found, found
