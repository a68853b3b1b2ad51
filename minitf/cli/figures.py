"""``minitf figures``: regenerate the course figures and the figure key.

    minitf figures                          # every figure, as SVG and PNG, into ./figures
    minitf figures --lesson 8               # Lesson 8's figures (and the course-wide key)
    minitf figures --only key,l08_shift --format svg,png,pdf --out /tmp/figs
    minitf figures --list                   # what is registered

Files are ``<out>/<name>.<format>``, byte-identical from one run to the next (see
``minitf/course/kit/figures/render.py``).  Bad arguments exit with code 2 and a message that lists
the valid choices.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FORMATS = ("svg", "png", "pdf")  # the same as minitf.course.kit.figures.render.FORMATS, kept here so configure stays cheap
DEFAULT_FORMATS = "svg,png"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the command's arguments.  Imports nothing heavy (no matplotlib)."""
    parser.add_argument("--lesson", type=int, metavar="N",
                        help="only lesson N's figures (plus the course-wide ones, such as the key)")
    parser.add_argument("--only", metavar="NAME[,NAME]",
                        help="only these figures, by registered name (see --list)")
    parser.add_argument("--out", default="figures", metavar="DIR",
                        help="output directory, created if missing (default: ./figures)")
    parser.add_argument("--format", default=DEFAULT_FORMATS, metavar="FMT[,FMT]",
                        help=f"file formats, comma-separated, from {', '.join(FORMATS)} (default: {DEFAULT_FORMATS})")
    parser.add_argument("--seed", type=int, default=0, help="seed passed to every figure function (default: 0)")
    parser.add_argument("--list", action="store_true", help="list the registered figures and exit")


class _UsageError(Exception):
    """A bad argument: reported in one line, exit code 2."""


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _formats(value: str) -> list[str]:
    fmts = [f.lower().lstrip(".") for f in _split(value)]
    unknown = [f for f in fmts if f not in FORMATS]
    if unknown or not fmts:
        raise _UsageError(f"--format: unknown format {', '.join(map(repr, unknown)) or repr(value)}; "
                          f"choose from {', '.join(FORMATS)} (comma-separated)")
    return list(dict.fromkeys(fmts))  # drop repeats, keep order


def _select(registry, lesson: int | None, only: str | None):
    """The figures to draw, in registry order."""
    specs = registry.all_figures()
    if lesson is not None:
        known = registry.lessons()
        if lesson not in known:
            raise _UsageError(f"--lesson: no figures for lesson {lesson}; lessons with figures: "
                              f"{', '.join(map(str, known)) or 'none'}")
        specs = [s for s in specs if s.lesson in (lesson, None)]
    if only is not None:
        wanted = _split(only)
        names = [s.name for s in registry.all_figures()]
        unknown = [n for n in wanted if n not in names]
        if unknown or not wanted:
            raise _UsageError(f"--only: unknown figure {', '.join(map(repr, unknown)) or repr(only)}; "
                              f"registered figures: {', '.join(names)}")
        outside = [n for n in wanted if n not in {s.name for s in specs}]
        if outside:
            raise _UsageError(f"--only: {', '.join(map(repr, outside))} not in lesson {lesson}; "
                              f"lesson {lesson} has: {', '.join(s.name for s in specs)}")
        specs = [s for s in specs if s.name in wanted]
    return specs


def _out_dir(value: str) -> Path:
    out = Path(value)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _UsageError(f"--out: cannot create output directory {str(out)!r}: {e.strerror or e}") from None
    probe = out / ".minitf-write-test"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise _UsageError(f"--out: cannot write to output directory {str(out)!r}: {e.strerror or e}") from None
    return out


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from minitf.course.kit.figures import registry, render

    try:
        if args.list:
            specs = registry.all_figures()
            width = max(len(s.name) for s in specs)
            for s in specs:
                print(f"{s.name:<{width}}  {s.where:<12} {s.title}")
            return 0
        formats = _formats(args.format)
        specs = _select(registry, args.lesson, args.only)
        out = _out_dir(args.out)
    except _UsageError as e:
        print(f"minitf figures: error: {e}", file=sys.stderr)
        return 2

    written: list[Path] = []
    with tqdm(specs, desc="figures", unit="fig", file=sys.stderr, disable=None) as bar:  # off unless a terminal
        for spec in bar:
            bar.set_postfix_str(spec.name)
            try:
                paths = render.render_figure(spec, out, formats, seed=args.seed)
            except OSError as e:
                bar.close()
                print(f"minitf figures: error: cannot write {spec.name!r} to {str(out)!r}: {e}", file=sys.stderr)
                return 2
            written += paths
            tqdm.write(f"{spec.name}: " + ", ".join(str(p) for p in paths), file=sys.stdout)
    # Byte-identical output holds for one matplotlib and NumPy; record which, so a check for
    # stale files (tests/course/kit/test_figures_current.py) knows whether a comparison is meaningful.
    (out / VERSIONS_FILE).write_text(json.dumps(library_versions(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(written)} files ({len(specs)} figures x {', '.join(formats)}) to {out}/")
    return 0


VERSIONS_FILE = "versions.json"


def library_versions() -> dict:
    """The versions that decide the generated bytes."""
    import matplotlib
    import numpy

    return {"matplotlib": matplotlib.__version__, "numpy": numpy.__version__}
