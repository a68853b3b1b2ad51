"""The figure key: what every colour, line style, marker and hatch means, course-wide.

Every figure of the course draws with these meanings and with nothing else, so a reader
who has learnt the key once can read any figure: indigo is always the encoder, a dashed
wine-red arrow is always a gradient, a grey hatched cell is always a masked position (hidden from
the model: a blocked attention weight, or text a pretraining noise replaced).

* **One meaning per colour.**  No two meanings share a colour, and no meaning uses a
  neutral (ink, paper, rule).  ``tests/course/kit/test_figures.py`` checks this, and checks that every
  registered figure uses only these colours (:func:`off_key_colors`).
* **Colour-blind safe, and apart on a projector.**  The nine chromatic meanings come from
  Paul Tol's *muted* and *bright* schemes and Okabe & Ito's palette, chosen so that the
  model's four parts (encoder, decoder, cross-attention, loss) are four different hues --
  blue, orange, teal, purple -- never neighbouring tints of one.  ``tests/course/kit/test_figures.py``
  checks the distances with colorspacious's colour-vision simulation (CAM02-UCS, under
  normal vision and full deuteranomaly, protanomaly and tritanomaly): at least 17 between
  any two of the four parts, at least 12 between any two meanings.  The two "absent" meanings (masked position, padding) are greys, told
  apart from each other and from the chromatic colours by their hatch as well.
* **Tints keep the meaning.**  A meaning colour may be drawn translucent (``alpha``), e.g.
  behind text; :meth:`Meaning.fill` does that with :data:`TINT`.

Use it like this::

    from minitf.course.kit.figures.key import KEY, style
    with style():
        ax.plot(x, acc_tf, label=KEY["teacher_forced"].label, **KEY["teacher_forced"].line())
        ax.add_patch(Rectangle((0, 0), 1, 1, **KEY["masked"].fill()))

The key drawn as a figure is :mod:`minitf.course.kit.figures.key_figure`.  This module imports nothing
else of :mod:`minitf.course.kit.figures` (the registry, the drawing helpers and every figure import it),
and matplotlib only inside the functions that use it.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Iterator, Mapping

STYLE_PATH = Path(__file__).with_name("minitf.mplstyle")
"""The course's matplotlib style file, applied by :func:`style`."""

TINT = 0.3
"""Alpha of a meaning colour used as a fill behind text (a tint keeps the meaning)."""


@dataclass(frozen=True)
class Meaning:
    """One entry of the key: a meaning and how it is drawn.

    Attributes
    ----------
    name : str
        The key's identifier, e.g. ``"cross_attention"``.
    label : str
        What a legend says, e.g. ``"cross-attention"``.
    description : str
        One line for the key figure: where the meaning shows up.
    group : str
        Heading under which the key figure lists it.
    color : str
        ``"#RRGGBB"``; unique across the key.
    linestyle : str
        Matplotlib line style for lines and arrows of this meaning.
    marker : str or None
        Marker for points of this meaning (None: drawn without markers).
    hatch : str or None
        Hatch for areas of this meaning (None: plain fill).
    """

    name: str
    label: str
    description: str
    group: str
    color: str
    linestyle: str = "-"
    marker: str | None = None
    hatch: str | None = None

    @property
    def rgb(self) -> tuple[int, int, int]:
        """The colour as three ints in [0, 255]."""
        return hex_to_rgb(self.color)

    def line(self, **overrides) -> dict:
        """Keyword arguments for ``ax.plot`` / ``Line2D``: colour, line style, marker."""
        kw = {"color": self.color, "linestyle": self.linestyle}
        if self.marker is not None:
            kw.update(marker=self.marker, markerfacecolor=self.color, markeredgecolor=self.color)
        kw.update(overrides)
        return kw

    def arrow(self, **overrides) -> dict:
        """Keyword arguments for a ``FancyArrowPatch`` (or ``arrowprops``): colour and line style."""
        kw = {"color": self.color, "linestyle": self.linestyle}
        kw.update(overrides)
        return kw

    def fill(self, tint: float | None = TINT, **overrides) -> dict:
        """Keyword arguments for a patch (``Rectangle``, ``FancyBboxPatch``...).

        The face is the colour at alpha ``tint`` (``None``: opaque), the edge and the hatch
        the full colour.
        """
        r, g, b = (c / 255 for c in self.rgb)
        face = (r, g, b, 1.0 if tint is None else float(tint))
        kw = {"facecolor": face, "edgecolor": self.color}
        if self.hatch is not None:
            kw["hatch"] = self.hatch
        kw.update(overrides)
        return kw

    def cmap(self):
        """A colormap from paper (white) to this colour, named ``"minitf.<name>"``.

        Heat maps (attention weights, say) use it so that the map itself carries a meaning;
        :func:`off_key_colors` accepts images drawn with it.
        """
        from matplotlib.colors import LinearSegmentedColormap

        return LinearSegmentedColormap.from_list(f"minitf.{self.name}", [NEUTRAL["paper"], self.color])


