"""The Gradescope autograder bundle (``minitf homework autograder``), run as Gradescope runs it in
a simulated layout (a temporary folder shaped like ``/autograder``).  The attacks on it are in
``test_attacks_gradescope.py``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from grading.tools import BWRAP, INSTRUCTOR

from minitf.cli import main as cli_main
from minitf.grading import get_homework, new_homework

HW08 = get_homework("hw08")
REFERENCE = INSTRUCTOR / "hw08" / "reference.py"


# ---- the Gradescope autograder -------------------------------------------------------------------------------------
def bundle_for(tmp_path, homework: str = "hw08") -> Path:
    bundle = tmp_path / "bundle"
    assert cli_main(["homework", "autograder", homework, "--instructor", str(INSTRUCTOR), "--out", str(bundle)]) == 0
    return bundle


def gradescope(tmp_path, bundle: Path, files: dict, *, cwd=None, path=None, isolation=None) -> tuple[dict, object]:
    """Lay ``bundle`` out as Gradescope does (``tmp_path/autograder/{source,submission,results}``),
    put ``files`` (relative path -> bytes, or a callable making the entry) in the submission,
    run ``run_autograder`` from ``cwd`` (default: the submission folder); the results and the run."""
    root = tmp_path / "autograder"
    shutil.copytree(bundle, root / "source")
    submission = root / "submission"
    submission.mkdir()
    for rel, content in files.items():
        dest = submission / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        content(dest) if callable(content) else dest.write_bytes(content)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root),  # this Python first, as the image's would be
           "PATH": path or os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    env.pop("MINITF_ISOLATION", None)
    if isolation or not BWRAP:
        env["MINITF_ISOLATION"] = isolation or "process"
    proc = subprocess.run(["/bin/bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                          text=True, timeout=600, cwd=cwd or submission)
    results = root / "results" / "results.json"
    return (json.loads(results.read_text()) if results.is_file() else None), proc


def test_autograder_bundle_grades_a_submission_as_gradescope_runs_it(tmp_path):
    bundle = bundle_for(tmp_path)
    for name in ("setup.sh", "run_autograder", "autograder.zip", "instructor/hw08/reference.py",
                 "instructor/hw08/key.json", "instructor/hw08/tests.py", "instructor/secret.json", "minitf/setup.cfg",
                 "minitf/minitf/course/l08_teacher_forcing/homework/tests/task1.py"):
        assert (bundle / name).is_file(), name
    assert os.access(bundle / "run_autograder", os.X_OK)
    assert "python3 -I -m minitf.grading.autograder" in (bundle / "run_autograder").read_text()
    full, proc = gradescope(tmp_path / "ref", bundle, {HW08.filename: REFERENCE.read_bytes()})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert full["score"] == 100.0 and len(full["tests"]) == 6
    blank, _ = gradescope(tmp_path / "blank", bundle, {HW08.filename: HW08.render_template().encode()})
    assert blank["score"] == 0.0


def test_every_test_has_a_visibility_and_the_concept_check_waits_for_the_due_date(tmp_path):
    results, _ = gradescope(tmp_path, bundle_for(tmp_path), {HW08.filename: REFERENCE.read_bytes()})
    visibility = {t["name"][:8]: t["visibility"] for t in results["tests"]}
    assert visibility == {"Task 8.1": "visible", "Task 8.2": "visible", "Task 8.3": "visible",
                          "Task 8.4": "visible", "Task 8.5": "visible", "Task 8.6": "after_due_date"}, visibility
    assert results["visibility"] == "visible"


def test_the_submission_is_found_in_a_subfolder(tmp_path):
    results, proc = gradescope(tmp_path, bundle_for(tmp_path),
                               {f"my-work/hw8/{HW08.filename}": REFERENCE.read_bytes(), "my-work/notes.txt": b"hi"})
    assert proc.returncode == 0 and results["score"] == 100.0, (results, proc.stderr[-2000:])


def test_a_notebook_is_refused_asking_for_a_py_file(tmp_path):
    results, _ = gradescope(tmp_path, bundle_for(tmp_path), {"hw08.ipynb": b'{"cells": []}'})
    assert results["score"] == 0 and "export it to .py" in results["output"], results


def test_where_bubblewrap_cannot_start_the_results_say_so(tmp_path):
    """No bwrap on the PATH (a container without it): a results.json scoring 0 that says why and
    names the fallback, and a run that still ends normally (Gradescope shows the results)."""
    results, proc = gradescope(tmp_path, bundle_for(tmp_path), {HW08.filename: REFERENCE.read_bytes()},
                               path=str(Path(sys.executable).parent))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert results["score"] == 0 and "bubblewrap" in results["output"] and "MINITF_ISOLATION=process" in \
        results["output"], results


def test_the_documented_fallback_grades_in_an_ordinary_process(tmp_path):
    results, proc = gradescope(tmp_path, bundle_for(tmp_path), {HW08.filename: REFERENCE.read_bytes()},
                               path=str(Path(sys.executable).parent), isolation="process")
    assert proc.returncode == 0 and results["score"] == 100.0, (results, proc.stderr[-2000:])
