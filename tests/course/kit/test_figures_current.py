"""The repository's ``figures/`` folder holds the current output of ``minitf figures``:
every registered figure as SVG and PNG, nothing else, and byte for byte what the code
draws now.  A figure whose code changed without regenerating the files fails here."""
import json
from pathlib import Path

import pytest

from minitf.cli.figures import VERSIONS_FILE, library_versions
from minitf.course.kit.figures import registry, render

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


def test_committed_figures_are_current(fresh):
    recorded = _recorded_versions()
    if recorded != library_versions():
        pytest.skip(f"figures/ was generated with {recorded}, this environment has {library_versions()}: "
                    "the bytes are only comparable with the same libraries")
    stale = [p.name for p in sorted(fresh.iterdir())
             if not (FIGURES / p.name).exists() or (FIGURES / p.name).read_bytes() != p.read_bytes()]
    assert not stale, f"stale figures: {stale}; regenerate with `minitf figures` and commit figures/"