def hex_to_rgb(color: str) -> tuple[int, int, int]:
    """``"#RRGGBB"`` -> ``(r, g, b)`` ints in [0, 255]."""
    if not (isinstance(color, str) and len(color) == 7 and color[0] == "#"):
        raise ValueError(f"color: expected a '#RRGGBB' string, got {color!r}")
    try:
        return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    except ValueError:
        raise ValueError(f"color: expected a '#RRGGBB' string, got {color!r}") from None


_MEANINGS = (
    # ---- the model's parts ----
    Meaning("encoder", "encoder", "encoder stack, its states H_enc and its weights",
            "model parts", "#332288", marker="s"),
    Meaning("decoder", "decoder", "decoder stack, its states H_dec, masked self-attention",
            "model parts", "#E69F00", marker="o"),
    Meaning("cross_attention", "cross-attention", "queries from the decoder, keys and values from H_enc",
            "model parts", "#44AA99", marker="D"),
    # ---- what flows ----
    Meaning("loss", "loss", "cross-entropy at the decoder's head, loss curves",
            "signals", "#AA4499"),
    Meaning("gradient", "gradient flow", "backward pass: p\u0302 \u2212 y and everything it reaches",
            "signals", "#882255", linestyle="--"),
    # ---- tokens and positions ----
    Meaning("ground_truth", "ground-truth token", "a token of the target y (labels, teacher-forced inputs)",
            "tokens and positions", "#117733", marker="o"),
    Meaning("predicted", "model-predicted token", "a token the model chose (\u0177), fed back when free-running",
            "tokens and positions", "#DDCC77", marker="^"),
    Meaning("masked", "masked position", "hidden: attention blocked (weight exactly 0), or text a noise hid",
            "tokens and positions", "#666666", hatch="///"),
    Meaning("padding", "padding", "<pad> filler: no attention, no loss, no gradient",
            "tokens and positions", "#AAAAAA", hatch="..."),
    # ---- how the decoder is fed ----
    Meaning("teacher_forced", "teacher-forced", "decoder fed the true prefix y_<t (training)",
            "decoding regime", "#88CCEE", marker="s"),
    Meaning("free_running", "free-running", "decoder fed its own prefix \u0177_<t (inference)",
            "decoding regime", "#EE6677", linestyle="-.", marker="v"),
)

KEY: Mapping[str, Meaning] = MappingProxyType({m.name: m for m in _MEANINGS})
"""Every meaning, by name, in the order the key figure lists them (read-only)."""

NEUTRAL: Mapping[str, str] = MappingProxyType({
    "ink": "#000000",  # text, axes, ticks, outlines that mean nothing in particular
    "paper": "#FFFFFF",  # background
    "rule": "#DDDDDD",  # grid lines, cell borders, guides
})
"""Colours that carry no meaning; every figure may use them."""


