"""The course's figures: a shared key, a registry of figure functions, reproducible files.

Each module imports only the ones listed before it:

* :mod:`minitf.course.kit.figures.key` -- what every colour, line style, marker and hatch means
  (``KEY["encoder"].color``), the matplotlib style (``with style(): ...``), and the check
  that a figure keeps to the key (:func:`off_key_colors`).
* :mod:`minitf.course.kit.figures.registry` -- ``@register(name, lesson, title)``; ``all_figures()``,
  ``get(name)``, ``lessons()``.
* :mod:`minitf.course.kit.figures.draw` -- small drawing helpers (a figure, a token cell, a box of text).
* :mod:`minitf.course.kit.figures.render` -- ``save`` / ``render_figure`` with byte-identical output;
  ``show`` displays a figure in a notebook.
* :mod:`minitf.course.kit.figures.compare` -- whether two files of a figure show the same picture,
  within a tolerance (the test of the committed ``figures/``).
* :mod:`minitf.course.kit.figures.key_figure` -- the key drawn as a figure; each lesson folder's
  ``figures*.py`` (and an appendix's ``figures.py``) -- its figures.

``minitf figures`` regenerates them all into ``figures/``.  Importing this package does not
import matplotlib; drawing does.
"""
from .key import KEY, NEUTRAL, Meaning, off_key_colors, style
from .registry import FigureSpec, all_figures, get, lessons, names, register
from .render import FORMATS, png_bytes, render_figure, save, show

__all__ = ["KEY", "NEUTRAL", "Meaning", "off_key_colors", "style", "FigureSpec", "all_figures", "get",
           "lessons", "names", "register", "FORMATS", "png_bytes", "render_figure", "save", "show"]
