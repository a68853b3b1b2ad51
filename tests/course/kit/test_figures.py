"""Tests for minitf.course.kit.figures (key, registry, rendering, every registered figure, Lesson 8's
Figure 1) and the ``minitf figures`` command."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle

from minitf import cli
from minitf.cli import figures as figures_command
from minitf.course import l08_teacher_forcing as lesson08
from minitf.course import l09_inference as lesson09
from minitf.course.kit.figures import KEY, NEUTRAL, off_key_colors, registry, render, style
from minitf.course.kit.figures.draw import new_figure
from minitf.course.kit.figures.key import STYLE_PATH, allowed_colors, hex_to_rgb

ALL_NAMES = registry.names()
REPO = Path(__file__).resolve().parents[3]
COURSE_RUNS = {8: (lesson08.lesson8_run, lesson08.leakage_runs), 9: (lesson09.lesson9_run, lesson09.lesson9_showcase)}
"""Each lesson's cached runs (minitf.course), cleared to train the lesson's model again."""


def assert_keeps_to_key(fig) -> None:
    """Every colour drawn in ``fig`` is a meaning or a neutral of the key."""
    bad = off_key_colors(fig)
    assert not bad, "colours outside the figure key: " + "; ".join(f"{what}: {c}" for what, c in bad)


# ---- the key ------------------------------------------------------------------------------------
def test_key_covers_the_course_meanings():
    expected = {"encoder", "decoder", "cross_attention", "loss", "gradient", "ground_truth", "predicted",
                "masked", "padding", "teacher_forced", "free_running"}
    assert set(KEY) == expected
    assert set(NEUTRAL) == {"ink", "paper", "rule"}


def test_key_has_one_meaning_per_colour():
    colours = [m.color.upper() for m in KEY.values()]
    repeated = {c for c in colours if colours.count(c) > 1}
    assert not repeated, f"colours used by more than one meaning: {sorted(repeated)}"
    neutral = {c.upper() for c in NEUTRAL.values()}
    assert len(neutral) == len(NEUTRAL)
    assert not neutral & set(colours), "a meaning uses a neutral colour"
    # and the union the checker accepts really has one entry per colour
    assert len(allowed_colors()) == len(KEY) + len(NEUTRAL)


def test_key_entries_are_well_formed():
    for name, m in KEY.items():
        assert m.name == name
        assert len(hex_to_rgb(m.color)) == 3
        assert m.label and m.description and m.group
        assert matplotlib.colors.is_color_like(m.color)
        assert m.linestyle in ("-", "--", "-.", ":")
    # the pairs a reader must tell apart without colour differ in line style or marker
    tf, fr = KEY["teacher_forced"], KEY["free_running"]
    assert (tf.linestyle, tf.marker) != (fr.linestyle, fr.marker)
    assert KEY["gradient"].linestyle == "--"
    assert KEY["masked"].hatch and KEY["padding"].hatch and KEY["masked"].hatch != KEY["padding"].hatch


def test_hex_to_rgb_rejects_bad_colours():
    assert hex_to_rgb("#0A0b10") == (10, 11, 16)
    for bad in ("red", "#12345", "#GGGGGG", None):
        with pytest.raises(ValueError, match="color"):
            hex_to_rgb(bad)


def test_meaning_kwargs_draw_in_the_key_colour():
    m = KEY["masked"]
    fill = m.fill()
    assert fill["edgecolor"] == m.color and fill["hatch"] == m.hatch
    assert fill["facecolor"][3] == pytest.approx(0.3)
    assert matplotlib.colors.to_hex(fill["facecolor"][:3]) == m.color.lower()
    assert m.fill(tint=None)["facecolor"][3] == 1.0
    line = KEY["free_running"].line()
    assert line["color"] == KEY["free_running"].color and line["linestyle"] == "-." and line["marker"] == "v"
    assert "marker" not in KEY["loss"].line()
    assert KEY["decoder"].cmap().name == "minitf.decoder"


def test_style_applies_the_style_file_and_restores_rcparams():
    before = dict(matplotlib.rcParams)
    with style():
        assert matplotlib.rcParams["svg.hashsalt"] == "minitf"
        assert matplotlib.rcParams["axes.spines.top"] is False
        assert matplotlib.rcParams["axes.spines.right"] is False
        assert matplotlib.rcParams["font.sans-serif"][0] == "DejaVu Sans"
    assert dict(matplotlib.rcParams) == before
    assert STYLE_PATH.name == "minitf.mplstyle" and STYLE_PATH.is_file()


def test_style_colours_are_neutrals():
    allowed = {c.lower() for c in NEUTRAL.values()}
    with style():
        rc = matplotlib.rcParams
        for k in ("text.color", "axes.labelcolor", "axes.edgecolor", "axes.facecolor", "figure.facecolor",
                  "xtick.color", "ytick.color", "grid.color"):
            assert matplotlib.colors.to_hex(rc[k]) in allowed, k
        cycle = [matplotlib.colors.to_hex(c) for c in rc["axes.prop_cycle"].by_key()["color"]]
        assert cycle == [NEUTRAL["ink"].lower()], "the default colour cycle must not invent meanings"


# ---- the colour check can fail ---------------------------------------------------------------
def _blank():
    fig = new_figure(3, 2)
    return fig, fig.add_subplot()


def test_a_figure_in_key_colours_passes_including_tints():
    with style():
        fig, ax = _blank()
        ax.plot([0, 1], [0, 1], **KEY["teacher_forced"].line())
        ax.plot([0, 1], [1, 0])  # default cycle: ink
        ax.add_patch(Rectangle((0, 0), 0.5, 0.5, **KEY["masked"].fill()))
        ax.scatter([0.2], [0.3], color=KEY["loss"].color, alpha=0.5)
        ax.imshow(np.eye(3), cmap=KEY["encoder"].cmap())
        ax.set_title("title")
        ax.grid(True)
    assert_keeps_to_key(fig)


@pytest.mark.parametrize("draw, culprit", [
    (lambda ax: ax.plot([0, 1], [0, 1], color="#FF00FF"), "Line2D"),
    (lambda ax: ax.plot([0, 1], [0, 1], marker="o", color=KEY["decoder"].color, markerfacecolor="#FF00FF"),
     "marker face"),
    (lambda ax: ax.add_patch(Rectangle((0, 0), 1, 1, facecolor="#FF00FF", edgecolor=KEY["encoder"].color)),
     "Rectangle face"),
    (lambda ax: ax.add_patch(Rectangle((0, 0), 1, 1, **KEY["masked"].fill(hatchcolor="#FF00FF"))), "hatch"),
    (lambda ax: ax.text(0.5, 0.5, "hello", color="#FF00FF"), "'hello' text"),
    (lambda ax: ax.text(0.5, 0.5, "boxed", bbox={"facecolor": "#FF00FF"}), "box face"),
    (lambda ax: ax.annotate("note", (0, 0), (0.5, 0.5), arrowprops={"color": "#FF00FF"}), "arrow"),
    (lambda ax: ax.add_patch(FancyArrowPatch((0, 0), (1, 1), color="#FF00FF")), "FancyArrowPatch"),
    (lambda ax: ax.scatter([0], [0], color="#FF00FF"), "PathCollection"),
    (lambda ax: ax.imshow(np.eye(3)), "colormap"),
    (lambda ax: ax.legend(handles=[Line2D([], [], color="#FF00FF", label="x")]), "Line2D"),
    (lambda ax: ax.set_facecolor("#FF00FF"), "face"),
    (lambda ax: ax.plot([0, 1], [0, 1], color=matplotlib.rcParamsDefault["axes.prop_cycle"].by_key()["color"][1]),
     "Line2D"),
])
def test_an_off_key_colour_fails_the_check(draw, culprit):
    with style():
        fig, ax = _blank()
        draw(ax)
    bad = off_key_colors(fig)
    assert bad, "the check missed an off-key colour"
    assert any(culprit in what for what, _ in bad), bad
    with pytest.raises(AssertionError, match="colours outside the figure key"):
        assert_keeps_to_key(fig)


def test_the_registered_figure_check_fails_on_an_off_key_figure(monkeypatch):
    """The same check the parametrised test runs on every registered figure, on a bad one."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @registry.register("test_off_key", lesson=8, title="uses matplotlib's default blue")
    def off_key(seed: int = 0):
        fig, ax = _blank()
        ax.bar([0, 1], [1, 2], color="#1f77b4")
        return fig

    fig = registry.get("test_off_key").make()
    with pytest.raises(AssertionError, match="#1f77b4"):
        assert_keeps_to_key(fig)


