"""``minitf lessons``: the course's lessons, run headlessly, copied out, or published.

    minitf lessons                       # every lesson: notebook, figures, homework
    minitf lessons --run                 # execute every notebook, with each one's time
    minitf lessons --run 8 9             # only these
    minitf lessons --copy my-lessons/    # the notebooks and their README, for a student to run
    minitf lessons --site site/          # the course website (Jupyter Book): contents, search, math
    minitf lessons --site site/ --pdf    # ... and site/minitf-course.pdf
    minitf lessons --slides slides/      # reveal.js slides that work offline, a slide per section
    minitf lessons --html pages/         # executed notebooks as plain HTML pages, plus index.html
    minitf lessons --tag-slides          # (authors) write the slide metadata into the notebooks

The notebooks are the repository's ``lessons/`` folder (``./lessons``, or the one beside an
editable install), or the copy a wheel installs (``<prefix>/share/minitf/lessons``): every mode
works from any folder once minitf is installed.  Notebooks are executed with nbclient
(Jupyter's runner), from their own folder, and never written back with outputs.
``--site`` needs ``pip install 'minitf[site]'`` (Jupyter Book 1.x); ``--html`` and ``--slides``
need ``pip install 'minitf[lessons]'``; ``--slides`` also needs reveal.js, which it fetches once
with npm (:mod:`minitf.course.kit.assets`).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from minitf.course.kit.lessons import execute_notebook as execute  # noqa: F401  (the tests' name for it)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("keys", nargs="*", metavar="N",
                        help="only these lessons (1-10, A-C); default: every lesson with a notebook")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--run", action="store_true", help="execute the notebooks headlessly; print each time")
    mode.add_argument("--copy", metavar="DEST",
                      help="write the notebooks and their README into DEST (a new or empty folder), to run and edit")
    mode.add_argument("--site", metavar="DIR",
                      help="build the course website into DIR: Jupyter Book pages of the executed notebooks, "
                           "homework pages, the table of contents, previous/next links, search, math")
    mode.add_argument("--slides", metavar="DIR", help="execute and render reveal.js slides in DIR (work offline)")
    mode.add_argument("--html", metavar="DIR", help="execute and render plain HTML pages in DIR, with an index page")
    mode.add_argument("--tag-slides", action="store_true",
                      help="write the slide metadata (a slide per section) into the notebooks, outputs untouched")
    parser.add_argument("--no-execute", action="store_true",
                        help="with --site: show the notebooks as committed (no outputs, no figures) instead of "
                             "running them first")
    parser.add_argument("--pdf", action="store_true",
                        help="with --site: also print the whole course to DIR/minitf-course.pdf (headless Chromium)")
    parser.add_argument("--dir", metavar="DIR",
                        help="the lessons folder (default: ./lessons, the repository's, or the installed copy)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="time limit of one cell")


class _UsageError(Exception):
    """A bad argument: one line, exit code 2."""


_RENDER = ("run", "copy", "site", "slides", "html", "tag_slides")


def _mode(args) -> str | None:
    return next((m for m in _RENDER if getattr(args, m)), None)


def _selected(args, folder: Path | None):
    from minitf.course.kit.lessons import all_lessons, get_lesson

    try:
        chosen = [get_lesson(k) for k in args.keys] if args.keys else list(all_lessons())
    except ValueError as e:
        raise _UsageError(f"N: {str(e).removeprefix('lesson: ')}") from None
    if _mode(args) is None:
        return chosen
    if folder is None:
        raise _UsageError("--dir: no notebooks found (no ./lessons, none beside the package, none installed "
                          "with it); run from the repository or give --dir")
    missing = [l.key for l in chosen if args.keys and not (l.notebook and (folder / l.notebook).is_file())]
    if missing:
        raise _UsageError(f"N: lesson {', '.join(missing)} has no notebook yet")
    return [l for l in chosen if l.notebook and (folder / l.notebook).is_file()]


def _needs(flag: str, modules: tuple[str, ...], extra: str) -> None:
    import importlib.util

    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise _UsageError(f"{flag}: needs {', '.join(modules)} ({name} is missing): pip install 'minitf[{extra}]'")


def _check(args, lessons) -> None:
    """The problems argparse cannot see, as usage errors naming the flag."""
    if args.no_execute and not args.site:
        raise _UsageError("--no-execute: only used with --site")
    if args.pdf and not args.site:
        raise _UsageError("--pdf: only used with --site")
    if (args.site or args.html or args.slides or args.copy) and not lessons:
        raise _UsageError("N: none of these lessons has a notebook yet")
    if args.run or ((args.html or args.slides or args.site) and not args.no_execute):
        _needs(f"--{_mode(args).replace('_', '-')}", ("nbclient", "ipykernel"), "lessons")
    if args.html or args.slides:
        _needs(f"--{_mode(args)}", ("nbconvert", "jupyter_server_mathjax"), "lessons")
    if args.site:
        from minitf.course.kit.site import find_chromium, jupyter_book_missing

        problem = jupyter_book_missing()
        if problem:
            raise _UsageError(f"--site: {problem}")
        _needs("--site", ("jupyter_server_mathjax",), "site")
        if args.pdf and find_chromium() is None:
            raise _UsageError("--pdf: the PDF is printed by headless Chromium, which is not installed "
                              "(apt-get install chromium)")
    if args.copy:
        dest = Path(args.copy)
        if dest.exists() and not dest.is_dir():
            raise _UsageError(f"--copy: expected a folder, got the file {args.copy!r}")
        taken = [name for name in [l.notebook for l in lessons] + ["README.md"] if (dest / name).exists()]
        if taken:
            raise _UsageError(f"--copy: {dest / taken[0]} exists (a copy is never overwritten): give a new or "
                              f"empty folder")


_NOTEBOOK_LINK = re.compile(r"\]\((?P<stem>[0-9A-Z][0-9]?-[a-z0-9-]+)\.ipynb(?P<frag>#[^)\s]*)?\)")


def _render(lessons, folder: Path, out: Path, kind: str, timeout: float) -> list[tuple]:
    """Execute and render each lesson as a plain HTML page or as slides; (lesson, page, seconds) each."""
    from tqdm import tqdm

    from minitf.course.kit.lessons import slide_types

    out.mkdir(parents=True, exist_ok=True)
    pages = {Path(l.notebook).stem for l in lessons}
    suffix = ".html" if kind == "html" else ".slides.html"
    if kind == "html":
        from nbconvert import HTMLExporter

        from minitf.course.kit.assets import MATHJAX_CONFIG, copy_mathjax

        copy_mathjax(out / "mathjax")
        exporter = HTMLExporter(template_name="lab", mathjax_url=f"mathjax/MathJax.js?config={MATHJAX_CONFIG}")
    rows = []
    with tqdm(lessons, desc=kind, unit="notebook", file=sys.stderr, disable=None) as bar:
        for lesson in bar:
            bar.set_postfix_str(lesson.notebook)
            notebook, seconds = execute(folder / lesson.notebook, timeout)
            for cell in notebook.cells:  # a link to a lesson rendered here points at its page
                if cell.cell_type == "markdown":
                    cell.source = _NOTEBOOK_LINK.sub(
                        lambda m: f"]({m['stem']}{suffix}{m['frag'] or ''})" if m["stem"] in pages else m[0],
                        cell.source)
            page = out / (Path(lesson.notebook).stem + suffix)
            if kind == "html":
                body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": lesson.title}})
                page.write_text(body, encoding="utf-8")
            else:
                from minitf.course.kit.slides import write_slides

                # the slide rule as it is now, whatever the notebook's metadata says
                for cell, kind_ in zip(notebook.cells, slide_types(notebook.cells)):
                    cell.metadata["slideshow"] = {"slide_type": kind_}
                write_slides(notebook, page, lesson.title)
            rows.append((lesson, page, seconds))
            tqdm.write(f"lesson {lesson.key}: {page} ({seconds:.1f} s)", file=sys.stdout)
    return rows


def _index(rows, out: Path, kind: str) -> Path:
    from html import escape

    items = "\n".join(f'  <li><a href="{escape(page.name)}">Lesson {escape(l.key)}: {escape(l.title)}</a>'
                      f' &mdash; {escape(l.shows)}</li>' for l, page, _ in rows)
    what = "lessons" if kind == "html" else "slides"
    text = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>minitf: the course ({what})</title></head>\n"
            f"<body>\n<h1>minitf: the course ({what})</h1>\n<ol>\n{items}\n</ol>\n</body></html>\n")
    path = out / "index.html"
    path.write_text(text, encoding="utf-8")
    return path


def _tag_slides(lessons, folder: Path) -> None:
    import nbformat

    from minitf.course.kit.lessons import slide_types

    for lesson in lessons:
        path = folder / lesson.notebook
        notebook = nbformat.read(path, as_version=4)
        for cell, kind in zip(notebook.cells, slide_types(notebook.cells)):
            cell.metadata["slideshow"] = {"slide_type": kind}
        nbformat.write(notebook, path)
        print(f"lesson {lesson.key}: {path}: slide metadata written")


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is under it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _copy(lessons, folder: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    names = [l.notebook for l in lessons] + (["README.md"] if (folder / "README.md").is_file() else [])
    for name in names:
        shutil.copyfile(folder / name, dest / name)
    print(f"wrote {len(lessons)} notebooks{' and README.md' if 'README.md' in names else ''} to {dest}")
    print(f"run them with: jupyter lab {dest}   (pip install 'minitf[lessons]')")


def _list(lessons, folder: Path | None) -> None:
    from minitf.course.kit.figures import registry
    from minitf.grading import homeworks

    by_lesson: dict = {}
    for spec in registry.all_figures():
        by_lesson.setdefault(spec.lesson, []).append(spec.name)
    homework = {hw.lesson: name for name, hw in homeworks().items()}
    for lesson in lessons:
        present = lesson.notebook and folder is not None and (folder / lesson.notebook).is_file()
        notebook = _shown(folder / lesson.notebook) if present else "(notebook not written yet)"
        print(f"{lesson.key:>2}  {lesson.title}")
        print(f"    {notebook}")
        if lesson.number is not None and lesson.number in by_lesson:
            print(f"    figures: {', '.join(by_lesson[lesson.number])}")
        if lesson.number in homework:
            print(f"    homework: minitf homework new {homework[lesson.number]} DEST")
    if folder is not None:
        print(f"\nnotebooks: {_shown(folder)}; `minitf lessons --copy DEST` writes them out to run and edit")


def _run_all(lessons, folder: Path, timeout: float) -> None:
    from tqdm import tqdm

    total = 0.0
    with tqdm(lessons, desc="lessons", unit="notebook", file=sys.stderr, disable=None) as bar:
        for lesson in bar:
            bar.set_postfix_str(lesson.notebook)
            _, seconds = execute(folder / lesson.notebook, timeout)
            total += seconds
            tqdm.write(f"lesson {lesson.key:>2}  {lesson.notebook}: {seconds:.1f} s", file=sys.stdout)
    print(f"{len(lessons)} notebooks ran top to bottom in {total:.1f} s")


def _site(args, lessons, folder: Path) -> int:
    from minitf.course.kit.site import SiteError, build_site

    try:
        site = build_site(args.site, lessons, folder=folder, execute=not args.no_execute, timeout=args.timeout,
                          pdf=args.pdf, log=print)
    except SiteError as e:
        print(f"minitf lessons: --site: {e}", file=sys.stderr)
        return 1
    print(f"{len(site.pages)} pages ({len(lessons)} notebooks, {len(site.source_pages)} source files) in "
          f"{site.seconds:.0f} s; open {site.index}")
    if site.pdf is not None:
        print(f"the course as one PDF: {site.pdf}")
    print(f"serve it with: python -m http.server --directory {args.site}")
    return 0


def run(args: argparse.Namespace) -> int:
    from minitf.course.kit.lessons import lessons_dir

    try:
        if args.dir is not None and not Path(args.dir).is_dir():
            raise _UsageError(f"--dir: expected a folder of notebooks, got {args.dir!r}")
        if not args.timeout > 0:
            raise _UsageError(f"--timeout: expected a positive number of seconds, got {args.timeout}")
        folder = Path(args.dir) if args.dir else lessons_dir()
        lessons = _selected(args, folder)
        _check(args, lessons)
    except _UsageError as e:
        print(f"minitf lessons: error: {e}", file=sys.stderr)
        return 2

    if args.tag_slides:
        _tag_slides(lessons, folder)
    elif args.run:
        _run_all(lessons, folder, args.timeout)
    elif args.copy:
        _copy(lessons, folder, Path(args.copy))
    elif args.site:
        return _site(args, lessons, folder)
    elif args.html or args.slides:
        kind = "html" if args.html else "slides"
        out = Path(args.html or args.slides)
        if args.slides:
            from minitf.course.kit.assets import AssetMissing, revealjs_source

            try:
                revealjs_source()  # before any notebook runs: found, or fetched once with npm
            except AssetMissing as e:
                print(f"minitf lessons: --slides: {e}", file=sys.stderr)
                return 1
        rows = _render(lessons, folder, out, kind, args.timeout)
        print(f"{len(rows)} notebooks rendered; open {_index(rows, out, kind)}")
    else:
        _list(lessons, folder)
    return 0
