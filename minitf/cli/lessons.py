"""``minitf lessons``: the course's lessons, run headlessly or rendered for students.

    minitf lessons                       # every lesson: notebook, figures, homework
    minitf lessons --run                 # execute every notebook, with each one's time
    minitf lessons --run 8 9             # only these
    minitf lessons --html site/          # executed notebooks as HTML, plus index.html
    minitf lessons --slides slides/      # reveal.js slides, a slide per section
    minitf lessons --tag-slides          # (authors) write the slide metadata into the notebooks

Notebooks are executed with nbclient (Jupyter's runner) and rendered with nbconvert; they
run from the repository's ``lessons/`` folder and are never written back with outputs.
Rendering needs ``pip install -e '.[lessons]'``.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("keys", nargs="*", metavar="N",
                        help="only these lessons (1-10, A-C); default: every lesson with a notebook")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--run", action="store_true", help="execute the notebooks headlessly; print each time")
    mode.add_argument("--html", metavar="DIR", help="execute and render to HTML in DIR, with an index page")
    mode.add_argument("--slides", metavar="DIR", help="execute and render reveal.js slides in DIR")
    mode.add_argument("--tag-slides", action="store_true",
                      help="write the slide metadata (a slide per section) into the notebooks, outputs untouched")
    parser.add_argument("--dir", metavar="DIR", help="the lessons folder (default: ./lessons, or the repository's)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="time limit of one cell")


class _UsageError(Exception):
    """A bad argument: one line, exit code 2."""


def _selected(args, folder: Path | None):
    from minitf.course.kit.lessons import all_lessons, get_lesson

    try:
        chosen = [get_lesson(k) for k in args.keys] if args.keys else list(all_lessons())
    except ValueError as e:
        raise _UsageError(f"N: {str(e).removeprefix('lesson: ')}") from None
    if not (args.run or args.html or args.slides or args.tag_slides):
        return chosen
    if folder is None:
        raise _UsageError("--dir: no lessons/ folder here or beside the package; run from the repository "
                          "or give --dir")
    missing = [l.key for l in chosen if args.keys and not (l.notebook and (folder / l.notebook).is_file())]
    if missing:
        raise _UsageError(f"N: lesson {', '.join(missing)} has no notebook yet")
    return [l for l in chosen if l.notebook and (folder / l.notebook).is_file()]


def execute(path: Path, timeout: float = 300.0):
    """Run a notebook top to bottom in a fresh kernel, from its own folder -> (notebook, seconds).
    Raises nbclient's CellExecutionError, naming the cell, if a cell fails."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return notebook, time.perf_counter() - t0


def _mathjax(out: Path) -> str:
    """A local copy of MathJax beside the pages (formulas render offline and on any static
    host); its URL relative to the pages."""
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    if not (out / "mathjax").exists():
        shutil.copytree(source, out / "mathjax")
    return "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"  # the config the package ships


def _render(lessons, folder: Path, out: Path, kind: str, timeout: float) -> list[tuple]:
    from nbconvert import HTMLExporter, SlidesExporter
    from tqdm import tqdm

    out.mkdir(parents=True, exist_ok=True)
    mathjax = _mathjax(out)
    exporter = (HTMLExporter(template_name="lab", mathjax_url=mathjax) if kind == "html"
                else SlidesExporter(mathjax_url=mathjax))
    rows = []
    with tqdm(lessons, desc=kind, unit="notebook", file=sys.stderr, disable=None) as bar:
        for lesson in bar:
            bar.set_postfix_str(lesson.notebook)
            notebook, seconds = execute(folder / lesson.notebook, timeout)
            body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": lesson.title}})
            page = out / (Path(lesson.notebook).stem + (".html" if kind == "html" else ".slides.html"))
            page.write_text(body, encoding="utf-8")
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


def _list(lessons, folder: Path | None) -> None:
    from minitf.course.kit.figures import registry
    from minitf.grading import homeworks

    by_lesson: dict = {}
    for spec in registry.all_figures():
        by_lesson.setdefault(spec.lesson, []).append(spec.name)
    homework = {hw.lesson: name for name, hw in homeworks().items()}
    for lesson in lessons:
        present = lesson.notebook and folder is not None and (folder / lesson.notebook).is_file()
        notebook = f"lessons/{lesson.notebook}" if present else "(notebook not written yet)"
        print(f"{lesson.key:>2}  {lesson.title}")
        print(f"    {notebook}")
        if lesson.number is not None and lesson.number in by_lesson:
            print(f"    figures: {', '.join(by_lesson[lesson.number])}")
        if lesson.number in homework:
            print(f"    homework: minitf homework new {homework[lesson.number]} DEST")


def run(args: argparse.Namespace) -> int:
    from minitf.course.kit.lessons import lessons_dir

    try:
        if args.dir is not None and not Path(args.dir).is_dir():
            raise _UsageError(f"--dir: expected a folder of notebooks, got {args.dir!r}")
        if not args.timeout > 0:
            raise _UsageError(f"--timeout: expected a positive number of seconds, got {args.timeout}")
        folder = Path(args.dir) if args.dir else lessons_dir()
        lessons = _selected(args, folder)
        if (args.html or args.slides) and not lessons:
            raise _UsageError("N: none of these lessons has a notebook yet")
        if args.html or args.slides:
            try:
                import jupyter_server_mathjax  # noqa: F401
                import nbconvert  # noqa: F401
            except ImportError as e:
                raise _UsageError(f"--{'html' if args.html else 'slides'}: needs nbconvert and MathJax "
                                  f"({e.name} is missing): pip install -e '.[lessons]'") from None
    except _UsageError as e:
        print(f"minitf lessons: error: {e}", file=sys.stderr)
        return 2

    if args.tag_slides:
        _tag_slides(lessons, folder)
    elif args.run:
        from tqdm import tqdm

        total = 0.0
        with tqdm(lessons, desc="lessons", unit="notebook", file=sys.stderr, disable=None) as bar:
            for lesson in bar:
                bar.set_postfix_str(lesson.notebook)
                _, seconds = execute(folder / lesson.notebook, args.timeout)
                total += seconds
                tqdm.write(f"lesson {lesson.key:>2}  {lesson.notebook}: {seconds:.1f} s", file=sys.stdout)
        print(f"{len(lessons)} notebooks ran top to bottom in {total:.1f} s")
    elif args.html or args.slides:
        kind = "html" if args.html else "slides"
        out = Path(args.html or args.slides)
        rows = _render(lessons, folder, out, kind, args.timeout)
        print(f"{len(rows)} notebooks rendered; open {_index(rows, out, kind)}")
    else:
        _list(lessons, folder)
    return 0
