"""Shortcuts through homeworks 9 and 10 (tests/homework_submissions/hostile/hwNN_*.py, each a
patch on the blank template), each closed in its homework's own tests or forbidden list:

* ``hw10_copy_nll``: minitf's masked cross-entropy under another name -- the pointer-generator's
  ``copy_nll`` on softmax(logits) -- now switched off for task 10.1;
* ``hw09_snapped_differences``: the coverage loss is piecewise linear, so central differences
  rounded to the nearest multiple of weight / n_real were exact; every problem of task 9.4
  now holds exact ties (a_1 = a_0 = c_1), where a difference quotient lands halfway;
* ``hw09_returns_its_input``: the logits and the gold inputs handed back unchanged earned the
  edge-case tests (k = 0 or k >= V, every draw gold: 3.75 + 5 points); each of those tests now
  also checks an ordinary case;
* ``hw09_unit_step_differences``: the mixture is linear, so a difference quotient with a step
  of 1 was exact but for the rounding of <dP, P>; task 9.3's float64 backward tests now give
  each position's row of dP its own scale (1e-4 .. 1e4), and that rounding swamps the small rows.

Known limit, not tested here: differences taken one vocabulary column at a time for every
position at once (positions do not interact), summed per position, keep their precision.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from homework_tools import graded, hostile_file, requires_bwrap, submission_file, task_result  # noqa: F401

from minitf.grading.workers import _inside, _python_paths, bwrap_command


def test_copy_nll_for_the_teacher_forced_loss_gets_no_credit(hostile_file):
    t = task_result(graded(hostile_file("hw10_copy_nll"), tasks=[1]), 1)
    assert t.score == 0 and t.status == "no credit", (t.status, t.score, t.message)
    assert "copy_nll" in t.message, t.message


def test_snapped_finite_differences_score_nothing_on_the_coverage_gradient(hostile_file):
    t = task_result(graded(hostile_file("hw09_snapped_differences"), tasks=[4]), 4)
    assert t.score == 0 and t.status == "failed", (t.status, t.score, t.message)
    assert all(x["outcome"] != "passed" for x in t.tests), [(x["name"], x["outcome"]) for x in t.tests]


def test_plain_finite_differences_lose_every_coverage_test(submission_file):
    """The honest mistake (central differences, step 1e-6) used to pass all but one of task 9.4's
    tests; now each holds a tie, and its message still names finite differences."""
    t = task_result(graded(submission_file("hw09_coverage_finite_differences"), tasks=[4]), 4)
    assert t.passed == 0 and t.score == 0, [(x["name"], x["outcome"]) for x in t.tests]
    assert "precision of finite differences" in t.message, t.message


def test_unit_step_differences_fail_every_float64_backward_test(hostile_file):
    t = task_result(graded(hostile_file("hw09_unit_step_differences"), tasks=[3]), 3)
    outcome = {x["name"]: x["outcome"] for x in t.tests}
    backward64 = [n for n in outcome if "backward" in n and "float32" not in n]
    assert len(backward64) == 2 and all(outcome[n] == "failed" for n in backward64), outcome
    assert all(outcome[n] == "passed" for n in outcome if "forward" in n), outcome  # its forward is right
    assert t.status == "failed" and "precision of finite differences" in t.message, t.message


def test_handing_the_input_back_scores_nothing(hostile_file):
    result = graded(hostile_file("hw09_returns_its_input"), tasks=[1, 5])
    for number in (1, 5):
        t = task_result(result, number)
        assert t.passed == 0 and t.score == 0, (t.label, [(x["name"], x["outcome"]) for x in t.tests])


# ---- what the student's process can see -----------------------------------------------------------------
REPOSITORY = Path(__file__).resolve().parents[1]


@requires_bwrap
def test_the_sandbox_shows_neither_the_repository_nor_home_folders(tmp_path):
    """Inside bubblewrap the student's process sees the system's /usr, /bin and /lib, the Python
    installation and its own work folder -- not the repository (whose .git holds every committed
    reference solution and answer key, readable once the in-process audit hook is patched away),
    nothing of /root or /home but the Python installation, not a course bundle.  Checked by
    running Python under the very command line the grader uses."""
    probe = """if True:
        import json, os, sys
        paths, found = json.loads(sys.argv[1]), []
        for top in ("/root", "/home", "/work", "/srv", "/opt", "/var"):
            for dirpath, dirnames, filenames in os.walk(top):
                found += [os.path.join(dirpath, n) for n in dirnames + filenames]
                if dirpath.count(os.sep) >= 4:
                    dirnames[:] = []
        print(json.dumps({"exists": [p for p in paths if os.path.exists(p)], "found": found}))"""
    must_not_see = [str(REPOSITORY / ".git"), str(REPOSITORY / "setup.cfg"), str(REPOSITORY / "tests" / "instructor"),
                    "/autograder", "/etc/passwd"]
    command = [*bwrap_command(str(tmp_path)), sys.executable, "-c", probe, json.dumps(must_not_see)]
    seen = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert seen["exists"] == [], seen["exists"]
    python = _python_paths()
    strays = [f for f in seen["found"] if not any(_inside(f, p) or _inside(p, f) for p in python)]
    assert strays == [], strays[:10]


@requires_bwrap
def test_a_submission_that_patches_the_audit_hook_still_finds_no_repository(hostile_file):
    """The audit hook is patched away, then the repository's objects and instructor folder are
    looked for from every place a submission might guess (the virtual environment's parent, the
    working folder's ancestors, /work, /root, /home): nothing is found, and the blank template
    under it scores 0."""
    result = graded(hostile_file("hw07_reads_the_repository"), tasks=[1, 4])
    assert result.score == 0, [(t.label, t.score, t.status, t.message) for t in result.tasks]
