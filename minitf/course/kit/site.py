"""The course as a website: a Jupyter Book (1.x, the Sphinx engine) built from the notebooks.

``minitf lessons --site DIR`` calls :func:`build_site`.  It writes a book's sources into a
temporary folder -- the *build copy*; the committed notebooks are only read -- and runs
``jupyter-book build`` on it, offline:

* ``index.md``: the course's front page, a table of every lesson, appendix and homework;
* every notebook, executed (nbclient, from its own folder) unless asked not to, with its
  links rewritten: a link to another lesson's ``NN-<slug>.ipynb`` becomes a link to its page
  (or plain text, when that lesson is not in this site), a link to minitf's source
  (``../minitf/rnn/cells.py``, Appendix A has ~60) becomes a link to a page showing that file as
  installed, with line numbers (``source/minitf/rnn/cells.html``);
* each figure a lesson shows with ``show("name")`` becomes a figure whose caption and alt text
  are the figure's title in the registry (:mod:`minitf.course.kit.figures.registry`); any other
  image gets the first sentence of the text that follows it;
* ``homework/hwNN.md``: a page per homework (:func:`minitf.grading.homeworks`): its tasks and
  points, how to get the template and grade it, the template's instructions;
* ``_toc.yml``: Lessons, Appendices, Homework, in course order -- the left-hand table of
  contents and the previous/next links at the foot of every page;
* MathJax 2, copied into ``_static/mathjax`` (:mod:`.assets`): formulas typeset offline.

The result is a folder of static HTML (``index.html`` at its top) with Sphinx's search
(``search.html``), for any web server or ``python -m http.server``.  :func:`build_pdf` prints
the single-page build of the same sources to PDF with headless Chromium (no LaTeX needed).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .assets import MATHJAX_CONFIG
from .lessons import Lesson, all_lessons, execute_notebook, lessons_dir

__all__ = ["SiteError", "Site", "build_site", "build_pdf", "find_chromium", "jupyter_book_missing", "SITE_TITLE"]

SITE_TITLE = "minitf: the course"
PDF_NAME = "minitf-course.pdf"
_NOTEBOOK_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>(?P<stem>[0-9A-Z][0-9]?-[a-z0-9-]+)\.ipynb(?P<frag>#[^)\s]*)?)\)")
_SOURCE_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>\.\./(?P<path>minitf/[A-Za-z0-9_/]+\.py)(?P<frag>#[^)\s]*)?)\)")
_SHOW = re.compile(r"(?<![\w.])show\(\s*[\"'](?P<name>[a-z][a-z0-9_]*)[\"']")
_MARKER = "_static/minitf-site.css"  # a folder holding this is a site an earlier build wrote

_CSS = """\
/* minitf's course site: figures at their drawn size, never wider than the page */
.cell_output img, figure img { max-width: 100%; height: auto; }
figure figcaption { font-size: 0.9em; }
/* wide printouts scroll inside their box instead of pushing the page sideways */
.cell_output pre { overflow-x: auto; }
/* a formula wider than the column scrolls instead of being cut at its left */
div.math, .MathJax_Display { overflow-x: auto; overflow-y: hidden; }
/* printed (the PDF): long lines wrap, since a scroll box cannot scroll on paper */
@media print {
  .cell_output pre, div.highlight pre { white-space: pre-wrap; overflow: visible; word-break: break-all; }
}
/* MathJax's hidden MathML copy for screen readers asks for TeX fonts the offline copy does not ship */
.MJX_Assistive_MathML, .MJX_Assistive_MathML * { font-family: serif !important; }
"""


class SiteError(RuntimeError):
    """The site cannot be built; the message says what is missing or what failed."""


@dataclass
class Site:
    """What :func:`build_site` wrote."""

    out: Path
    pages: list[str]  # the book's documents (docnames), in table-of-contents order
    executed: dict[str, float] = field(default_factory=dict)  # lesson key -> seconds its notebook ran
    source_pages: list[str] = field(default_factory=list)  # minitf/... files given a page
    seconds: float = 0.0
    pdf: Path | None = None

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def jupyter_book_missing() -> str | None:
    """None if Jupyter Book 1.x can be imported, else what to install."""
    try:
        import jupyter_book
    except ImportError:
        return "needs Jupyter Book 1.x: pip install 'minitf[site]'"
    major = int(str(getattr(jupyter_book, "__version__", "1")).split(".")[0] or 1)
    if major >= 2:
        return (f"needs Jupyter Book 1.x (the Sphinx engine, which builds offline), got {jupyter_book.__version__}: "
                f"pip install 'jupyter-book<2'")
    return None


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


# ---- the build copy -------------------------------------------------------------------------
def _doc(lesson: Lesson) -> str:
    return Path(lesson.notebook).stem


def _source_text(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _rewrite_links(text: str, docs: set[str], package_root: Path, sources: set[str], prefix: str = "") -> str:
    """``text`` (a markdown cell) with its notebook and source links pointing into the site.
    ``prefix`` is the way from the page's folder to the book's root ("" at the root)."""

    def notebook(m):
        if m["stem"] not in docs:
            return m["text"]  # that lesson is not part of this site: keep the words, drop the link
        return f"[{m['text']}]({prefix}{m['stem']}.ipynb{m['frag'] or ''})"

    def source(m):
        if not (package_root.parent / m["path"]).is_file():
            return m["text"]
        sources.add(m["path"])
        return f"[{m['text']}]({prefix}source/{m['path'][:-3]}.md)"

    return _SOURCE_LINK.sub(source, _NOTEBOOK_LINK.sub(notebook, text))


def _figure_titles() -> dict[str, str]:
    from .figures import registry

    return {spec.name: spec.title for spec in registry.all_figures()}


def _first_sentence(text: str) -> str:
    text = re.sub(r"[*_`#$]", "", " ".join(text.split()))
    m = re.match(r"(.+?[.:;])(\s|$)", text)
    return (m.group(1) if m else text)[:200].rstrip(".:;")


def _caption_figures(notebook, titles: dict[str, str], lesson: Lesson) -> int:
    """Give every code cell that shows an image a caption and alt text (MyST-NB's cell
    metadata ``mystnb.figure`` and ``mystnb.image``); returns how many were given."""
    n = 0
    cells = notebook.cells
    for i, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})
                  or "image/svg+xml" in o.get("data", {})]
        if not images:
            continue
        named = [m["name"] for m in _SHOW.finditer(_source_text(cell)) if m["name"] in titles]
        if named:
            caption = titles[named[0]]
            label = f"fig-{named[0]}"
        else:
            after = next((c for c in cells[i + 1:] if c.cell_type == "markdown"), None)
            caption = _first_sentence(_source_text(after)) if after is not None else f"A figure of {lesson.title}"
            label = None
        meta = cell.metadata.setdefault("mystnb", {})
        meta["image"] = {"alt": caption}
        if len(images) == 1:  # one image: a numbered figure with its caption under it
            meta["figure"] = {"caption": caption, **({"name": label} if label else {})}
        n += len(images)
    return n


def _write_notebook(lesson: Lesson, folder: Path, dest: Path, run: bool, timeout: float, docs: set[str],
                    package_root: Path, sources: set[str], titles: dict[str, str]) -> float | None:
    import nbformat

    path = folder / lesson.notebook
    seconds = None
    if run:
        from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

        try:
            notebook, seconds = execute_notebook(path, timeout)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
            raise SiteError(f"lesson {lesson.key} ({lesson.notebook}) failed to run: {e}") from None
    else:
        notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = _rewrite_links(_source_text(cell), docs, package_root, sources)
    _caption_figures(notebook, titles, lesson)
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, dest / lesson.notebook)
    return seconds


def _intro(folder: Path) -> str:
    """The first paragraph of the lessons' README (what the course is), if there is one."""
    readme = folder / "README.md"
    if not readme.is_file():
        return ""
    paragraphs = [p for p in readme.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    body = [p for p in paragraphs if not p.lstrip().startswith("#")]
    return body[0].strip() if body else ""


def _index_page(lessons, homework_of: dict, folder: Path, version: str) -> str:
    rows = []
    for lesson in lessons:
        link = f"{{doc}}`{lesson.title} <{_doc(lesson)}>`"
        hw = homework_of.get(lesson.number)
        hw_link = f"{{doc}}`{hw.name} <homework/{hw.name}>`" if hw is not None else "—"
        shows = lesson.shows.replace("|", "\\|")
        rows.append(f"| {lesson.key} | {link} | {shows} | {hw_link} |")
    table = "\n".join(rows)
    return f"""# {SITE_TITLE}

{_intro(folder)}

| | lesson | what it shows | homework |
| --- | --- | --- | --- |
{table}

## Working with the course

The lessons are Jupyter notebooks; this site shows them executed, with every figure and
printout. To run them yourself:

```bash
pip install 'minitf[lessons]'
minitf lessons --copy my-lessons/     # the notebooks and their README, to edit and run
jupyter lab my-lessons/
```

Each homework page says how to get the assignment and grade it:
`minitf homework new hwNN .` writes the template, `minitf grade hwNN FILE` grades it, as often
as you like. Formulas are collected in Appendix A, each linked to the minitf function that
computes it; the links to minitf's source open the file as installed with this version.

Built with `minitf lessons --site` from minitf {version}. minitf's code is under the MIT
licence and the lesson text under CC BY 4.0 (the `LICENSE` file of the package).
"""


def _homework_page(hw, lesson: Lesson | None, present: set[str]) -> str:
    lesson_link = (f"{{doc}}`Lesson {lesson.key} — {lesson.title} </{_doc(lesson)}>`"
                   if lesson is not None and _doc(lesson) in present else f"Lesson {hw.lesson}")
    rows = []
    for task in hw.tasks:
        functions = ", ".join(f"`{f}`" for f in task.functions)
        only = " (scored by the course's autograder)" if task.autograder_only else ""
        rows.append(f"| {hw.label(task)} | {task.points:g} | {task.title}{only} | {functions} |")
    docstring = ""
    try:
        import ast

        docstring = ast.get_docstring(ast.parse(hw.template_path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        pass
    instructions = f"\n## The template's instructions\n\n```text\n{docstring}\n```\n" if docstring else ""
    table = "\n".join(rows)
    return f"""# Homework {hw.lesson}: {hw.title}

The homework of {lesson_link}: {len(hw.tasks)} tasks, {hw.max_score:g} points.

```bash
minitf homework new {hw.name} .            # writes {hw.filename}
minitf grade {hw.name} {hw.filename}     # a score table, and every failed check
minitf grade {hw.name} {hw.filename} --task {hw.label(hw.tasks[0])}   # one task only
```

| task | points | what | what you write |
| --- | --- | --- | --- |
{table}
{instructions}"""


def _source_page(path: str, version: str) -> str:
    name = Path(path).name
    return f"""---
orphan: true
---
# `{path}`

The file as installed with minitf {version}: `import {path[:-3].replace("/", ".")}`.

```{{literalinclude}} {name}
:language: python
:linenos:
```
"""


def _config(version: str) -> str:
    config = {
        "title": SITE_TITLE,
        "author": "the minitf authors",
        "copyright": f"minitf {version}: code MIT, lesson text CC BY 4.0",
        "only_build_toc_files": False,  # the source pages are reached from Appendix A, not the contents
        "exclude_patterns": ["_build", "**.ipynb_checkpoints"],
        "execute": {"execute_notebooks": "off"},  # executed before the build, from the lessons folder
        "parse": {"myst_enable_extensions": ["dollarmath", "amsmath", "colon_fence"],
                  "myst_url_schemes": ["mailto", "http", "https"]},
        "html": {"use_repository_button": False, "use_issues_button": False, "use_edit_page_button": False,
                 "home_page_in_navbar": True, "use_multitoc_numbering": False,
                 "extra_footer": f"minitf {version}"},
        "launch_buttons": {"thebe": False},
        "sphinx": {"config": {
            # MathJax 2 from the jupyter_server_mathjax package, in _static/mathjax (no CDN)
            "mathjax_path": f"mathjax/MathJax.js?config={MATHJAX_CONFIG}",
            "mathjax3_config": None,
            "mathjax2_config": {"tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                                            "processRefs": False, "processEnvironments": False,
                                            # MyST marks the page mathjax_ignore and each formula "math"
                                            "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
                                            "processClass": "tex2jax_process|mathjax_process|math|output_area"},
                                # the package ships the STIX-Web fonts only (not MathJax's TeX fonts)
                                "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web",
                                             "imageFont": None},
                                # HTML-CSS in every browser: the native-MathML output wants TeX fonts
                                "MMLorHTML": {"prefer": "HTML"},
                                "displayAlign": "left", "displayIndent": "1em",
                                "messageStyle": "none"},
            # not _static/: Jupyter Book would load every .js file under it (all of MathJax) on every page
            "html_static_path": ["_assets"],
            "html_css_files": ["minitf-site.css"],
            "html_show_sourcelink": False,
            "html_theme_options": {"use_download_button": True, "use_fullscreen_button": False,
                                   "show_toc_level": 2},
            "nb_output_stderr": "remove",  # progress bars and warnings: not part of the lesson's text
            "numfig": True,
            "suppress_warnings": ["myst.header"],
        }},
    }
    return json.dumps(config, indent=1)  # JSON is YAML


def _toc(lessons, homework: Iterable[str]) -> str:
    parts = [("Lessons", [_doc(l) for l in lessons if l.number is not None]),
             ("Appendices", [_doc(l) for l in lessons if l.number is None]),
             ("Homework", [f"homework/{name}" for name in homework])]
    toc = {"format": "jb-book", "root": "index",
           "parts": [{"caption": caption, "chapters": [{"file": f} for f in files]} for caption, files in parts if files]}
    return json.dumps(toc, indent=1)


def write_sources(book: Path, lessons=None, *, folder: Path | None = None, execute: bool | Iterable[str] = True,
                  timeout: float = 300.0, log: Callable[[str], None] = print) -> Site:
    """Write the book's sources into the empty folder ``book`` (see the module docstring);
    returns a :class:`Site` whose ``out`` is ``book``."""
    import minitf
    from minitf.grading import homeworks

    folder = Path(folder) if folder is not None else lessons_dir()
    if folder is None:
        raise SiteError("no lessons folder: give --dir, or install minitf with its lessons")
    lessons = [l for l in (all_lessons() if lessons is None else lessons)
               if l.notebook and (folder / l.notebook).is_file()]
    if not lessons:
        raise SiteError(f"no notebooks in {folder}")
    run_keys = ({l.key for l in lessons} if execute is True else set() if execute is False
                else {str(k).upper() for k in execute})
    version = minitf.__version__
    package_root = Path(minitf.__file__).resolve().parent
    docs = {_doc(l) for l in lessons}
    keys = {l.number for l in lessons}
    chosen_hw = [hw for hw in homeworks().values() if hw.lesson in keys]
    site = Site(out=book, pages=["index"])
    sources: set[str] = set()
    titles = _figure_titles()
    for lesson in lessons:
        seconds = _write_notebook(lesson, folder, book, lesson.key in run_keys, timeout, docs, package_root,
                                  sources, titles)
        site.pages.append(_doc(lesson))
        if seconds is not None:
            site.executed[lesson.key] = seconds
            log(f"lesson {lesson.key:>2}  {lesson.notebook}: executed in {seconds:.1f} s")
    by_number = {l.number: l for l in lessons if l.number is not None}
    (book / "homework").mkdir()
    for hw in chosen_hw:
        (book / "homework" / f"{hw.name}.md").write_text(_homework_page(hw, by_number.get(hw.lesson), docs),
                                                         encoding="utf-8")
        site.pages.append(f"homework/{hw.name}")
    for path in sorted(sources):
        page = book / "source" / path
        page.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(package_root.parent / path, page)
        page.with_suffix(".md").write_text(_source_page(path, version), encoding="utf-8")
    site.source_pages = sorted(sources)
    (book / "index.md").write_text(_index_page(lessons, {hw.lesson: hw for hw in chosen_hw}, folder, version),
                                   encoding="utf-8")
    (book / "_config.yml").write_text(_config(version), encoding="utf-8")
    (book / "_toc.yml").write_text(_toc(lessons, [hw.name for hw in chosen_hw]), encoding="utf-8")
    static = book / "_assets"  # copied into the site's _static/
    static.mkdir()
    (static / "minitf-site.css").write_text(_CSS, encoding="utf-8")
    from .assets import copy_mathjax

    copy_mathjax(static / "mathjax")
    return site


def _jupyter_book(book: Path, builder: str, log: Callable[[str], None]) -> Path:
    """Run ``jupyter-book build`` on ``book``; the folder it wrote."""
    command = [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
               "build", str(book), "--builder", builder, "--keep-going"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=book)
    out = book / "_build" / builder
    if done.returncode != 0 or not (out / "index.html").is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SiteError(f"jupyter-book build --builder {builder} failed:\n{tail}")
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "WARNING" in line]
    for line in warnings[:20]:
        log(f"  jupyter-book: {line.strip()}")
    return out


