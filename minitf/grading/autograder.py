"""A Gradescope autograder for a homework: build the bundle, and run it there.

``minitf homework autograder hw08 --instructor tests/instructor --out DIR`` writes

=====================  ===========================================================
``setup.sh``            installs bubblewrap and the bundled minitf (Gradescope runs it
                        once, from ``/autograder/source``)
``run_autograder``      grades the submission into ``/autograder/results/results.json``
``instructor/hw08/``    the reference solution, the answer key and the hidden tests
``minitf/``             minitf's source, as installed by ``setup.sh``
``autograder.zip``      all of the above, to upload
=====================  ===========================================================

Gradescope unpacks the zip into ``/autograder/source``, puts the student's files in
``/autograder/submission`` and reads ``/autograder/results/results.json``.
``run_autograder`` honours ``$AUTOGRADER_ROOT`` instead of ``/autograder``, which is how
the bundle is tested.  It runs the student's code inside bubblewrap and fails (a non-zero
exit, which Gradescope shows) where it cannot; ``MINITF_ISOLATION=process`` in the
autograder's environment grades without it, for a container that cannot run bwrap.
"""
from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from . import get_homework

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, in /autograder/source, when the autograder image is built.
set -euo pipefail
cd "$(dirname "$0")"
# bubblewrap: the student's code runs inside it (run_autograder fails without it, unless
# MINITF_ISOLATION=process is set)
apt-get update -qq && apt-get install -y -qq bubblewrap
python3 -m pip install ./minitf
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission.  AUTOGRADER_ROOT lets a test lay the folders out elsewhere.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
exec python3 -m minitf.grading.autograder {homework} "$ROOT"
"""

# what of the repository setup.sh installs: the package and the files its build reads
SOURCE_FILES = ("setup.cfg", "pyproject.toml", "README.md")


def build(homework: str, instructor, out) -> Path:
    """Write the autograder bundle of ``homework`` into ``out`` (created; must be empty if it
    exists) from the instructor folder ``instructor``; return the zip's path."""
    hw = get_homework(homework)
    folder = hw.instructor_dir(instructor)
    if folder is None:
        raise FileNotFoundError(f"instructor: expected a folder holding {hw.name}/ (reference.py, key.json, "
                                f"tests.py), got {str(instructor)!r}")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"out: {str(out)!r} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    (out / "setup.sh").write_text(SETUP, encoding="utf-8")
    (out / "run_autograder").write_text(RUN.format(homework=hw.name), encoding="utf-8")
    for script in ("setup.sh", "run_autograder"):
        (out / script).chmod(0o755)
    shutil.copytree(folder, out / "instructor" / hw.name, ignore=shutil.ignore_patterns("__pycache__"))
    package = Path(__file__).resolve().parents[1]  # minitf/
    source = out / "minitf"
    shutil.copytree(package, source / "minitf", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in SOURCE_FILES:
        if (package.parent / name).is_file():
            shutil.copyfile(package.parent / name, source / name)
    archive = out / "autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(out.rglob("*")):
            if path.is_file() and path != archive:
                info = zipfile.ZipInfo.from_file(path, path.relative_to(out).as_posix())
                with open(path, "rb") as f:
                    z.writestr(info, f.read())
    return archive


def run(homework: str, root) -> int:
    """Grade the submission in ``root/submission`` into ``root/results/results.json``
    (Gradescope's layout); a submission that cannot be graded gets a score of 0 and says why."""
    import json

    from .grader import grade

    hw = get_homework(homework)
    root = Path(root)
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    files = sorted((root / "submission").glob("*.py"))
    named = [f for f in files if f.name == hw.filename]
    chosen = named[0] if named else (files[0] if len(files) == 1 else None)
    if chosen is None:
        why = (f"expected your file {hw.filename} (or a single .py file); found "
               f"{', '.join(f.name for f in files) or 'no Python file'}")
        results.write_text(json.dumps({"score": 0.0, "output": why}, indent=2) + "\n", encoding="utf-8")
        return 0
    # bubblewrap, unless the instructor has knowingly set MINITF_ISOLATION=process (a container
    # that cannot run it): grading fails loudly rather than quietly without the boundary
    result = grade(hw.name, chosen, instructor=root / "source" / "instructor",
                   isolation=os.environ.get("MINITF_ISOLATION", "bwrap"))
    result.write_results(results)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(run(sys.argv[1], sys.argv[2]))
