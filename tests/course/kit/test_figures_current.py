"""The repository's ``figures/`` folder holds the current output of ``minitf figures``:
every registered figure as SVG and PNG, nothing else, and the picture the code draws now.
A figure whose code changed without regenerating the files fails here.

"The same picture", not "the same bytes": a figure drawn from a training run differs from
machine to machine in the last digits of its float64 curves (another BLAS build, or another
CPU kernel of the same one), so the files are compared within a tolerance, as pytest-mpl
compares images (:mod:`minitf.course.kit.figures.compare`: the SVG's text, glyphs, colours and
styles exactly, its coordinates to a hundredth of a point and its lines to half a point; the
PNG to an RMS pixel difference of 2)."""
import json
from pathlib import Path

import pytest

from minitf.cli.figures import VERSIONS_FILE, library_versions
from minitf.course.kit.figures import compare, registry, render

FIGURES = Path(__file__).resolve().parents[3] / "figures"
FORMATS = ("svg", "png")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    for spec in registry.all_figures():
        render.render_figure(spec, out, FORMATS, seed=0)
    return out


def _recorded_versions():
    if not FIGURES.is_dir():
        pytest.skip("no figures/ folder next to the tests (an installed copy, not the repository)")
    path = FIGURES / VERSIONS_FILE
    assert path.exists(), f"{path} is missing: regenerate with `minitf figures`"
    return json.loads(path.read_text())


def test_figures_folder_has_exactly_the_registered_figures():
    _recorded_versions()
    expected = {f"{s.name}.{fmt}" for s in registry.all_figures() for fmt in FORMATS} | {VERSIONS_FILE}
    present = {p.name for p in FIGURES.iterdir() if not p.name.startswith(".")}
    assert present == expected, (f"missing: {sorted(expected - present)}; unexpected: {sorted(present - expected)}; "
                                 "regenerate with `minitf figures`")


def test_figures_draw_with_matplotlibs_own_fonts():
    """The committed figures' glyphs are those of matplotlib's bundled DejaVu.  A font cache
    (``~/.cache/matplotlib/fontlist-*.json``) written while that copy was missing resolves the
    family to a system copy instead, whose glyphs differ: every SVG then looks stale."""
    import matplotlib
    from matplotlib import font_manager

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    found = Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans")))
    assert found.parent == bundled, (f"DejaVu Sans resolves to {found}, not matplotlib's own {bundled}: delete "
                                     f"{matplotlib.get_cachedir()}/fontlist-*.json and run again")


def test_committed_figures_are_current(fresh):
    recorded = _recorded_versions()
    if recorded != library_versions():
        pytest.skip(f"figures/ was generated with {recorded}, this environment has {library_versions()}: "
                    "the bytes are only comparable with the same libraries")
    stale = {}
    for p in sorted(fresh.iterdir()):
        committed = FIGURES / p.name
        if not committed.exists():
            stale[p.name] = "missing"
            continue
        diff, tol = compare.difference(committed, p)
        if diff > tol:
            stale[p.name] = f"difference {diff:.3g} > tolerance {tol:g}"
    assert not stale, f"stale figures: {stale}; regenerate with `minitf figures` and commit figures/"


def test_the_comparison_tells_a_changed_figure_from_a_redrawn_one():
    """What the tolerance lets through, and what it does not, on a committed figure: numbers
    moved by a millionth of a point pass; a changed colour, a changed glyph (a title or a tick
    label), a moved text or a line moved by a point fail."""
    import re

    svg = (FIGURES / "l06_budget.svg").read_text() if FIGURES.is_dir() else pytest.skip("no figures/ folder")
    numbers = re.compile(r"(?<![#\w])(\d+\.\d{6})")
    nudged = numbers.sub(lambda m: f"{float(m.group(1)) + 1e-6:.6f}", svg)
    assert nudged != svg and compare.svg_difference(svg, nudged) <= 1
    assert compare.svg_difference(svg, svg.replace("#332288", "#332289")) == float("inf")
    glyph = re.search(r'href="#(DejaVuSans-\w+)"', svg).group(1)
    other = next(g for g in re.findall(r'id="(DejaVuSans-\w+)"', svg) if g != glyph)
    assert compare.svg_difference(svg, svg.replace(f'href="#{glyph}"', f'href="#{other}"', 1)) == float("inf")
    transform = re.search(r'transform="translate\(([\d.]+) ', svg)
    moved = svg.replace(transform.group(0), f'transform="translate({float(transform.group(1)) + 0.5:.6f} ', 1)
    assert compare.svg_difference(svg, moved) > 1
    line = re.search(r'd="M ([\d.]+) ([\d.]+) \nL', svg)
    shifted = svg.replace(line.group(0), f'd="M {line.group(1)} {float(line.group(2)) + 1:.6f} \nL', 1)
    assert compare.svg_difference(svg, shifted) > 1