def allowed_colors() -> dict[tuple[int, int, int], str]:
    """Every colour a figure may use, as ``{(r, g, b): "what it is"}``: the meanings and the
    neutrals."""
    out = {hex_to_rgb(c): f"neutral {n}" for n, c in NEUTRAL.items()}
    out.update({m.rgb: m.name for m in KEY.values()})
    return out


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Apply the course's style (``minitf.mplstyle``) inside a ``with`` block.

    rcParams are restored on exit.  Draw *and* save inside the block: some settings
    (``svg.hashsalt``, ``savefig.*``) are read when the file is written.
    """
    import matplotlib

    with matplotlib.rc_context(fname=str(STYLE_PATH)):
        yield


# ---- checking a figure against the key ------------------------------------------------------
def _rgba_rows(value):
    """A colour or an array of colours -> (N, 4) RGBA rows; none for 'none' and friends."""
    from matplotlib.colors import to_rgba_array

    if value is None or (isinstance(value, str) and value.lower() in ("none", "auto", "edge", "face")):
        return []
    return [tuple(row) for row in to_rgba_array(value)]


def _describe(artist) -> str:
    kind = type(artist).__name__
    label = getattr(artist, "get_label", lambda: "")()
    text = getattr(artist, "get_text", lambda: "")()
    extra = f" {text!r}" if text else (f" {label!r}" if label and not label.startswith("_") else "")
    return kind + extra


def off_key_colors(fig) -> list[tuple[str, str]]:
    """Every colour drawn in ``fig`` that is neither a meaning nor a neutral of the key.

    Walks every artist (lines and their markers, patches and their hatches, collections,
    text and its box, annotation arrows) and returns ``[(artist description, "#rrggbb")]``,
    empty when the figure keeps to the key.  Fully transparent colours are ignored (they
    are not drawn); alpha is otherwise ignored (a tint keeps its meaning).  Images must
    use a key colormap (:meth:`Meaning.cmap`).
    """
    from matplotlib.collections import Collection
    from matplotlib.colors import to_hex
    from matplotlib.image import AxesImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Annotation, Text

    allowed = allowed_colors()
    key_cmaps = {f"minitf.{name}" for name in KEY}
    bad: list[tuple[str, str]] = []

    def check(artist, value, what: str) -> None:
        for r, g, b, a in _rgba_rows(value):
            if a == 0:
                continue
            rgb = (round(r * 255), round(g * 255), round(b * 255))
            if rgb not in allowed:
                bad.append((f"{_describe(artist)} {what}", to_hex((r, g, b))))

    def check_patch(p, what: str = "") -> None:
        check(p, p.get_facecolor(), f"{what}face")
        if p.get_linewidth() > 0:
            check(p, p.get_edgecolor(), f"{what}edge")
        if p.get_hatch():
            check(p, p.get_hatchcolor(), f"{what}hatch")

    for artist in fig.findobj(include_self=True):
        if not artist.get_visible():
            continue
        if isinstance(artist, Line2D):
            if artist.get_linestyle() not in ("None", "", " ") and artist.get_linewidth() > 0:
                check(artist, artist.get_color(), "line")
            if artist.get_marker() not in (None, "None", "", " "):
                check(artist, artist.get_markerfacecolor(), "marker face")
                check(artist, artist.get_markeredgecolor(), "marker edge")
        elif isinstance(artist, Patch):
            check_patch(artist)
        elif isinstance(artist, Collection):
            if artist.get_array() is not None:
                name = artist.get_cmap().name
                if name not in key_cmaps:
                    bad.append((f"{_describe(artist)} colormap", name))
            else:
                check(artist, artist.get_facecolors(), "face")
            check(artist, artist.get_edgecolors(), "edge")
            if artist.get_hatch():
                check(artist, artist.get_hatchcolor(), "hatch")
        elif isinstance(artist, AxesImage):
            name = artist.get_cmap().name
            if name not in key_cmaps:
                bad.append((f"{_describe(artist)} colormap", name))
        if isinstance(artist, Text) and artist.get_text():
            check(artist, artist.get_color(), "text")
            box = artist.get_bbox_patch()
            if box is not None:
                check_patch(box, "box ")
        if isinstance(artist, Annotation) and artist.arrow_patch is not None:
            check_patch(artist.arrow_patch, "arrow ")
    return bad
