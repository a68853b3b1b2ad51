"""Attacks on the Gradescope autograder, in a simulated Gradescope layout (a temporary folder
shaped like ``/autograder``): a ``numpy.py`` (and friends) beside the submission to hijack the
grader's own imports, and a submission that is not a regular file -- a link to the bundle's
reference, a link to a folder, a pipe -- each scoring 0 with the reason.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from grading.tools import INSTRUCTOR

from minitf.grading import get_homework

from .test_autograder import bundle_for, gradescope

HW08 = get_homework("hw08")
REFERENCE = INSTRUCTOR / "hw08" / "reference.py"

HIJACK = b'''import json, os, pathlib
root = pathlib.Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
(root / "hijacked").write_text("the grader imported the student's file")
(root / "results").mkdir(exist_ok=True)
(root / "results" / "results.json").write_text(json.dumps({"score": 100.0}))
raise SystemExit(0)
'''


def test_a_students_numpy_beside_the_submission_does_not_hijack_the_grader(tmp_path):
    """``numpy.py``, ``sitecustomize.py``, ``pytest.py`` and a ``minitf/`` package beside a blank
    submission, run_autograder started from the submission folder: the grader imports none of
    them (``python3 -I`` from the bundle's folder), and the blank file scores 0."""
    files = {HW08.filename: HW08.render_template().encode(), "numpy.py": HIJACK, "sitecustomize.py": HIJACK,
             "usercustomize.py": HIJACK, "pytest.py": HIJACK, "minitf/__init__.py": HIJACK}
    results, proc = gradescope(tmp_path, bundle_for(tmp_path), files)
    assert not (tmp_path / "autograder" / "hijacked").exists(), proc.stderr[-2000:]
    assert proc.returncode == 0 and results["score"] == 0 and len(results["tests"]) == 6, (results, proc.stderr)


@pytest.mark.parametrize("kind, says", [
    ("link to the reference", "symbolic link"),  # git keeps links: this one points at the bundle's reference
    ("link to a folder", "expected your file"),  # the instructor folder, linked under the file's name
    ("pipe", "not a regular file"),  # a FIFO that would block, or feed whatever is written to it
    ("folder behind a link", "expected your file"),  # the reference inside a linked folder: not followed
])
def test_a_submission_that_is_not_a_regular_file_scores_zero(tmp_path, kind, says):
    root = tmp_path / "autograder"
    instructor = root / "source" / "instructor"

    def make(dest: Path):
        if kind == "link to the reference":
            os.symlink(instructor / "hw08" / "reference.py", dest)
        elif kind == "link to a folder":
            os.symlink(instructor / "hw08", dest)
        elif kind == "pipe":
            os.mkfifo(dest)
        else:
            dest.write_text("my notes\n")
            os.symlink(instructor / "hw08", dest.parent / "work")

    name = "notes.txt" if kind == "folder behind a link" else HW08.filename
    results, proc = gradescope(tmp_path, bundle_for(tmp_path), {name: make})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert results["score"] == 0, results
    text = results.get("output", "") + " ".join(t.get("output", "") for t in results.get("tests", []))
    assert says in text, results