# ---- the registry ---------------------------------------------------------------------------------
def test_registry_lists_the_key_and_lesson_8():
    specs = registry.all_figures()
    assert specs[0].name == "key" and specs[0].lesson is None and specs[0].where == "course-wide"
    assert "l08_shift" in ALL_NAMES
    assert registry.get("l08_shift").lesson == 8
    assert 8 in registry.lessons() and None not in registry.lessons()
    assert [s.name for s in registry.all_figures(lesson=8)] == [s.name for s in specs if s.lesson == 8]
    assert len(set(ALL_NAMES)) == len(ALL_NAMES)


def test_get_unknown_name_lists_the_figures():
    with pytest.raises(ValueError, match="l08_shift") as e:
        registry.get("nope")
    assert "key" in str(e.value) and "'nope'" in str(e.value)


def test_register_checks_its_arguments(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    with pytest.raises(ValueError, match="name"):
        registry.register("Bad Name", lesson=1, title="t")
    with pytest.raises(ValueError, match="lesson"):
        registry.register("ok", lesson=0, title="t")
    with pytest.raises(ValueError, match="title"):
        registry.register("ok", lesson=1, title=" ")
    with pytest.raises(TypeError, match="seed"):
        registry.register("ok", lesson=1, title="t")(lambda: None)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("key", lesson=None, title="t")(lambda seed=0: None)

    @registry.register("not_a_figure", lesson=1, title="returns None")
    def not_a_figure(seed: int = 0):
        return None

    with pytest.raises(TypeError, match="Figure"):
        registry.get("not_a_figure").make()


def test_figure_modules_are_importable_one_line_each():
    assert "minitf.course.kit.figures.key_figure" in registry.figure_modules()
    assert "minitf.course.l08_teacher_forcing.figures" in registry.figure_modules()
    modules = {s.fn.__module__ for s in registry.all_figures()}
    assert modules <= set(registry.figure_modules())


def test_figure_modules_import_only_downward():
    """key <- registry <- draw <- the figures: no module of minitf/figures imports one above it
    (the registry finds the figure modules by name, at load time, not by an import)."""
    import ast

    folder = Path(registry.__file__).parent
    levels = {"key": 0, "registry": 1, "draw": 2, "render": 2}  # every other module: the figures, 3
    for path in folder.glob("*.py"):
        if path.stem == "__init__":
            continue
        level = levels.get(path.stem, 3)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                imported = node.module.split(".")[0]
                assert levels.get(imported, 3) < level, f"{path.name} imports {imported}: an import upward"


# ---- every registered figure ------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_figure_renders(name, tmp_path):
    spec = registry.get(name)
    fig = spec.make(seed=0)
    assert isinstance(fig, Figure)
    assert fig.axes, "a figure with no axes draws nothing"
    paths = render.render_figure(spec, tmp_path, formats=render.FORMATS)
    assert [p.name for p in paths] == [f"{name}.svg", f"{name}.png", f"{name}.pdf"]
    svg, png, pdf = (p.read_bytes() for p in paths)
    assert ET.fromstring(svg).tag.endswith("svg")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_figure_keeps_to_the_key(name):
    assert_keeps_to_key(registry.get(name).make(seed=0))


@pytest.mark.parametrize("name", ALL_NAMES)
def test_files_are_byte_identical_across_renders(name, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = render.render_figure(name, a, formats=render.FORMATS)
    second = render.render_figure(name, b, formats=render.FORMATS)
    for p, q in zip(first, second):
        assert p.read_bytes() == q.read_bytes(), f"{p.name} differs between two renders"
    svg = first[0].read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


@pytest.mark.parametrize("lesson", sorted(COURSE_RUNS))
def test_lesson_figures_are_the_same_after_training_again(lesson, tmp_path):
    """A cached run would hide a seed that does not fix everything: the lesson's model is
    trained again between the two renders."""
    names = [s.name for s in registry.all_figures(lesson=lesson)]
    assert names and lesson in registry.lessons()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = [render.render_figure(name, a, formats=["svg"])[0] for name in names]
    for run in COURSE_RUNS[lesson]:
        run.cache_clear()
    second = [render.render_figure(name, b, formats=["svg"])[0] for name in names]
    for p, q in zip(first, second):
        assert p.read_bytes() == q.read_bytes(), f"{p.name} differs after training the lesson's model again"


def test_rendering_leaves_no_global_state(tmp_path):
    before = dict(matplotlib.rcParams)
    render.render_figure("l08_shift", tmp_path, formats=["svg"])
    assert dict(matplotlib.rcParams) == before


def test_png_bytes_are_the_shipped_png(tmp_path):
    """What a notebook displays is byte for byte the PNG in figures/ (title metadata aside: none here)."""
    shipped = render.save(registry.get("key").make(seed=0), tmp_path / "key", formats=["png"])[0].read_bytes()
    assert render.png_bytes(registry.get("key").make(seed=0)) == shipped


def test_show_displays_a_figure_or_a_registered_name(monkeypatch):
    display = pytest.importorskip("IPython.display")
    shown = []
    monkeypatch.setattr(display, "display", lambda obj: shown.append(obj))
    render.show("key")
    render.show(registry.get("key").make(seed=0))
    assert len(shown) == 2 and all(isinstance(obj, display.Image) for obj in shown)
    assert shown[0].data == shown[1].data == render.png_bytes(registry.get("key").make(seed=0))


def test_save_checks_formats(tmp_path):
    with pytest.raises(ValueError, match="svg, png, pdf"):
        render.save(new_figure(1, 1), tmp_path / "x", formats=["gif"])
    assert render.FORMATS == figures_command.FORMATS


def test_key_figure_shows_every_meaning():
    fig = registry.get("key").make()
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    for m in KEY.values():
        assert m.label in texts and m.description in texts


def test_lesson08_shift_is_computed_from_shift_right_and_causal_mask():
    from minitf.data import shift_right
    from minitf.masks import causal_mask

    fig = registry.get("l08_shift").make()
    tokens_ax, mask_ax = fig.axes
    rows: dict[float, list[tuple[float, str]]] = {}
    for t in tokens_ax.texts:
        x, y = t.get_position()
        if t.get_text() and t.get_ha() == "center" and 0 <= x:
            rows.setdefault(round(y, 3), []).append((x, t.get_text()))
    rows = {y: [s for _, s in sorted(r)] for y, r in rows.items()}
    labels = ["a", "cat", "sat", "down", "<eos>"]
    vocab = {w: i for i, w in enumerate(["<pad>", "<bos>", "<eos>", "<unk>", "a", "cat", "sat", "down"])}
    shifted = shift_right(np.array([[vocab[w] for w in labels]]), start_id=1, pad_id=0)[0]
    inputs = [next(w for w, i in vocab.items() if i == j) for j in shifted]
    assert labels in rows.values() and inputs in rows.values()
    assert inputs[0] == "<bos>" and inputs[1:] == labels[:-1]
    # the mask panel: one hatched (masked) cell per blocked entry of the causal mask, in place
    hatched = {(round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in mask_ax.patches
               if isinstance(p, Rectangle) and p.get_hatch() == KEY["masked"].hatch}
    blocked = {tuple(ix) for ix in np.argwhere(causal_mask(len(labels)) < 0)}
    assert hatched == blocked


# ---- the command ------------------------------------------------------------------------------------
def _run(argv, capsys):
    code = cli.main(["figures", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_command_writes_the_selected_figures(tmp_path, capsys):
    out_dir = tmp_path / "new" / "figs"  # created, parents too
    code, out, err = _run(["--only", "key", "--format", "svg,pdf", "--out", str(out_dir)], capsys)
    assert code == 0, err
    # the figures, and the library versions that decide their bytes
    assert sorted(p.name for p in out_dir.iterdir()) == ["key.pdf", "key.svg", "versions.json"]
    assert str(out_dir / "key.svg") in out


def test_command_lesson_filter_includes_course_wide_figures(tmp_path, capsys):
    code, out, err = _run(["--lesson", "8", "--format", "png", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    expected = {f"{s.name}.png" for s in registry.all_figures() if s.lesson in (8, None)}
    assert {p.name for p in tmp_path.iterdir()} == expected | {"versions.json"}


def test_command_lists_figures(capsys):
    code, out, _ = _run(["--list"], capsys)
    assert code == 0
    for name in ALL_NAMES:
        assert name in out


@pytest.mark.parametrize("argv, expected", [
    (["--lesson", "11"], ["--lesson", "lessons with figures", "8"]),
    (["--lesson", "99"], ["--lesson", "8"]),
    (["--only", "key,nope"], ["'nope'", "key", "l08_shift"]),
    (["--lesson", "8", "--only", "nope"], ["'nope'", "l08_shift"]),
    (["--format", "svg,gif"], ["'gif'", "svg, png, pdf"]),
    (["--format", ","], ["--format", "svg, png, pdf"]),
])
def test_command_bad_arguments_exit_2_listing_choices(argv, expected, tmp_path, capsys):
    code, out, err = _run([*argv, "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert err.startswith("minitf figures: error:")
    for text in expected:
        assert text in err
    assert not (tmp_path / "out").exists(), "nothing is created when the arguments are bad"


def test_command_non_integer_lesson_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["figures", "--lesson", "eight"])
    assert e.value.code == 2
    assert "--lesson" in capsys.readouterr().err


def test_command_unwritable_out_dir_errors_cleanly(tmp_path, capsys):
    regular = tmp_path / "a_file"
    regular.write_text("not a directory")
    for out in (regular / "figs", regular):
        code, out_text, err = _run(["--only", "key", "--out", str(out)], capsys)
        assert code == 2
        assert err.startswith("minitf figures: error: --out:") and str(out) in err
        assert "Traceback" not in err
    assert regular.read_text() == "not a directory"


def test_configure_does_not_import_matplotlib():
    code = ("import argparse, sys\n"
            "import minitf.course.kit.figures\n"
            "from minitf.cli import figures\n"
            "figures.configure(argparse.ArgumentParser())\n"
            "minitf.course.kit.figures.registry.load()\n"
            "assert 'matplotlib' not in sys.modules, sorted(m for m in sys.modules if 'matplotlib' in m)\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_command_svgs_are_byte_identical_across_processes(tmp_path):
    """Two fresh processes (different hash seeds) write the same bytes, without pyplot."""
    outputs = []
    for run, hashseed in (("one", "1"), ("two", "2")):
        cwd = tmp_path / run
        cwd.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        env.pop("MPLBACKEND", None)
        proc = subprocess.run([sys.executable, "-m", "minitf", "figures", "--out", "tmp", "--format", "svg"],
                              cwd=cwd, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        files = {p.name: p.read_bytes() for p in sorted((cwd / "tmp").iterdir())}
        assert set(files) == {f"{n}.svg" for n in ALL_NAMES} | {"versions.json"}
        outputs.append(files)
    assert outputs[0] == outputs[1]
    # and the same bytes as rendering inside this (long-lived) process
    here = tmp_path / "here"
    here.mkdir()
    for name in ALL_NAMES:
        (path,) = render.render_figure(name, here, formats=["svg"])
        assert path.read_bytes() == outputs[0][path.name], f"{name}.svg differs from the command's output"


def test_rendering_never_imports_pyplot(tmp_path):
    code = ("import sys\n"
            "from minitf.course.kit.figures import registry, render\n"
            f"for s in registry.all_figures(): render.render_figure(s, {str(tmp_path)!r}, ['svg', 'png'])\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# ---- the key under colour-vision deficiencies ---------------------------------------------------------
def _distances_under_cvd(names):
    """{(a, b): the smallest CAM02-UCS distance between meanings a and b under normal vision
    and full deuteranomaly, protanomaly and tritanomaly (colorspacious's simulation)}."""
    colorspacious = pytest.importorskip("colorspacious", reason="the colour-vision check needs colorspacious "
                                                                "(pip install -e '.[test]')")
    import itertools

    cvd = [None] + [{"name": "sRGB1+CVD", "cvd_type": t, "severity": 100}
                    for t in ("deuteranomaly", "protanomaly", "tritanomaly")]
    seen = {}
    for name in names:
        rgb = np.array(KEY[name].rgb) / 255
        seen[name] = [colorspacious.cspace_convert(
            rgb if space is None else np.clip(colorspacious.cspace_convert(rgb, space, "sRGB1"), 0, 1),
            "sRGB1", "CAM02-UCS") for space in cvd]
    return {(a, b): min(float(np.linalg.norm(x - y)) for x, y in zip(seen[a], seen[b]))
            for a, b in itertools.combinations(names, 2)}


def test_the_model_parts_stay_apart_for_colour_blind_viewers_and_on_a_projector():
    parts = ["encoder", "decoder", "cross_attention", "loss"]
    distances = _distances_under_cvd(parts)
    worst = min(distances, key=distances.get)
    assert distances[worst] >= 17, f"{worst} only {distances[worst]:.1f} apart (CAM02-UCS) under some vision"
    # four different hues, not tints of one: hue angles at least 50 degrees apart
    import colorsys

    hues = {p: 360 * colorsys.rgb_to_hls(*(np.array(KEY[p].rgb) / 255))[0] for p in parts}
    for a, b in distances:
        gap = abs(hues[a] - hues[b])
        assert min(gap, 360 - gap) >= 50, f"{a} and {b} are neighbouring hues ({hues[a]:.0f} vs {hues[b]:.0f} deg)"


def test_every_chromatic_meaning_stays_apart_under_colour_vision_deficiencies():
    chromatic = [n for n, m in KEY.items() if len(set(m.rgb)) > 1]  # the greys are told apart by hatch
    assert len(chromatic) == 9
    distances = _distances_under_cvd(chromatic)
    worst = min(distances, key=distances.get)
    assert distances[worst] >= 12, f"{worst} only {distances[worst]:.1f} apart (CAM02-UCS) under some vision"