def _clear(out: Path) -> None:
    """Make ``out`` an empty folder: refuses one that holds anything but an earlier site."""
    if out.exists():
        if not out.is_dir():
            raise SiteError(f"{out}: expected a folder for the site, got a file")
        if any(out.iterdir()):
            if not (out / _MARKER).is_file():
                raise SiteError(f"{out}: not empty and not a site minitf built; give an empty or new folder")
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def build_site(out, lessons=None, *, folder: Path | None = None, execute: bool | Iterable[str] = True,
               timeout: float = 300.0, pdf: bool = False, log: Callable[[str], None] = print) -> Site:
    """Build the course site into ``out`` (created, or an earlier site replaced).

    ``lessons``: the :class:`Lesson` entries to include (default: every one with a notebook);
    ``execute``: True (every notebook run first), False (shown as committed, no outputs) or the
    keys of the lessons to run; ``pdf``: also print the single-page build to
    ``out/minitf-course.pdf`` (needs Chromium).  Raises :class:`SiteError`."""
    problem = jupyter_book_missing()
    if problem:
        raise SiteError(problem)
    if pdf and find_chromium() is None:
        raise SiteError("the PDF is printed by headless Chromium, which is not installed (apt-get install chromium)")
    out = Path(out)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minitf-site-") as tmp:
        book = Path(tmp) / "book"
        book.mkdir()
        site = write_sources(book, lessons, folder=folder, execute=execute, timeout=timeout, log=log)
        html = _jupyter_book(book, "html", log)
        _clear(out)
        shutil.copytree(html, out, dirs_exist_ok=True)
        site.out = out
        if pdf:
            single = _jupyter_book(book, "singlehtml", log)
            site.pdf = build_pdf(single / "index.html", out / PDF_NAME)
    site.seconds = time.perf_counter() - t0
    return site


def build_pdf(page: Path, dest: Path, timeout: float = 300.0) -> Path:
    """Print ``page`` (the single-page build) to ``dest`` with headless Chromium; MathJax is
    given time to typeset first."""
    browser = find_chromium()
    if browser is None:
        raise SiteError("the PDF is printed by headless Chromium, which is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="minitf-chromium-") as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync", "--no-first-run",
                               f"--user-data-dir={profile}", "--no-pdf-header-footer", "--virtual-time-budget=120000",
                               f"--print-to-pdf={dest}", Path(page).resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)
    if not Path(dest).is_file() or Path(dest).stat().st_size == 0:
        raise SiteError(f"Chromium printed no PDF: {done.stderr.strip().splitlines()[-1:]}")
    return Path(dest)
