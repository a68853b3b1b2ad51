"""The figure key drawn as a figure (``key``): every meaning of :mod:`minitf.course.kit.figures.key` as a
swatch, a line sample and its label, then the neutrals.

A module of its own, above the key, the registry and the drawing helpers it uses, so that
:mod:`minitf.course.kit.figures.key` imports none of them.  This module imports matplotlib only inside
the function that draws.
"""
from __future__ import annotations

from .draw import new_figure
from .key import KEY, NEUTRAL, Meaning
from .registry import register

__all__ = ["key_figure"]


@register("key", lesson=None, title="The figure key: one meaning per colour, line style, marker and hatch")
def key_figure(seed: int = 0):
    """Every meaning of the key as a swatch, a line sample and its label; then the neutrals.

    ``seed`` is accepted for the registry's signature; the key has nothing random.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Rectangle

    groups: dict[str, list[Meaning]] = {}
    for m in KEY.values():
        groups.setdefault(m.group, []).append(m)
    # one row per meaning and per group heading, then the title, the neutrals and the footnote
    n_rows = 1 + len(groups) + len(KEY) + 2

    # inches, narrower than a 16:9 slide and no taller: text of 14 pt is at least 14 pt projected
    row_h = 0.385
    fig_w, fig_h = 11.4, row_h * n_rows + 0.15
    fig = new_figure(fig_w, fig_h)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, fig_w)
    ax.set_ylim(fig_h, 0)  # y in inches from the top
    text_pt = 14
    x_swatch, x_line, x_label, x_text = 0.1, 0.8, 1.7, 4.45
    y = row_h / 2 + 0.05
    ax.text(0.05, y, "Figure key", fontsize=text_pt + 4, fontweight="bold", va="center")
    ax.text(2.3, y, "one meaning per colour, line style, marker and hatch, in every figure",
            fontsize=text_pt, style="italic", va="center")
    y += row_h
    for group, meanings in groups.items():
        ax.text(0.05, y, group.upper(), fontsize=text_pt, fontweight="bold", va="center")
        y += row_h
        for m in meanings:
            # swatch: the fill as figures draw it (tint, full-colour edge and hatch)
            ax.add_patch(Rectangle((x_swatch, y - 0.13), 0.55, 0.26, linewidth=1.2, **m.fill()))
            # line sample: colour, line style and marker
            if m.hatch is not None:  # an area meaning: the swatch says it all
                pass
            elif m.name == "gradient":  # gradients are drawn as arrows
                ax.add_patch(FancyArrowPatch((x_line + 0.7, y), (x_line, y), arrowstyle="-|>", mutation_scale=14,
                                             linewidth=2.2, **m.arrow()))
            else:
                ax.add_line(Line2D([x_line, x_line + 0.7], [y, y], linewidth=2.2, markevery=[1], markersize=8,
                                   **m.line()))
            ax.text(x_label, y, m.label, fontsize=text_pt, fontweight="bold", va="center")
            ax.text(x_text, y, m.description, fontsize=text_pt, va="center")
            y += row_h
    ax.text(0.05, y, "NEUTRAL (NO MEANING)", fontsize=text_pt, fontweight="bold", va="center")
    x = 3.25
    for name, color in NEUTRAL.items():
        ax.add_patch(Rectangle((x, y - 0.13), 0.55, 0.26, facecolor=color, edgecolor=NEUTRAL["ink"],
                               linewidth=0.8))
        ax.text(x + 0.7, y, {"ink": "ink: text, axes", "paper": "paper: background",
                             "rule": "rule: grid, borders"}[name], fontsize=text_pt, va="center")
        x += 2.75
    y += row_h
    ax.text(0.05, y, "Fills are tints (translucent) of the colour, edge and hatch in the full colour; "
            "a tint keeps its meaning.", fontsize=text_pt, style="italic", va="center")
    return fig
