"""A Gradescope autograder for a homework: build the bundle, and run it there.

``minitf homework autograder hw08 --instructor tests/instructor --out DIR`` writes

=====================  ===========================================================
``setup.sh``            installs bubblewrap and the bundled minitf (Gradescope runs it
                        once, from ``/autograder/source``)
``run_autograder``      grades the submission into ``/autograder/results/results.json``
``instructor/hw08/``    the reference solution, the answer key and the hidden tests
``instructor/secret.json``  the course's secret seed (the secret problems)
``minitf/``             minitf's source, as installed by ``setup.sh``
``autograder.zip``      all of the above, to upload
=====================  ===========================================================

Gradescope unpacks the zip into ``/autograder/source``, puts the student's files in
``/autograder/submission`` and reads ``/autograder/results/results.json``.
``run_autograder`` honours ``$AUTOGRADER_ROOT`` instead of ``/autograder``, which is how
the bundle is tested.  Under Gradescope's rules:

* the grader runs as ``python3 -I`` from ``/autograder/source``: neither the caller's working
  folder nor the submission's is on ``sys.path`` (a student's ``numpy.py`` beside the
  submission cannot stand in for NumPy in the grader), and no environment variable changes
  what Python imports;
* the submission is found anywhere under ``/autograder/submission`` (the homework's file name
  first, else the one ``.py`` file); a link, a folder, a device, a path outside that folder or
  a notebook is refused, with the reason, and scores 0;
* every test carries a ``visibility``: the concept check's ``after_due_date`` (its answers
  would otherwise be found by trying), the others ``visible``.  The total cannot give the key
  away either: Gradescope's specification ("Controlling Test Case Visibility") says that while
  a test case is hidden, students do not see their total score;
* the student's code runs inside bubblewrap.  Where bubblewrap cannot start (a container
  that forbids it), ``results.json`` says so and scores 0 -- nothing is graded without the
  boundary.  **The fallback**, for a course that knowingly accepts an ordinary process (no
  boundary against a hostile submission): set ``MINITF_ISOLATION=process`` in the
  autograder's environment (Gradescope: the autograder's settings, or ``export`` it in
  ``run_autograder``).
"""
from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

from . import INSTRUCTOR_ENV, get_homework
from .problems import SECRET_FILE

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, in /autograder/source, when the autograder image is built.
set -euo pipefail
cd "$(dirname "$0")"
# bubblewrap: the student's code runs inside it (without it every submission is told so and
# scores 0, unless MINITF_ISOLATION=process is set: see minitf.grading.autograder)
apt-get update -qq && apt-get install -y -qq bubblewrap
python3 -m pip install ./minitf
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission.  AUTOGRADER_ROOT lets a test lay the folders out elsewhere.
# python3 -I, from the bundle's own folder: nothing of the caller's folder or environment on sys.path.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
cd "$ROOT/source"
exec python3 -I -m minitf.grading.autograder {homework} "$ROOT"
"""

# what of the repository setup.sh installs: the package and the files its build reads
SOURCE_FILES = ("setup.cfg", "pyproject.toml", "README.md")
ISOLATION_ENV = "MINITF_ISOLATION"


def build(homework: str, instructor, out) -> Path:
    """Write the autograder bundle of ``homework`` into ``out`` (created; must be empty if it
    exists) from the instructor folder ``instructor``; return the zip's path."""
    hw = get_homework(homework)
    folder = hw.instructor_dir(instructor)
    if folder is None and not (instructor or os.environ.get(INSTRUCTOR_ENV)):
        raise FileNotFoundError(f"instructor: missing: give the instructor folder holding {hw.name}/ "
                                f"(--instructor DIR, or ${INSTRUCTOR_ENV})")
    if folder is None:
        raise FileNotFoundError(f"instructor: expected a folder holding {hw.name}/ (reference.py, key.json, "
                                f"tests.py), got {str(instructor or os.environ.get(INSTRUCTOR_ENV))!r}")
    secret = folder.parent / SECRET_FILE
    if not secret.is_file():
        raise FileNotFoundError(f"instructor: {folder.parent} holds no {SECRET_FILE} (the secret problems' seed): "
                                f"`minitf homework secret --instructor {folder.parent}` writes one, once per course")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"out: {str(out)!r} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    (out / "setup.sh").write_text(SETUP, encoding="utf-8")
    (out / "run_autograder").write_text(RUN.format(homework=hw.name), encoding="utf-8")
    for script in ("setup.sh", "run_autograder"):
        (out / script).chmod(0o755)
    shutil.copytree(folder, out / "instructor" / hw.name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(secret, out / "instructor" / SECRET_FILE)
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


def find_submission(hw, folder: Path) -> tuple[Path | None, str]:
    """The student's file under ``folder`` (at any depth, links not followed): the homework's
    file name first, else the one Python file (or notebook, to be refused by name); ``(None,
    why)`` when there is none or more than one to choose from."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        found += [Path(dirpath) / n for n in sorted(filenames) if not n.startswith(".")]
    named = [f for f in found if f.name == hw.filename]
    python = [f for f in found if f.suffix in (".py", ".ipynb")]
    if len(named) == 1:
        return named[0], ""
    if not named and len(python) == 1:
        return python[0], ""
    shown = ", ".join(str(f.relative_to(folder)) for f in (named or python)[:10]) or "no Python file"
    return None, (f"expected your file {hw.filename} (or a single .py file) in your submission; found {shown}")


def _write(results: Path, data: dict) -> None:
    results.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def run(homework: str, root) -> int:
    """Grade the submission in ``root/submission`` into ``root/results/results.json``
    (Gradescope's layout); a submission that cannot be graded gets a score of 0 and says why."""
    from .grader import grade
    from .workers import NO_BWRAP, bwrap_works

    hw = get_homework(homework)
    root = Path(root).resolve()
    os.chdir(root / "source")  # a fixed folder, whoever calls (run_autograder also starts here)
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    isolation = os.environ.get(ISOLATION_ENV, "bwrap")
    if isolation != "process" and not bwrap_works():
        _write(results, {"score": 0.0, "visibility": "visible", "output": (
            f"Not graded: the autograder's {NO_BWRAP}, and it grades nothing without that boundary. This is a "
            f"fault of the autograder's set-up, not of your submission: tell the course staff. (Staff: install "
            f"bubblewrap in setup.sh and allow it to create namespaces, or set {ISOLATION_ENV}=process to grade in "
            f"an ordinary process, which is no boundary against a hostile submission.)")})
        return 0
    submission = root / "submission"
    chosen, why = find_submission(hw, submission)
    if chosen is None:
        _write(results, {"score": 0.0, "visibility": "visible", "output": why})
        return 0
    try:
        result = grade(hw.name, chosen, instructor=root / "source" / "instructor", isolation=isolation,
                       folder=submission)
    except Exception as e:  # the grader's own failure: say so, score nothing, and fail the run
        _write(results, {"score": 0.0, "visibility": "visible", "output": (
            f"The autograder failed ({type(e).__name__}: {e}); this is not your submission's fault: tell the course "
            f"staff.")[:4000]})
        return 1
    result.write_results(results)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(run(sys.argv[1], sys.argv[2]))
