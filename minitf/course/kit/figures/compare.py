"""Is a freshly drawn figure the committed one?  The same picture, not the same bytes.

A figure drawn from a training run computes its curves in float64, and the last bits of a
float64 sum depend on the BLAS build and the CPU it picks its kernels for (``OPENBLAS_CORETYPE``
changes them on one machine).  After a few hundred training steps those bits reach the sixth
decimal of an SVG coordinate (a millionth of a point) and, where a line crosses a pixel edge,
the anti-aliasing of a few PNG pixels.  Byte equality then holds only on the machine that drew
the files.  What matters is that the picture is the same, so the files are compared the way
pytest-mpl compares images, with a tolerance:

* **SVG** (:func:`svg_difference`): the text with every number taken out must be identical --
  every element, style, colour, glyph (text is drawn as glyph paths) and every id (the hashed
  ids matplotlib gives markers and clip paths are renamed in order of appearance first) -- and
  the numbers may differ a little: the lines' coordinates by :data:`PATH_TOLERANCE` (half a
  point: a pixel of the PNG), every other number (a text's position, a width, an opacity) by
  :data:`SVG_TOLERANCE`.  A changed title, label, tick, colour or line style fails; a
  coordinate that moved by a millionth of a point does not.
* **PNG** (:func:`png_rms`): the root mean square of the pixel differences on the 0-255 scale,
  matplotlib's ``calculate_rms``, as pytest-mpl computes it, at most :data:`PNG_TOLERANCE`
  (pytest-mpl's default, 2).  The SVG check is the strict one; the PNG check catches a
  raster that no longer follows its SVG.

``tests/course/kit/test_figures_current.py`` applies :func:`difference` to every committed file.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

__all__ = ["SVG_TOLERANCE", "PATH_TOLERANCE", "PNG_TOLERANCE", "svg_difference", "png_rms", "difference", "same_picture"]

SVG_TOLERANCE = 0.01
"""Largest difference allowed between two numbers of an SVG outside its lines' path data
(positions of text and markers, sizes, widths, opacities): a hundredth, of a point for a
position, far below what any screen or projector shows."""

PNG_TOLERANCE = 2.0
"""Largest RMS pixel difference (0-255 scale) between two PNGs: pytest-mpl's default."""

PATH_TOLERANCE = 0.5
"""Largest distance, in points, between two drawings of one line: half a point, one pixel of
the shipped PNGs (150 dots per inch).  A line is compared number by number when both drawings
have the same vertices, else as a polyline (every vertex of one within this distance of the
other, both ways): matplotlib *simplifies* a long line before writing it, dropping vertices
that move it by less than ``path.simplify_threshold``, so a millionth of a point can decide
whether a vertex is kept."""

