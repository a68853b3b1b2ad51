"""Tests of minitf.homework: the template, the reference, the grader and its plugin.

What must hold: the blank template scores 0 on every task and the reference scores full
marks; each classic mistake (tests/homework_submissions/) fails the right task with a
message naming it; a submission that calls minitf's own implementation gets no credit for
that task; one that crashes, hangs or prints garbage costs the tasks it breaks and
nothing more.  Buggy submissions are graded one task at a time (``tasks=[k]``) to keep
the file fast.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitf.data
import minitf.training
from minitf.cli import main as cli_main
from minitf.homework import HW08, get_homework, new_homework
from minitf.homework.grader import grade
from minitf.homework.submission import ForbiddenCall, _resolve, forbid, scan_source

REPO = Path(__file__).resolve().parents[1]
SUBMISSIONS = Path(__file__).resolve().parent / "homework_submissions"
LESSON_TEMPLATE = REPO / "lessons" / "hw08_teacher_forcing.py"


# ---- building a buggy submission from a patch on the reference -----------------------------------------
def build_submission(snippet, dest) -> Path:
    """The reference solution with the snippet's functions (and assignments) put in place of
    the reference's of the same name; the snippet's other statements are appended."""
    reference = HW08.reference_path.read_text(encoding="utf-8")
    patch = Path(snippet).read_text(encoding="utf-8")
    ref_lines = reference.splitlines(keepends=True)
    patch_lines = patch.splitlines(keepends=True)

    def span(node, lines):
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        return start, node.end_lineno, "".join(lines[start:node.end_lineno])

    def key(node):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return node.name
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return "=" + node.targets[0].id
        return None

    ref_nodes = {key(n): n for n in ast.parse(reference).body if key(n)}
    replacements, appended = {}, []
    body = ast.parse(patch).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the snippet's docstring
    for node in body:
        k = key(node)
        if k in ref_nodes:
            replacements[k] = span(node, patch_lines)[2]
        else:
            appended.append(span(node, patch_lines)[2])
    out, pos = [], 0
    for k, node in sorted(((k, n) for k, n in ref_nodes.items() if k in replacements), key=lambda kn: kn[1].lineno):
        start, end, _ = span(node, ref_lines)
        out.append("".join(ref_lines[pos:start]))
        out.append(replacements[k])
        pos = end
    out.append("".join(ref_lines[pos:]))
    text = "".join(out) + "\n\n# ---- patch ----\n" + "\n".join(appended)
    dest = Path(dest)
    dest.write_text(text, encoding="utf-8")
    return dest


@pytest.fixture
def submission_file(tmp_path):
    def make(name: str) -> Path:
        return build_submission(SUBMISSIONS / f"{name}.py", tmp_path / f"{name}.py")

    return make


def task_result(result, number):
    (t,) = [t for t in result.tasks if t.task.number == number]
    return t


# ---- the files agree with each other ----------------------------------------------------------------------
def test_lesson_template_is_the_package_template():
    assert LESSON_TEMPLATE.read_bytes() == HW08.template_path.read_bytes(), (
        "lessons/hw08_teacher_forcing.py must be an exact copy of minitf/homework/hw08_template.py")


def _top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return names


def test_template_and_reference_define_every_task_name():
    for path in (HW08.template_path, HW08.reference_path):
        missing = {f for t in HW08.tasks for f in t.functions} - _top_level_names(path)
        assert not missing, f"{path.name} lacks {sorted(missing)}"


def test_template_stubs_raise_not_implemented_naming_their_task():
    ns: dict = {}
    exec(compile(HW08.template_path.read_text(encoding="utf-8"), str(HW08.template_path), "exec"), ns)
    for task in HW08.tasks:
        for name in task.functions:
            if name == "ANSWERS":
                assert all(v is None for v in ns["ANSWERS"].values())
                continue
            n_args = ns[name].__code__.co_argcount - len(ns[name].__defaults__ or ())
            with pytest.raises(NotImplementedError, match=rf"^Task 8\.{task.number}: "):
                ns[name](*([None] * n_args))


def _answer_key() -> dict:
    """``KEY`` of the hw08 test module, read without importing it (its markers belong to the plugin)."""
    tree = ast.parse(HW08.tests_path.read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "KEY"]
    return ast.literal_eval(node.value)


def test_questions_and_answer_key_agree():
    from minitf.homework import hw08_reference

    key = _answer_key()
    ns: dict = {}
    exec(compile(HW08.template_path.read_text(encoding="utf-8"), str(HW08.template_path), "exec"), ns)
    assert ns["QUESTIONS"] == hw08_reference.QUESTIONS
    assert set(ns["ANSWERS"]) == set(hw08_reference.ANSWERS) == set(key) == set(ns["QUESTIONS"])
    for q, (right, why) in key.items():
        assert hw08_reference.ANSWERS[q] == right
        assert right in ns["QUESTIONS"][q][1]
        assert set(why) == set(ns["QUESTIONS"][q][1]) - {right}, f"{q}: feedback for every wrong choice"


def test_every_forbidden_object_exists():
    for task in HW08.tasks:
        for path in task.forbidden:
            assert _resolve(path) is not None, f"task {task.number}: {path} does not exist"


def test_homework_files_are_not_collected_by_default():
    for path in [HW08.tests_path, LESSON_TEMPLATE, *SUBMISSIONS.glob("*.py")]:
        assert not path.name.startswith("test_") and not path.stem.endswith("_test"), path


# ---- the static scan and the run-time guard ------------------------------------------------------------------
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
    found = scan_source("from minitf.homework.hw08_reference import *\n", HW08)
    assert sorted(found) == [1, 2, 3, 4, 5, 6]
    found = scan_source("import importlib\nm = importlib.import_module('minitf.homework.hw08_reference')\n", HW08)
    assert sorted(found) == [1, 2, 3, 4, 5, 6]


def test_scan_passes_the_template_and_the_reference():
    for path in (HW08.template_path, HW08.reference_path):
        assert scan_source(path.read_text(encoding="utf-8"), HW08) == {}, path.name


def test_forbid_raises_records_and_restores():
    original = minitf.data.shift_right
    calls: list = []
    with forbid(["minitf.data.shift_right"], calls=calls):
        assert minitf.data.shift_right is not original and minitf.training.shift_right is not original
        assert minitf.shift_right is not original  # the package-level re-export too
        with pytest.raises(ForbiddenCall):
            minitf.data.shift_right(np.zeros((1, 2), dtype=np.int64), 1, 0)
    assert calls == ["minitf.data.shift_right"]
    assert minitf.data.shift_right is original and minitf.training.shift_right is original
    assert minitf.shift_right is original


# ---- whole runs ------------------------------------------------------------------------------------------------
def test_reference_scores_full_marks():
    result = grade("hw08", jobs=2)
    assert [t.task.number for t in result.tasks] == [1, 2, 3, 4, 5, 6]
    for t in result.tasks:
        assert t.ok and t.score == t.max_score and t.passed == t.total > 0, (t.label, t.status, t.message)
    assert result.score == result.max_score == 100.0
    assert result.all_passed


def test_blank_template_scores_zero_on_every_task(tmp_path):
    path = new_homework("hw08", tmp_path)
    result = grade("hw08", path, jobs=2)
    for t in result.tasks:
        assert t.score == 0 and t.status == "failed" and t.passed == 0 and t.total > 0, (t.label, t.status)
        assert f"Task 8.{t.task.number}" in t.message or "not answered yet" in t.message, t.message
    assert result.score == 0


# ---- each classic mistake fails the right task, and says which mistake --------------------------------------
CLASSIC_MISTAKES = [
    ("hw08_leaky_shift", 1, "label leakage"),
    ("hw08_no_start_token", 1, "no start token"),
    ("hw08_ignore_index_in_inputs", 1, "IGNORE_INDEX was left in the decoder inputs"),
    ("hw08_mask_sees_next", 2, "can see position"),
    ("hw08_loss_mean_over_padding", 3, "averaged over the padding"),
    ("hw08_loss_padded_length", 3, "divided by the padded length"),
    ("hw08_grad_missing_n_real", 3, "missing the 1/n_real"),
    ("hw08_cross_attention_one_block", 4, "share alone"),
    ("hw08_free_running_teacher_forced", 5, "fed the true prefix"),
]


@pytest.mark.parametrize("name, number, phrase", CLASSIC_MISTAKES, ids=[m[0] for m in CLASSIC_MISTAKES])
def test_classic_mistake_fails_its_task(submission_file, name, number, phrase):
    result = grade("hw08", submission_file(name), tasks=[number])
    t = task_result(result, number)
    assert t.status == "failed" and t.score < t.max_score, (t.status, t.score)
    assert phrase in t.message, t.message
    failing = [x for x in t.tests if x["outcome"] != "passed"]
    assert failing and all(x["message"] for x in failing)


def test_mask_seeing_next_is_called_label_leakage(submission_file):
    result = grade("hw08", submission_file("hw08_mask_sees_next"), tasks=[2])
    message = task_result(result, 2).message
    assert "position 0 can see position 1" in message and "label leakage" in message, message


def test_a_classic_mistake_costs_nothing_elsewhere(submission_file):
    result = grade("hw08", submission_file("hw08_leaky_shift"), tasks=[1, 3, 6], jobs=2)
    assert [t.ok for t in result.tasks] == [False, True, True]


# ---- calling minitf's own implementation -------------------------------------------------------------------
def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    result = grade("hw08", submission_file("hw08_calls_minitf"), tasks=[1, 2, 3], jobs=2)
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    for t, name in ((t1, "shift_right"), (t3, "cross_entropy")):
        assert t.status == "no credit" and t.score == 0, (t.label, t.status)
        assert "no credit" in t.message and name in t.message, t.message
    assert t2.ok and t2.score == t2.max_score


def test_calling_minitf_through_hidden_paths_is_caught_at_run_time(submission_file):
    result = grade("hw08", submission_file("hw08_calls_minitf_hidden"), tasks=[2, 4], jobs=2)
    for number, name in ((2, "minitf.masks.causal_mask"), (4, "minitf.attention.MultiHeadAttention.backward")):
        t = task_result(result, number)
        assert t.status == "no credit" and t.score == 0, (t.label, t.status, t.message)
        assert f"called minitf's own {name}" in t.message, t.message


# ---- submissions that crash, hang, exit or print garbage ----------------------------------------------------------
def test_import_crash_costs_every_task_with_the_reason(submission_file):
    result = grade("hw08", submission_file("hw08_import_crash"))
    assert result.score == 0
    for t in result.tasks:
        assert t.status == "error"
        assert "could not be imported" in t.message and "RuntimeError: half-finished edit" in t.message, t.message
        assert "line" in t.message


def test_hanging_import_is_stopped(submission_file):
    result = grade("hw08", submission_file("hw08_import_hangs"), tasks=[1, 6], probe_timeout=3)
    assert result.score == 0
    assert all("did not finish within 3 s" in t.message for t in result.tasks), result.tasks[0].message


def test_endless_loop_costs_only_its_task(submission_file):
    result = grade("hw08", submission_file("hw08_endless_decoding"), tasks=[5, 1], test_timeout=3, jobs=2)
    t5, t1 = task_result(result, 5), task_result(result, 1)
    assert t5.status == "timeout" and t5.score == 0, (t5.status, t5.message)
    assert "time limit" in t5.message
    assert t1.ok and t1.score == t1.max_score


def test_whole_task_time_limit_kills_the_run(submission_file):
    # the per-test limit is longer than the task's: the grader kills the process itself
    result = grade("hw08", submission_file("hw08_endless_decoding"), tasks=[5], test_timeout=60, task_timeout=6)
    t5 = task_result(result, 5)
    assert t5.score == 0 and t5.status in ("timeout", "error"), (t5.status, t5.message)
    assert "6 s" in t5.message, t5.message


def test_process_exit_costs_only_its_task(submission_file):
    result = grade("hw08", submission_file("hw08_exits_in_mask"), tasks=[2, 6], jobs=2)
    t2, t6 = task_result(result, 2), task_result(result, 6)
    assert t2.score == 0 and not t2.ok
    assert "exit code 3" in t2.message or "died" in t2.message, t2.message
    assert t6.ok


def test_garbage_output_loses_nothing(submission_file):
    result = grade("hw08", submission_file("hw08_prints_garbage"), tasks=[1, 3, 6], jobs=2)
    assert result.all_passed and result.score == result.max_score, [(t.label, t.message) for t in result.tasks]


# ---- the command line ----------------------------------------------------------------------------------------------
def test_cli_homework_new_copies_the_template(tmp_path, capsys):
    assert cli_main(["homework", "new", "hw08", str(tmp_path)]) == 0
    copied = tmp_path / HW08.filename
    assert copied.read_bytes() == HW08.template_path.read_bytes()
    capsys.readouterr()
    assert cli_main(["homework", "new", "hw08", str(copied)]) == 2
    assert "minitf homework new: error:" in capsys.readouterr().err
    assert cli_main(["homework", "new", "hw08", str(copied), "--force"]) == 0
    assert cli_main(["homework", "new", "hw99", str(tmp_path / "x.py")]) == 2
    assert "hw08" in capsys.readouterr().err


def test_cli_grade_prints_a_table_and_writes_results(tmp_path, capsys):
    results = tmp_path / "results.json"
    assert cli_main(["grade", "hw08", "--reference", "--task", "6", "--task", "2", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "8.2" in out and "8.6" in out and "20/20" in out
    data = json.loads(results.read_text())
    assert data["score"] == 20.0
    assert [t["name"][:8] for t in data["tests"]] == ["Task 8.6", "Task 8.2"]
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output"} and t["score"] == t["max_score"]


@pytest.mark.parametrize("argv, message", [
    (["hw08", "MISSING"], "no such file"),
    (["hw08"], "expected a submission file (or --reference)"),
    (["hw08", "x.py", "--reference"], "not both"),
    (["hw99", "--reference"], "homework: expected one of 'hw08'"),
    (["hw08", "--reference", "--task", "99"], "--task: expected one of [1, 2, 3, 4, 5, 6]"),
    (["hw08", "--reference", "--timeout", "-5"], "--timeout: expected a positive number of seconds"),
    (["hw08", "--reference", "--test-timeout", "0"], "--test-timeout: expected a positive number of seconds, got 0"),
    (["hw08", "--reference", "--jobs", "0"], "--jobs: expected a positive integer, got 0"),
])
def test_cli_grade_usage_errors_exit_2_naming_the_flag(tmp_path, capsys, argv, message):
    """A bad call (2) must be told apart from a submission that lost points (1)."""
    argv = [str(tmp_path / "missing.py") if a == "MISSING" else a for a in argv]
    assert cli_main(["grade", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("minitf grade: error: ") and message in err, err


def test_cli_grade_exit_status_is_1_when_points_are_lost(tmp_path, capsys):
    path = new_homework("hw08", tmp_path)
    assert cli_main(["grade", "hw08", str(path), "--task", "6"]) == 1
    assert "not answered yet" in capsys.readouterr().out


def test_pytest_marker_selects_one_task():
    """``pytest --pyargs minitf.homework.hw08_tests -m hw08_task6`` runs only task 8.6's tests."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "minitf.homework.hw08_tests", "-p", "minitf.homework.plugin",
         "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-m", "hw08_task6"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "6 passed" in proc.stdout and "deselected" in proc.stdout


def test_get_homework_rejects_unknown_names():
    with pytest.raises(ValueError, match="hw08"):
        get_homework("hw01")
