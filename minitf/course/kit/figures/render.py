"""Saving figures reproducibly: the same figure gives the same bytes on every run.

* SVG: ids are hashed with the fixed ``svg.hashsalt`` of the course style (not random),
  text is drawn as paths, and the metadata carries no date and no matplotlib version.
* PNG: no ``Software`` entry (PNG from Agg has no timestamp to begin with).
* PDF: no ``CreationDate``, no ``Creator``/``Producer`` version strings.

So regenerating the figures on one machine changes a file in ``git diff`` only when the
picture changed.  On another machine a figure drawn from a training run can differ in the last
digits of its coordinates (float64 sums in another BLAS build or CPU kernel), so whether
``figures/`` is current is decided by :mod:`.compare`, within a tolerance, not by the bytes.
Everything runs on the Agg canvas, never through pyplot.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Iterable, Sequence

from .key import style
from .registry import FigureSpec, get

FORMATS: tuple[str, ...] = ("svg", "png", "pdf")
"""File formats :func:`save` writes."""

DEFAULT_FORMATS: tuple[str, ...] = ("svg", "png")


def _metadata(fmt: str, title: str | None) -> dict:
    if fmt == "svg":
        md = {"Date": None, "Creator": None}
    elif fmt == "png":
        md = {"Software": None}
    else:  # pdf
        md = {"CreationDate": None, "Creator": None, "Producer": None}
    if title:
        md["Title"] = title
    return md


def check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """``formats`` as a tuple, after checking each is one of :data:`FORMATS`."""
    if isinstance(formats, str):
        formats = (formats,)
    out = tuple(formats)
    unknown = [f for f in out if f not in FORMATS]
    if unknown or not out:
        raise ValueError(f"formats: expected one or more of {', '.join(FORMATS)}, got {list(out)}")
    return out


def save(fig, stem: str | Path, formats: Sequence[str] = DEFAULT_FORMATS, title: str | None = None) -> list[Path]:
    """Write ``fig`` to ``<stem>.<fmt>`` for each format; return the paths written.

    Saves under the course style (which fixes ``svg.hashsalt`` and the ``savefig`` settings),
    with metadata that holds no timestamp or software version, so repeated runs write
    byte-identical files.  ``title`` goes into the files' metadata.  The figure is closed
    afterwards.
    """
    formats = check_formats(formats)
    stem = Path(stem)
    paths = []
    try:
        with style():
            for fmt in formats:
                path = stem.with_name(f"{stem.name}.{fmt}")
                fig.savefig(path, format=fmt, metadata=_metadata(fmt, title))
                paths.append(path)
    finally:
        close(fig)
    return paths


def close(fig) -> None:
    """Release ``fig``.  Figures made with :func:`minitf.course.kit.figures.draw.new_figure` are not
    tracked by pyplot and need nothing more; one made through pyplot is closed there too."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)


def render_figure(figure: str | FigureSpec, out_dir: str | Path, formats: Sequence[str] = DEFAULT_FORMATS,
           seed: int = 0) -> list[Path]:
    """Draw a registered figure (by name or spec) and save it as ``out_dir/<name>.<fmt>``.

    Returns the paths written.  ``out_dir`` must exist.
    """
    spec = get(figure) if isinstance(figure, str) else figure
    fig = spec.make(seed=seed)
    return save(fig, Path(out_dir) / spec.name, formats, title=spec.title)


def png_bytes(fig) -> bytes:
    """``fig`` as the PNG bytes :func:`save` would write (course style, no metadata)."""
    buf = io.BytesIO()
    with style():
        fig.savefig(buf, format="png", metadata=_metadata("png", None))
    return buf.getvalue()


def show(figure, seed: int = 0) -> None:
    """Display a figure in a notebook as the PNG the course ships.

    ``figure``: a matplotlib Figure, or a registered figure's name (drawn with ``seed``).
    Needs IPython (any Jupyter install has it).
    """
    from IPython.display import Image, display

    fig = get(figure).make(seed=seed) if isinstance(figure, str) else figure
    display(Image(png_bytes(fig)))