# a number, not part of a name (DejaVuSans-56, id-3) or a colour (#332288): those are text
_NUMBER = re.compile(r"(#[0-9a-fA-F]{6}\b)|(?<![\w.-])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_HASHED_ID = re.compile(r"\b[mp][0-9a-f]{10}\b")  # matplotlib's ids of markers (m...) and clip paths (p...)
_PATH_DATA = re.compile(r'(\sd=")([^"]*)(")')


def _numbers(text: str) -> tuple[str, np.ndarray]:
    """``text`` with each number replaced by ``#`` (colours ``#rrggbb`` kept as they are), and the numbers."""
    numbers = [float(m.group(0)) for m in _NUMBER.finditer(text) if m.group(1) is None]
    return _NUMBER.sub(lambda m: m.group(1) or "#", text), np.array(numbers)


def _svg_parts(text: str) -> tuple[str, np.ndarray, list[str]]:
    """An SVG as (its text with the hashed ids renamed in order of appearance, the path data
    taken out and every number replaced by ``#``; the numbers; the path data, in order)."""
    ids: dict[str, str] = {}
    text = _HASHED_ID.sub(lambda m: ids.setdefault(m.group(0), f"id-{len(ids)}"), text)
    paths = [m.group(2) for m in _PATH_DATA.finditer(text)]
    skeleton, numbers = _numbers(_PATH_DATA.sub(r"\1\3", text))
    return skeleton, numbers, paths


def _polyline(d: str):
    """Path data of straight segments only (``M``, ``L``, ``z``) -> (vertices (n, 2), segments
    (m, 2, 2)); None for a path with curves."""
    tokens = re.findall(r"[A-Za-z]|[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?", d)
    vertices, segments, start, last, command, pending = [], [], None, None, None, []
    for tok in tokens:
        if tok.isalpha():
            if tok not in "MLz":
                return None
            command = tok
            if tok == "z" and last is not None and start is not None:
                segments.append((last, start))
                last = start
            continue
        pending.append(float(tok))
        if len(pending) == 2:
            point, pending = tuple(pending), []
            vertices.append(point)
            if command == "L" and last is not None:
                segments.append((last, point))
            else:
                start = point
            last, command = point, "L"  # further pairs after M are line-tos, as in SVG
    if not segments:
        segments = [(v, v) for v in vertices]  # single points: distances to the points themselves
    return np.array(vertices, dtype=np.float64).reshape(-1, 2), np.array(segments, dtype=np.float64).reshape(-1, 2, 2)


def _distance_to_segments(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """For each point (n, 2), its distance to the nearest of the segments (m, 2, 2)."""
    a, b = segments[None, :, 0], segments[None, :, 1]  # (1, m, 2)
    ab, ap = b - a, points[:, None] - a  # (1, m, 2), (n, m, 2)
    length2 = (ab * ab).sum(-1)  # (1, m)
    t = np.clip(np.where(length2 > 0, (ap * ab).sum(-1) / np.where(length2 > 0, length2, 1.0), 0.0), 0.0, 1.0)
    nearest = a + t[..., None] * ab  # (n, m, 2)
    return np.sqrt(((points[:, None] - nearest) ** 2).sum(-1)).min(axis=1)  # (n,)


def _path_difference(a: str, b: str) -> float:
    """How far apart two path data strings draw: the largest difference of their numbers when
    they have the same commands, else (for straight segments only) the largest distance from a
    vertex of either to the other polyline; ``inf`` when they cannot be compared."""
    if a == b:
        return 0.0
    (ca, na), (cb, nb) = _numbers(a), _numbers(b)
    if ca == cb:
        return float(np.max(np.abs(na - nb), initial=0.0))
    pa, pb = _polyline(a), _polyline(b)
    if pa is None or pb is None or not len(pa[0]) or not len(pb[0]):
        return float("inf")
    return float(max(_distance_to_segments(pa[0], pb[1]).max(), _distance_to_segments(pb[0], pa[1]).max()))


def svg_difference(a: str | bytes, b: str | bytes) -> float:
    """How different two SVGs of a figure are, as a share of the tolerance: the larger of (the
    largest difference between corresponding numbers outside the path data) / :data:`SVG_TOLERANCE`
    and (the largest distance between corresponding lines) / :data:`PATH_TOLERANCE`; ``inf``
    when anything but those numbers and lines differs.  At most 1: the same picture."""
    a, b = (x.decode("utf-8") if isinstance(x, bytes) else x for x in (a, b))
    (skel_a, num_a, paths_a), (skel_b, num_b, paths_b) = _svg_parts(a), _svg_parts(b)
    if skel_a != skel_b or num_a.shape != num_b.shape or len(paths_a) != len(paths_b):
        return float("inf")
    worst = float(np.max(np.abs(num_a - num_b), initial=0.0)) / SVG_TOLERANCE
    for pa, pb in zip(paths_a, paths_b):
        worst = max(worst, _path_difference(pa, pb) / PATH_TOLERANCE)
        if worst == float("inf"):
            break
    return worst


def _pixels(png: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return np.round(255 * imread(io.BytesIO(png), format="png")).astype(np.int64)  # (rows, columns, channels)


def png_rms(a: bytes, b: bytes) -> float:
    """The RMS pixel difference of two PNGs on the 0-255 scale (``inf`` for different sizes)."""
    from matplotlib.testing.compare import calculate_rms

    pa, pb = _pixels(a), _pixels(b)
    if pa.shape != pb.shape:
        return float("inf")
    return float(calculate_rms(pa, pb))


def difference(a: Path | str, b: Path | str) -> tuple[float, float]:
    """``(difference, tolerance)`` of two files of the same figure, by their extension: SVG
    (:func:`svg_difference`, a share of the tolerances: tolerance 1) or PNG (:func:`png_rms`,
    :data:`PNG_TOLERANCE`); any other format must be byte-identical (difference 0 or ``inf``,
    tolerance 0)."""
    a, b = Path(a), Path(b)
    if a.suffix != b.suffix:
        raise ValueError(f"difference: {a.name} and {b.name} are not the same format")
    x, y = a.read_bytes(), b.read_bytes()
    if x == y:
        return 0.0, 0.0
    if a.suffix == ".svg":
        return svg_difference(x, y), 1.0
    if a.suffix == ".png":
        return png_rms(x, y), PNG_TOLERANCE
    return float("inf"), 0.0


def same_picture(a: Path | str, b: Path | str) -> bool:
    """Whether two files of a figure show the same picture, within :func:`difference`'s tolerance."""
    diff, tol = difference(a, b)
    return diff <= tol
