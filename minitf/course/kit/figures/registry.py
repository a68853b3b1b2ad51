"""Every figure of the course, by a stable name.

A figure is a function ``fn(seed: int = 0) -> matplotlib.figure.Figure`` registered with
:func:`register`; it is deterministic for a seed and draws only with the figure key's
colours (``minitf/course/kit/figures/key.py``).  The registry finds figures by importing each
lesson folder's ``figures.py`` (and ``figures_*.py``): a lesson adds its figures by writing
them there, and nothing else lists them (:func:`figure_modules`)::

    # minitf/course/l09_inference/figures.py
    from ..kit.figures.registry import register

    @register("l09_kv_cache", lesson=9, title="Two KV caches: one grows, one is computed once")
    def kv_cache(seed: int = 0):
        ...

``minitf figures`` (``minitf/cli/figures.py``) renders them all into ``figures/``.

Imports point down: the key (:mod:`minitf.course.kit.figures.key`) at the bottom, this registry above it,
then the drawing helpers (:mod:`minitf.course.kit.figures.draw`), then the modules that register figures
(the key's own figure is :mod:`minitf.course.kit.figures.key_figure`) and :mod:`minitf.course.kit.figures.render`.
"""
from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Callable

from ....checks import check_int
from .key import style

KEY_FIGURE_MODULE = "minitf.course.kit.figures.key_figure"  # the key itself (course-wide)


def figure_modules() -> tuple[str, ...]:
    """Modules whose import registers figures, in the order their figures are listed: the key's,
    then every lesson folder's ``figures.py`` and ``figures_*.py``, in course order
    (:func:`minitf.course.kit.lessons.lesson_folders`)."""
    from ..lessons import lesson_folders

    modules = [KEY_FIGURE_MODULE]
    for package, folder in lesson_folders():
        names = sorted(p.stem for p in folder.glob("figures*.py"))
        modules += [f"{package}.{name}" for name in sorted(names, key=lambda n: (n != "figures", n))]
    return tuple(modules)

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True)
class FigureSpec:
    """A registered figure.

    Attributes
    ----------
    name : str
        Stable name, also the output file's stem (``figures/<name>.svg``).
    lesson : int or None
        The lesson it belongs to; ``None`` for a course-wide figure (the key).
    title : str
        What the figure shows, one line.
    fn : callable
        ``fn(seed: int = 0) -> matplotlib.figure.Figure``.
    """

    name: str
    lesson: int | None
    title: str
    fn: Callable

    @property
    def where(self) -> str:
        """``"lesson 8"`` or ``"course-wide"``."""
        return "course-wide" if self.lesson is None else f"lesson {self.lesson}"

    def make(self, seed: int = 0):
        """Draw the figure under the course style and return it (a fresh ``Figure``)."""
        from matplotlib.figure import Figure

        seed = check_int("seed", seed)
        with style():
            fig = self.fn(seed=seed)
        if not isinstance(fig, Figure):
            raise TypeError(f"figure {self.name!r}: expected {self.fn.__qualname__}(seed) to return a "
                            f"matplotlib.figure.Figure, got {type(fig).__name__}")
        return fig


_REGISTRY: dict[str, FigureSpec] = {}
_loaded = False
_modules: tuple[str, ...] = ()


def register(name: str, lesson: int | None, title: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn(seed: int = 0) -> Figure`` under ``name``.

    Parameters
    ----------
    name : str
        Lower-case letters, digits and underscores, starting with a letter (it becomes a
        file name); unique across the course.  By convention ``l08_<what>`` for Lesson 8.
    lesson : int or None
        Lesson number (>= 1), or ``None`` for a course-wide figure.
    title : str
        What the figure shows, one line.

    Returns the function unchanged.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name: expected lower-case letters, digits and underscores starting with a letter, "
                         f"got {name!r}")
    if lesson is not None:
        check_int("lesson", lesson, low=1, hint="a lesson number, or None for a course-wide figure")
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title: expected a non-empty string, got {title!r}")

    def decorator(fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"register({name!r}): expected a function, got {type(fn).__name__}")
        params = inspect.signature(fn).parameters
        if "seed" not in params:
            raise TypeError(f"register({name!r}): expected {fn.__qualname__} to take a 'seed' argument, "
                            f"got parameters {list(params)}")
        old = _REGISTRY.get(name)
        if old is not None and (old.fn.__module__, old.fn.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"name: {name!r} is already registered by {old.fn.__module__}.{old.fn.__qualname__}")
        _REGISTRY[name] = FigureSpec(name, lesson, title, fn)  # re-registering the same function (a reload) replaces it
        return fn

    return decorator


def load() -> None:
    """Import every module of :func:`figure_modules` (once), registering their figures."""
    global _loaded, _modules
    if not _loaded:
        _modules = figure_modules()
        for module in _modules:
            importlib.import_module(module)
        _loaded = True


def _order(spec: FigureSpec) -> tuple[int, int, int]:
    """By lesson, then by module in :func:`figure_modules`' order, then in registration order:
    the same whichever module a program happened to import first."""
    module = spec.fn.__module__
    rank = _modules.index(module) if module in _modules else len(_modules)
    return (0 if spec.lesson is None else spec.lesson, rank, list(_REGISTRY).index(spec.name))


def all_figures(lesson: int | None = None) -> list[FigureSpec]:
    """Every registered figure: course-wide first, then by lesson, then by module in
    :func:`figure_modules`' order, then in registration order.

    With ``lesson``, only that lesson's figures (course-wide figures not included).
    """
    load()
    specs = sorted(_REGISTRY.values(), key=_order)
    if lesson is not None:
        specs = [s for s in specs if s.lesson == lesson]
    return specs


def names() -> list[str]:
    """Names of every registered figure, in :func:`all_figures` order."""
    return [s.name for s in all_figures()]


def lessons() -> list[int]:
    """Lesson numbers that have at least one figure, ascending."""
    return sorted({s.lesson for s in all_figures() if s.lesson is not None})


def get(name: str) -> FigureSpec:
    """The figure registered as ``name``; ``ValueError`` listing the names if there is none."""
    load()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"name: expected one of the registered figures ({', '.join(names())}), "
                         f"got {name!r}") from None
