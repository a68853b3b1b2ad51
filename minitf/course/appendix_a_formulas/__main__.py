"""``python -m minitf.course.appendix_a_formulas [--write [PATH]]``: run every formula's check, or write
Appendix A's notebook from the registry."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    from . import notebook, run_all
    from ..kit.lessons import lessons_dir

    parser = argparse.ArgumentParser(prog="python -m minitf.course.appendix_a_formulas", description=__doc__)
    parser.add_argument("--write", nargs="?", const="", metavar="PATH",
                        help=f"write the notebook (default: lessons/{notebook.NOTEBOOK}) instead of running the checks")
    args = parser.parse_args(argv)
    if args.write is not None:
        if args.write:
            path = Path(args.write)
        else:
            folder = lessons_dir()
            if folder is None:
                print("--write: no lessons/ folder here or beside the package; give a PATH", file=sys.stderr)
                return 2
            path = folder / notebook.NOTEBOOK
        print(f"{notebook.write(path)}: {len(notebook.cells())} cells written")
        return 0
    results = run_all()
    for r in results:
        print(r.report())
    failed = [r.formula.id for r in results if not r.ok]
    print(f"{len(results)} formulas, {len(results) - len(failed)} passed"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
