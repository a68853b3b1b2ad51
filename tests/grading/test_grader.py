"""The grading engine: the static scan, a submission that crashes, hangs, exits or prints
garbage costs only what it breaks, the grader's own failures raise instead of scoring, the
plugin run by hand, and what a student installs holds no solution.  (The attacks on it are in
``test_attacks_*.py``, by what they attack; the secret problems in ``test_problems.py``.)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from grading.tools import INSTRUCTOR, REPO, submission_file, task_result  # noqa: F401
from grading import tools

from minitf.grading import get_homework
from minitf.grading.grader import grade
from minitf.grading.submission import scan_source
from minitf.grading.workers import resolve_isolation

HW08 = get_homework("hw08")
REFERENCE = INSTRUCTOR / "hw08" / "reference.py"
KEY = json.loads((INSTRUCTOR / "hw08" / "key.json").read_text(encoding="utf-8"))


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    """Grade ``path`` as homework 8 (the grader's own defences are tested on it)."""
    return tools.graded(path, tasks, homework=homework, **kwargs)


# ---- the static scan -------------------------------------------------------------------------------------
def test_scan_finds_forbidden_imports_and_attributes():
    source = (
        "import minitf.loss\n"
        "from minitf.data import shift_right as sr\n"
        "from minitf import masks\n"
        "from minitf.attention import MultiHeadAttention\n"
        "def f(x):\n"
        "    return minitf.loss.cross_entropy(x, x), masks.causal_mask(3), MultiHeadAttention.backward\n"
    )
    found = scan_source(source, HW08)
    assert any("shift_right" in f and "line 2" in f for f in found[1])
    assert any("cross_entropy" in f and "line 6" in f for f in found[3])
    assert any("minitf.masks.causal_mask" in f for f in found[2])
    assert any("MultiHeadAttention.backward" in f for f in found[4])
    assert 5 not in found and 6 not in found


def test_scan_finds_the_package_level_re_exports():
    found = scan_source("import minitf\ndef f(x):\n    return minitf.shift_right(x, 1, 0), minitf.cross_entropy\n", HW08)
    assert sorted(found) == [1, 3]
    found = scan_source("from minitf import causal_mask\n", HW08)
    assert sorted(found) == [2]


def test_scan_flags_the_homework_package_for_every_task():
    found = scan_source("from minitf.grading.grader import *\n", HW08)
    assert sorted(found) == [1, 2, 3, 4, 5, 6]
    found = scan_source("import importlib\nm = importlib.import_module('minitf.grading.plugin')\n", HW08)
    assert sorted(found) == [1, 2, 3, 4, 5, 6]


def test_scan_does_not_flag_a_mere_string():
    assert scan_source("def f():\n    print('minitf.homework is the grader')\n", HW08) == {}


# ---- submissions that crash, hang, exit or print garbage ----------------------------------------------------------
def test_import_crash_costs_every_task_with_the_reason(submission_file):
    result = graded(submission_file("hw08_import_crash"))
    assert result.score == 0
    for t in result.tasks:
        assert t.status == "failed", (t.label, t.status)
        assert "could not be imported" in t.message and "RuntimeError: half-finished edit" in t.message, t.message
        assert "line" in t.message


def test_hanging_import_is_stopped(submission_file):
    result = graded(submission_file("hw08_import_hangs"), tasks=[1, 6], probe_timeout=3)
    assert result.score == 0
    assert all("did not finish within 3 s" in t.message for t in result.tasks), result.tasks[0].message


def test_endless_loop_costs_only_its_task(submission_file):
    result = graded(submission_file("hw08_endless_decoding"), tasks=[5, 1], test_timeout=3)
    t5, t1 = task_result(result, 5), task_result(result, 1)
    assert t5.status == "timeout" and t5.score == 0, (t5.status, t5.message)
    assert "time limit of 3 s" in t5.message
    assert t1.ok and t1.score == t1.max_score


def test_whole_task_time_limit_stops_the_task(submission_file):
    # one call may take 60 s, the task's calls 6 s in all: the task's limit stops it
    result = graded(submission_file("hw08_endless_decoding"), tasks=[5], test_timeout=60, task_timeout=6)
    t5 = task_result(result, 5)
    assert t5.score == 0 and t5.status == "timeout", (t5.status, t5.message)
    assert "6 s" in t5.message, t5.message


def test_process_exit_costs_only_its_task(submission_file):
    result = graded(submission_file("hw08_exits_in_mask"), tasks=[2, 6])
    t2, t6 = task_result(result, 2), task_result(result, 6)
    assert t2.score == 0 and not t2.ok
    assert "exit code 3: the code called sys.exit" in t2.message, t2.message
    assert t6.ok


def test_garbage_output_loses_nothing(submission_file):
    result = graded(submission_file("hw08_prints_garbage"), tasks=[1, 3, 6])
    assert result.all_passed and result.score == result.max_score, [(t.label, t.message) for t in result.tasks]


def test_hidden_tests_insist_on_bubblewrap_unless_process_is_named(monkeypatch):
    import minitf.grading.workers as workers

    monkeypatch.setattr(workers, "bwrap_works", lambda: False)  # as on a machine without bwrap
    assert resolve_isolation("auto") == "process"
    with pytest.raises(RuntimeError, match=r"bubblewrap .* \(the instructor files need it\)"):
        resolve_isolation("auto", needs_boundary=True)
    with pytest.raises(RuntimeError, match="bubblewrap"):
        resolve_isolation("bwrap")
    assert resolve_isolation("process", needs_boundary=True) == "process"


def test_a_grader_that_cannot_run_its_tests_raises_instead_of_scoring_zero(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/nonexistent")  # harmless; the broken part is the plugin below
    import minitf.grading.grader as grader

    monkeypatch.setattr(grader.sys, "executable", "/bin/false")  # the grader's pytest cannot even start
    with pytest.raises(RuntimeError, match="the grader's own test run failed"):
        grade("hw08", REFERENCE, tasks=[1], isolation="process", folder=REFERENCE.parent)


# ---- pytest by hand ------------------------------------------------------------------------------------------------
def _pytest(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-o", "addopts=", "-q"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_homework_tests_refuse_to_run_without_a_submission():
    proc = _pytest("--pyargs", "minitf.course.l08_teacher_forcing.homework.tests.task1")
    assert proc.returncode != 0
    assert "give it with --submission PATH" in proc.stdout + proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_the_plugin_refuses_two_tests_of_one_name(tmp_path):
    """Outside pytest's rootdir a test's id is its name alone: the plugin stops rather than let
    two tests share one result."""
    root, tests = tmp_path / "root", tmp_path / "tests"
    root.mkdir(), tests.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    for k in (1, 2):
        (tests / f"task{k}.py").write_text("def test_same():\n    pass\n")
    proc = _pytest(str(tests / "task1.py"), str(tests / "task2.py"), "-c", str(root / "pytest.ini"), "--rootdir",
                   str(root), "-p", "minitf.grading.plugin", "--submission", str(REFERENCE),
                   "--homework-report", str(tmp_path / "report.json"), cwd=tmp_path)
    assert proc.returncode != 0
    assert "distinct names" in proc.stdout + proc.stderr and "::test_same" in proc.stdout + proc.stderr


def test_pytest_marker_selects_one_task():
    proc = _pytest("--pyargs", "minitf.course.l08_teacher_forcing.homework.tests.task1", "minitf.course.l08_teacher_forcing.homework.tests.task2",
                   "--submission", str(REFERENCE), "-m", "hw08_task2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "3 passed" in proc.stdout and "deselected" in proc.stdout


# ---- what a student installs ------------------------------------------------------------------------------------------
def test_the_installed_package_holds_no_solution_and_no_key(tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet",
                           "--target", str(target), str(REPO)], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    files = [p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()]
    assert "minitf/course/l08_teacher_forcing/homework/template.py" in files and "minitf/course/l08_teacher_forcing/homework/tests/task1.py" in files
    leaks = [f for f in files if "reference" in Path(f).name or f.endswith("key.json") or "instructor" in f]
    assert not leaks, leaks
    answers = [KEY["answers"][q]["explanation"] for q in KEY["answers"]]
    for f in files:
        if f.endswith(".py"):
            text = (target / f).read_text(encoding="utf-8", errors="replace")
            assert not any(a in text for a in answers), f




# ---- a submission is a regular file's bytes -------------------------------------------------------------------
from minitf.grading.grader import SubmissionRefused, check_source, read_submission  # noqa: E402


def test_only_a_regular_files_bytes_are_read(tmp_path):
    real = tmp_path / "alice.py"
    real.write_text("X = 1\n")
    assert read_submission(real) == b"X = 1\n"
    link = tmp_path / "bob.py"
    link.symlink_to(REFERENCE)
    folder = tmp_path / "carol.py"
    folder.mkdir()
    pipe = tmp_path / "dave.py"
    os.mkfifo(pipe)
    outside = tmp_path / "sub"
    outside.mkdir()
    (tmp_path / "linked").symlink_to(INSTRUCTOR / "hw08")
    for path, why in ((link, "symbolic link"), (folder, "is a folder"), (pipe, "not a regular file"),
                      (Path("/dev/null"), "not a regular file"), (tmp_path / "nobody.py", "no such file"),
                      (tmp_path / "erin.ipynb", "export it to .py")):
        with pytest.raises(SubmissionRefused, match=why):
            read_submission(path)
    with pytest.raises(SubmissionRefused, match="outside the submission's folder"):
        read_submission(tmp_path / "linked" / "reference.py", folder=tmp_path)


def _hard_link(path):
    """A second name for a copy of the reference (the copy outside the submission's folder)."""
    import shutil

    outside = path.parent.parent / "elsewhere"
    outside.mkdir()
    shutil.copyfile(REFERENCE, outside / "reference.py")
    os.link(outside / "reference.py", path)


@pytest.mark.parametrize("make, why", [
    (lambda p: p.symlink_to(REFERENCE), "symbolic link"),
    (_hard_link, "is a hard link"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: None, "export it to .py"),
])
def test_a_refused_submission_scores_zero_with_its_reason(tmp_path, make, why):
    (tmp_path / "submission").mkdir()
    path = tmp_path / "submission" / ("hw08_x.ipynb" if why == "export it to .py" else "hw08_x.py")
    make(path)
    result = grade("hw08", path, instructor=INSTRUCTOR, isolation="process")
    assert result.score == 0 and why in result.message and all(t.status == "refused" for t in result.tasks)
    data = result.to_gradescope()
    assert data["score"] == 0 and why in data["output"]
    assert " ".join(result.table().split()).count(why) == 1  # said once


def test_a_device_scores_zero_with_its_reason():
    result = grade("hw08", "/dev/null", instructor=INSTRUCTOR, isolation="process")
    assert result.score == 0 and "not a regular file" in result.to_gradescope()["output"]


def test_a_syntax_error_is_reported_once_before_any_test_runs(tmp_path):
    path = tmp_path / "hw08_broken.py"
    path.write_text(HW08.render_template() + "\ndef oops(:\n    pass\n")
    result = grade("hw08", path, instructor=INSTRUCTOR, isolation="process")
    assert result.score == 0 and all(t.total == 0 and t.status == "error" for t in result.tasks)
    assert "syntax error" in result.message and "line" in result.message
    assert " ".join(result.table().split()).count("syntax error") == 1
    assert check_source("x = 1\n".encode(), "f.py") is None and "UTF-8" in check_source(b"\xff\xfe", "f.py")


def test_only_the_bytes_read_once_are_graded(tmp_path, submission_file):
    """The grader works on its own copy: a file changed after it was read changes nothing."""
    path = submission_file("hw08_leaky_shift")
    data = read_submission(path)
    path.write_text("raise SystemExit('changed')\n")
    assert data != path.read_bytes()  # what a later open would see; the grader never opens it again


# ---- feedback a student can use -------------------------------------------------------------------------------------
def test_messages_are_wrapped_not_cut(submission_file):
    result = graded(submission_file("hw08_loss_mean_over_padding"), tasks=[3])
    t3 = task_result(result, 3)
    table = result.table()
    lines = [line for line in table.splitlines() if not line.startswith("submission: ")]
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    words = t3.message.split()
    assert " ".join(table.split()).count(" ".join(words[-8:])) >= 1  # the end of the message is there
    assert "..." not in t3.message[-5:]


def test_a_timeout_does_not_zero_the_tasks_passing_checks(tmp_path):
    """A call that never returns fails the checks that make it; the task's other checks keep their points."""
    snippet = tmp_path / "hw08_slow_exposure.py"
    snippet.write_text("import time\n\n\ndef exposure_bias(model, batch, start_id, eos_id):\n"
                       "    while True:\n        time.sleep(1)\n")
    path = tools.build_submission(snippet, tmp_path / "hw08_slow.py")
    t5 = task_result(graded(path, tasks=[5], test_timeout=3), 5)
    assert t5.status == "timeout" and 0 < t5.score < t5.max_score, (t5.status, t5.score, t5.message)
    outcomes = {x["name"]: x["outcome"] for x in t5.tests}
    calls_it = {n for n in outcomes if "exposure_bias" in n}  # the checks that call the endless function
    assert calls_it and all(outcomes[n] == "failed" for n in calls_it), outcomes
    assert all(o == "passed" for n, o in outcomes.items() if n not in calls_it)
    assert t5.passed == t5.total - len({n.split("[")[0] for n in calls_it})  # a check: its public and secret problems


def test_what_the_code_printed_is_shown_after_the_task(tmp_path):
    snippet = tmp_path / "hw08_chatty.py"
    snippet.write_text('print("hello from import")\n\n\ndef causal_mask(T, dtype=np.float32):\n'
                       '    print("mask of size", T, "x" * 5000)\n'
                       '    return np.triu(np.full((T, T), -1e9), 1).astype(dtype)\n')
    path = tools.build_submission(snippet, tmp_path / "hw08_chatty.py")
    result = graded(path, tasks=[2])
    t2 = task_result(result, 2)
    assert t2.ok and "hello from import" in t2.output and "mask of size 5" in t2.output, t2.output
    assert len(t2.output) < 6000 and "more output cut" in t2.output  # bounded
    assert "what your code printed" in result.table() and "mask of size" in result.to_gradescope()["tests"][0]["output"]


def test_tasks_are_named_by_number_or_label_and_homeworks_by_short_name():
    assert get_homework("hw8") is get_homework("hw08") is get_homework("8") is get_homework("HW08")
    assert HW08.task("8.3") is HW08.task(3) is HW08.task("3")
    with pytest.raises(ValueError, match=r"8\.1, 8\.2"):
        HW08.task("3.1")


# ---- a minitf object handed to the student's code stays in the grader ------------------------------------------------
def test_a_model_handed_over_stays_in_the_grader(tmp_path):
    """The student's code gets the model's configuration by value and calls its allowed methods
    through the grader; what it sets (eval mode) holds for its own calls only, what its task
    forbids is not offered, and nothing it does changes the grader's object."""
    import numpy as np

    from minitf.course.l10_finetuning.homework.tests.common import trained_model
    from minitf.grading.workers import Worker

    path = tmp_path / "probe.py"
    path.write_text('''
import numpy as np


def probe(model, src, dec):
    out = {"training": model.training, "pad": model.config.pad_id, "kind": repr(model)}
    out["has_backward"] = hasattr(model, "backward")
    try:
        model.backward(None, None)
    except AttributeError as e:
        out["backward"] = str(e)
    with model.evaluating():
        out["eval"] = model.forward(src, dec)[0]
        out["inside"] = model.training
    out["after"] = model.training
    model.eval()
    out["again"] = model.forward(src, dec)[0]
    out["cache"] = repr(model.forward(src, dec)[1])
    try:
        model.config.pad_id = 7
    except AttributeError:
        out["config_read_only"] = True
    return out
''')
    hw10 = get_homework("hw10")
    model = trained_model()
    assert model.training
    src = np.array([[5, 6, 7, 2]], dtype=np.int64)
    dec = np.array([[1, 5, 6]], dtype=np.int64)
    worker = Worker(hw10, hw10.task(1), path, isolation="process")
    try:
        out = worker.request("call", "probe", (model, src, dec))["ok"]
    finally:
        worker.stop()
    assert out["training"] is True and out["inside"] is False and out["after"] is True
    assert out["pad"] == model.config.pad_id and "kept in the grader" in out["kind"] and out["config_read_only"]
    assert not out["has_backward"] and "not 'backward'" in out["backward"]
    with model.evaluating():
        expected = model.forward(src, dec)[0]
    assert np.allclose(out["eval"], expected, rtol=1e-12, atol=0) and np.allclose(out["again"], expected, rtol=1e-12)
    assert "kept in the grader" in out["cache"]
    assert model.training  # the grader's model: as it was


def test_a_batch_grades_each_file_as_it_is_graded_alone(tmp_path, submission_file, hostile_file):
    """``grade_many`` (one test run for many files, as ``minitf grade hwNN DIR --csv`` and CI use it)
    gives each file the results.json it gets alone: the reference, the blank template, a classic
    mistake, a hostile file and a link -- nothing of one file's run reaches the next's (a concept
    check's notes did, before the plugin cleared them between files)."""
    from minitf.grading import new_homework
    from minitf.grading.grader import grade_many

    link = tmp_path / "link.py"
    link.symlink_to(INSTRUCTOR / "hw08" / "reference.py")
    paths = [INSTRUCTOR / "hw08" / "reference.py", new_homework("hw08", tmp_path / "blank.py"),
             submission_file("hw08_leaky_shift"), hostile_file("hw08_constant_answers"), link]
    options = dict(instructor=INSTRUCTOR, isolation=tools.BWRAP and "bwrap" or "process", tasks=[1, 3, 6])
    alone = [grade("hw08", p, **options).to_gradescope() for p in paths]
    together = [r.to_gradescope() for r in grade_many("hw08", paths, **options)]
    assert [r["score"] for r in alone] == [45.0, 0.0, 30.0, 0.0, 0.0]
    for p, a, b in zip(paths, alone, together):
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), p.name


def test_a_return_value_that_cannot_be_sent_is_said_plainly(tmp_path):
    """A function that returns an object of its own (not data) is told so in one sentence, not as
    an exception it did not raise."""
    snippet = tmp_path / "hw08_returns_an_object.py"
    snippet.write_text('''
class Mask:
    pass


def causal_mask(T, S=None, offset=0, dtype=None):
    return Mask()
''')
    t2 = task_result(tools.graded(tools.build_submission(snippet, tmp_path / "hw08_obj.py"), tasks=[2]), 2)
    assert t2.score == 0 and not t2.ok
    assert "your causal_mask returned a " in t2.message and "your code raised" not in t2.message, t2.message
    assert "the grader checks data only" in t2.message, t2.message
