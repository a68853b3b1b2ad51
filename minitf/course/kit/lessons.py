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
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Lesson", "COURSE_PATH_ENV", "lesson_packages", "lesson_folders"]

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
