"""Small drawing helpers shared by the figure modules.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas: no pyplot, so no
global "current figure" that leaks from one figure into the next, and nothing to close.
"""
from __future__ import annotations

from .key import KEY, NEUTRAL, TINT, Meaning


def new_figure(width: float, height: float):
    """A blank ``Figure`` of ``width`` x ``height`` inches on an Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not (width > 0 and height > 0):
        raise ValueError(f"width, height: expected positive sizes in inches, got {width!r} x {height!r}")
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def box_fill(meaning: Meaning | str | None, tint: float | None = TINT) -> dict:
    """Keyword arguments for a box of ``meaning`` (a key entry or its name): its tint, edge and
    hatch in the full colour (:meth:`~minitf.course.kit.figures.key.Meaning.fill`); ``None``: paper with an
    ink edge, for a box that means nothing in particular."""
    if meaning is None:
        return {"facecolor": NEUTRAL["paper"], "edgecolor": NEUTRAL["ink"]}
    if isinstance(meaning, str):
        meaning = KEY[meaning]
    return meaning.fill(tint)


def text_box(ax, x: float, y: float, w: float, h: float, meaning: Meaning | str | None, lines, *,
             fontsize: float, line: float, bold_first: bool = True, tint: float | None = TINT,
             rounding: float = 0.15, linewidth: float = 1.4):
    """A ``w`` x ``h`` rounded box centred at (x, y), filled as :func:`box_fill` says, with
    ``lines`` of text centred in it ``line`` apart (the first one bold if ``bold_first``)."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=f"round,pad=0.02,rounding_size={rounding}",
                                linewidth=linewidth, **box_fill(meaning, tint)))
    n = len(lines)
    for i, text in enumerate(lines):
        ax.text(x, y + (n - 1) / 2 * line - i * line, text, ha="center", va="center", fontsize=fontsize,
                color=NEUTRAL["ink"], fontweight="bold" if (i == 0 and bold_first) else "normal")


def token_cell(ax, x: float, y: float, text: str, meaning: Meaning | str | None,
               width: float = 0.86, height: float = 0.62, fontsize: float = 10, **text_kw):
    """A token drawn as a rounded box centred at (x, y), filled with the tint of ``meaning``.

    ``meaning`` is a key entry (or its name); ``None`` draws a plain ink-outlined box, for
    tokens that are neither target nor prediction (the start token).  Returns the patch.
    """
    from matplotlib.patches import FancyBboxPatch

    pad = 0.06
    box = FancyBboxPatch((x - width / 2 + pad, y - height / 2 + pad), width - 2 * pad, height - 2 * pad,
                         boxstyle=f"round,pad={pad}", linewidth=1.2, **box_fill(meaning))
    ax.add_patch(box)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=NEUTRAL["ink"], **text_kw)
    return box


# ---- legible on a projector ------------------------------------------------------------------
SLIDE_WIDTH = 13.3
"""Inches: the width of a 16:9 slide.  A figure saved W inches wide is shown there scaled by
``SLIDE_WIDTH / W``."""

SLIDE_MIN_PT = 14.0
"""Points: the smallest text that reads from the back of a room on a projected slide."""


def slide_pt(width: float) -> float:
    """The smallest font size (points) a figure saved ``width`` inches wide may use so that
    its text is at least :data:`SLIDE_MIN_PT` on a slide: ``14 * width / 13.3``.

    ``tests/course/kit/test_figures_slides.py`` measures every converted figure against this bar.
    """
    return SLIDE_MIN_PT * width / SLIDE_WIDTH


def slide_axes(ax, size: float) -> None:
    """Set the tick labels and the axis labels of ``ax`` to ``size`` points, so that none falls
    back to the style's smaller defaults (give titles and legends their size where they are
    made)."""
    ax.tick_params(which="both", labelsize=size)
    ax.xaxis.label.set_size(size)
    ax.yaxis.label.set_size(size)
