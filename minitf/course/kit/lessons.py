"""The course as a whole: its lessons and appendices, each a folder found by scanning.

A lesson is a package ``lNN_<slug>`` (``l08_teacher_forcing``), an appendix
``appendix_<letter>_<slug>``; its ``__init__.py`` defines ``LESSON``, a :class:`Lesson`.  The
folder holds everything of the lesson: its runs and measurements, its figures
(``figures*.py``), its formulas for Appendix A (``formulas.py``), its stored results
(``results/``) and its homework (``homework/``).  Nothing lists the lessons anywhere else:
``minitf lessons``, ``minitf figures``, ``minitf homework list`` and ``minitf grade`` find them
here.

The course's own folders are the packages under ``minitf/course/``.  More can live outside
the package: ``MINITF_COURSE_PATH`` (folders separated by ``os.pathsep``) names folders
whose ``lNN_*`` and ``appendix_*`` sub-folders are lessons too, importable by their folder
name -- how a lecturer tries a new lesson before copying it in.

A lesson's notebook lives in the repository's ``lessons/`` folder, named
``NN-<slug>.ipynb`` (``Lesson.notebook``); the wheel installs that folder's notebooks and README
to ``<prefix>/share/minitf/lessons`` (:func:`lessons_dir` finds either).  Slides: each notebook
carries reveal.js metadata (``cell.metadata.slideshow.slide_type``) so that ``jupyter nbconvert
--to slides`` (or ``minitf lessons --slides``) gives a slide per section and a sub-slide per
demonstration, the set-up cell left out; :func:`slide_types` is the rule, ``minitf lessons
--tag-slides`` writes it into the notebooks.
"""
from __future__ import annotations

import importlib
import os
import re
import site
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Lesson", "COURSE_PATH_ENV", "lesson_packages", "lesson_folders", "all_lessons", "get_lesson",
           "lessons_dir", "installed_lessons_dir", "execute_notebook", "slide_types"]

COURSE_PATH_ENV = "MINITF_COURSE_PATH"
_FOLDER = re.compile(r"(l(\d\d)|appendix_([a-z]))_[a-z0-9_]+\Z")
_COURSE_DIR = Path(__file__).resolve().parents[1]  # minitf/course


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


def _order(name: str) -> tuple:
    m = _FOLDER.match(name)
    return (0, int(m.group(2)), name) if m.group(2) else (1, m.group(3), name)


def lesson_folders() -> list[tuple[str, Path]]:
    """``(package name, folder)`` of every lesson and appendix, in course order: lessons by
    number, then appendices by letter.  Folders from ``MINITF_COURSE_PATH`` are put on
    ``sys.path`` so that their package names import."""
    found = {}
    roots = [(_COURSE_DIR, "minitf.course.")]
    for extra in filter(None, os.environ.get(COURSE_PATH_ENV, "").split(os.pathsep)):
        root = Path(extra).resolve()
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        roots.append((root, ""))
    for root, prefix in roots:
        if not root.is_dir():
            continue
        for folder in root.iterdir():
            if _FOLDER.match(folder.name) and (folder / "__init__.py").is_file():
                if folder.name in found:
                    raise ValueError(f"{COURSE_PATH_ENV}: the lesson folder {folder.name!r} is in {found[folder.name][1]} "
                                     f"and in {folder.parent}")
                found[folder.name] = (prefix + folder.name, folder)
    return [found[name] for name in sorted(found, key=_order)]


def lesson_packages() -> list[str]:
    """The package name of every lesson and appendix, in course order (:func:`lesson_folders`)."""
    return [package for package, _ in lesson_folders()]


def all_lessons() -> tuple[Lesson, ...]:
    """Every lesson and appendix of the course, in course order: each folder's ``LESSON``."""
    found = []
    for package in lesson_packages():
        lesson = getattr(importlib.import_module(package), "LESSON", None)
        if not isinstance(lesson, Lesson):
            raise TypeError(f"{package}: expected a LESSON = Lesson(...) in its __init__.py, got {type(lesson).__name__}")
        found.append(lesson)
    return tuple(found)


def get_lesson(key) -> Lesson:
    key = str(key).upper()
    lessons = all_lessons()
    for lesson in lessons:
        if lesson.key == key:
            return lesson
    raise ValueError(f"lesson: expected one of {', '.join(l.key for l in lessons)}, got {key!r}")


LESSONS_DATA = Path("share") / "minitf" / "lessons"
"""Where an installed minitf keeps the notebooks: ``<prefix>/share/minitf/lessons`` (setup.cfg's
``[options.data_files]`` puts ``lessons/*.ipynb`` and ``lessons/README.md`` there)."""


def installed_lessons_dir() -> Path | None:
    """The notebooks installed with the package (a wheel's data files), or None: under the
    environment's prefix (a venv, a system install) or the user's base (``pip install --user``)."""
    bases = [sysconfig.get_path("data"), sys.prefix, getattr(site, "USER_BASE", None)]
    for base in filter(None, dict.fromkeys(bases)):
        candidate = Path(base) / LESSONS_DATA
        if candidate.is_dir() and any(candidate.glob("*.ipynb")):
            return candidate
    return None


def lessons_dir(start: Path | None = None) -> Path | None:
    """The course's notebooks: ``lessons/`` under ``start`` (the working directory by default),
    else the repository's beside the package (an editable install), else the copy installed
    with the package (:func:`installed_lessons_dir`).  None if there is none."""
    for base in (Path.cwd() if start is None else Path(start), Path(__file__).resolve().parents[3]):
        candidate = base / "lessons" if base.name != "lessons" else base
        if candidate.is_dir() and any(candidate.glob("*.ipynb")):
            return candidate
    return installed_lessons_dir()


def execute_notebook(path: Path, timeout: float = 300.0):
    """Run a notebook top to bottom in a fresh kernel, from its own folder -> (notebook, seconds).
    Raises nbclient's CellExecutionError, naming the cell, if a cell fails.  Needs nbclient and
    ipykernel (``pip install 'minitf[lessons]'``)."""
    import nbclient
    import nbformat

    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return notebook, time.perf_counter() - t0


def slide_types(cells) -> list[str]:
    """The reveal.js slide type of each cell: a slide for the title and for each ``##``
    section, a sub-slide for each demonstration (a code cell, together with the prose cell
    just before it), and the rest continuing the current one (``"-"``).  The set-up cell --
    the code between the title and the notebook's first prose after it (imports, the BLAS
    thread setting) -- is left out of the slides (``"skip"``): the title slide holds the title
    and its prose only."""
    types = []
    for i, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first = source.lstrip().splitlines()[0] if source.strip() else ""
        if i == 0 or (cell["cell_type"] == "markdown" and first.startswith(("# ", "## "))):
            types.append("slide")
        elif cell["cell_type"] == "code" and all(c["cell_type"] != "markdown" for c in cells[1:i]):
            types.append("skip")  # the set-up: code right after the title, before any prose
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
