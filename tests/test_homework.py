"""Tests of minitf.homework: the template, the instructor files, the grader and its defences.

What must hold: the blank template scores 0 on every task and the reference scores full
marks; each classic mistake (tests/homework_submissions/) fails the right task with a
message naming it; a submission that calls minitf's own implementation gets no credit for
that task; one that crashes, hangs or prints garbage costs the tasks it breaks and
nothing more; and each hostile submission (tests/homework_submissions/hostile/) scores 0 on
what it attacks.  Submissions are graded one or a few tasks at a time to keep this fast.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from minitf.cli import main as cli_main
from minitf.grading import get_homework, homeworks, new_homework
from minitf.grading.grader import grade
from minitf.grading.submission import scan_source
from minitf.grading.workers import resolve_isolation

from homework_tools import (BWRAP, HOSTILE, INSTRUCTOR, REPO, SUBMISSIONS, build_submission, expect_caught,  # noqa: F401
                            answer_key, hostile_file, reference_path, requires_bwrap,
                            submission_file, task_result)
import homework_tools

HW08 = get_homework("hw08")


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    """Grade ``path`` as homework 8 (the grader's own defences are tested on it)."""
    return homework_tools.graded(path, tasks, homework=homework, **kwargs)
REFERENCE = INSTRUCTOR / "hw08" / "reference.py"
KEY = json.loads((INSTRUCTOR / "hw08" / "key.json").read_text(encoding="utf-8"))


# ---- the files agree with each other -------------------------------------------------------------------
def _top_level_names(text: str) -> set[str]:
    tree = ast.parse(text)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return names


EXPECTED_HOMEWORKS = ["hw01", "hw02", "hw03", "hw04", "hw05", "hw06", "hw07", "hw08", "hw09", "hw10"]
ALL = pytest.mark.parametrize("hw", [get_homework(n) for n in sorted(homeworks())], ids=lambda hw: hw.name)


def test_homeworks_are_registered_by_entry_point():
    assert list(homeworks()) == EXPECTED_HOMEWORKS
    assert HW08.template_path.is_file() and len(HW08.test_files) == 5
    with pytest.raises(ValueError, match="hw08"):
        get_homework("hw99")


@ALL
def test_template_and_reference_define_every_task_name(hw):
    for text in (hw.render_template(), reference_path(hw.name).read_text(encoding="utf-8")):
        missing = {f for t in hw.tasks for f in t.functions} - _top_level_names(text)
        assert not missing, f"lacks {sorted(missing)}"


@ALL
def test_template_stubs_raise_not_implemented_naming_their_task(hw):
    ns: dict = {}
    exec(compile(hw.render_template(), "template", "exec"), ns)
    for task in hw.tasks:
        for name in task.functions:
            if name == "ANSWERS":
                assert ns["ANSWERS"] == {q: None for q in hw.questions}
                continue
            n_args = ns[name].__code__.co_argcount - len(ns[name].__defaults__ or ())
            with pytest.raises(NotImplementedError, match=rf"^Task {hw.lesson}\.{task.number}: "):
                ns[name](*([None] * n_args))


@ALL
def test_questions_are_written_once_and_the_key_is_kept_apart(hw):
    questions = hw.questions
    reference, hidden = reference_path(hw.name), INSTRUCTOR / hw.name / "tests.py"
    # the questions: in questions.py only (the template gets them when it is handed out)
    for path in (hw.template_path, *hw.test_files, reference, hidden):
        text = " ".join(path.read_text(encoding="utf-8").split()).lower()
        for q in questions.values():
            assert " ".join(q["question"].split()).lower() not in text, path
    rendered = " ".join(hw.render_template().replace("#", " ").split())
    for q in questions.values():
        assert " ".join(q["question"].split()) in rendered
    # the key: in the instructor folder only, agreeing with the questions and the reference
    key = answer_key(hw.name)
    ns: dict = {}
    exec(compile(reference.read_text(encoding="utf-8"), str(reference), "exec"), ns)
    assert set(key["answers"]) == set(questions) == set(ns["ANSWERS"])
    for q, entry in key["answers"].items():
        assert ns["ANSWERS"][q] == entry["answer"] and entry["answer"] in questions[q]["options"]
        assert set(entry["why_not"]) == set(questions[q]["options"]) - {entry["answer"]}, q
        assert entry["explanation"]
    for path in hw.directory.rglob("*.py"):
        assert '"answer"' not in path.read_text(encoding="utf-8"), path


@ALL
def test_homework_files_are_not_collected_by_default(hw):
    for path in [*hw.directory.rglob("*.py"), INSTRUCTOR / hw.name / "tests.py", *SUBMISSIONS.rglob("*.py")]:
        assert not path.name.startswith("test_") and not path.stem.endswith("_test"), path


@ALL
def test_test_names_are_distinct_across_a_homeworks_modules(hw):
    """The grader records each test by its name (its test files lie outside pytest's rootdir):
    two tests of one name would share one result, and the plugin refuses to run them."""
    names = []
    for path in [*hw.test_files, INSTRUCTOR / hw.name / "tests.py"]:
        names += [n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                  if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


@ALL
def test_every_task_has_its_classic_mistakes(hw):
    """Each homework has at least 8 honest mistakes, and every task a student codes is the
    target of at least one of them (listed in its ``test_homework_hwNN.py``)."""
    if hw.name == "hw08":
        mistakes = CLASSIC_MISTAKES
    else:
        mistakes = importlib.import_module(f"test_homework_{hw.name}").CLASSIC_MISTAKES
    assert len(mistakes) >= 8
    for name, number, _ in mistakes:
        assert name.startswith(hw.name + "_") and (SUBMISSIONS / f"{name}.py").is_file(), name
    coded = {t.number for t in hw.tasks if not t.autograder_only}
    assert coded <= {number for _, number, _ in mistakes}


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


@ALL
def test_scan_passes_the_template_and_the_reference(hw):
    for text in (hw.render_template(), reference_path(hw.name).read_text(encoding="utf-8")):
        assert scan_source(text, hw) == {}


# ---- whole runs ----------------------------------------------------------------------------------------------
@ALL
def test_reference_scores_full_marks(hw):
    t0 = time.perf_counter()
    result = grade(hw.name, reference=True, instructor=INSTRUCTOR)
    seconds = time.perf_counter() - t0
    assert [t.task.number for t in result.tasks] == [t.number for t in hw.tasks]
    for t in result.tasks:
        assert t.ok and t.score == t.max_score and t.passed == t.total > 0, (t.label, t.status, t.message)
    assert result.score == result.max_score == 100.0
    assert result.all_passed
    print(f"grading the {hw.name} reference, all {len(hw.tasks)} tasks: {seconds:.1f} s")


@ALL
def test_blank_template_scores_zero_on_every_task(hw, tmp_path):
    path = new_homework(hw.name, tmp_path)
    result = graded(path, homework=hw.name)
    for t in result.tasks:
        assert t.score == 0 and t.status == "failed" and t.passed == 0 and t.total > 0, (t.label, t.status)
        assert f"Task {hw.lesson}.{t.task.number}" in t.message or "not answered yet" in t.message, t.message
    assert result.score == 0


def test_without_the_instructor_files_the_concept_check_is_left_to_the_autograder(tmp_path, monkeypatch):
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    result = grade("hw08", REFERENCE, tasks=[1, 6])
    t1, t6 = task_result(result, 1), task_result(result, 6)
    assert t1.ok and not t6.graded and t6.status == "autograder only" and t6.total == 0
    assert result.max_score == 15 and result.score == 15 and result.all_passed
    assert "8.6: scored only by the course's autograder" in result.table()


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
    expect_caught(graded(submission_file(name), tasks=[number]), number, phrase)


def test_mask_seeing_next_is_called_label_leakage(submission_file):
    result = graded(submission_file("hw08_mask_sees_next"), tasks=[2])
    message = task_result(result, 2).message
    assert "position 0 can see position 1" in message and "label leakage" in message, message


def test_a_classic_mistake_costs_nothing_elsewhere(submission_file):
    result = graded(submission_file("hw08_leaky_shift"), tasks=[1, 3, 6])
    assert [t.ok for t in result.tasks] == [False, True, True]


def test_every_failed_check_is_in_the_table(submission_file):
    result = graded(submission_file("hw08_loss_mean_over_padding"), tasks=[3])
    t3 = task_result(result, 3)
    assert len(t3.failures) > 1
    table = result.table()
    for name, _ in t3.failures[1:]:
        assert f"  - {name}: " in table, table


# ---- the concept check: feedback that teaches without giving the key away --------------------------------
def _answers_file(tmp_path, answers: dict) -> Path:
    text = HW08.render_template()
    start = text.index("ANSWERS = {")
    path = tmp_path / "answers.py"
    path.write_text(text[:start] + f"ANSWERS = {answers!r}\n", encoding="utf-8")
    return path


def test_a_wrong_answer_gets_a_pointer_not_the_reasoning(tmp_path):
    answers = {q: e["answer"] for q, e in KEY["answers"].items()}
    answers["8.6.6"] = "a"
    result = graded(_answers_file(tmp_path, answers), tasks=[6])
    t6 = task_result(result, 6)
    assert t6.passed == 5 and t6.score == pytest.approx(10 * 5 / 6, abs=0.01)
    assert "not right yet; re-read Lesson 8, section 3" in t6.message, t6.message
    assert KEY["answers"]["8.6.6"]["why_not"]["a"] not in result.table()
    assert KEY["answers"]["8.6.6"]["explanation"] not in result.table()
    assert KEY["answers"]["8.6.1"]["explanation"] in result.table()  # a right answer is explained


def test_after_the_deadline_wrong_answers_are_explained(tmp_path):
    instructor = tmp_path / "instructor"
    shutil.copytree(INSTRUCTOR, instructor)
    key = json.loads((instructor / "hw08" / "key.json").read_text())
    key["settings"]["explain_wrong_answers"] = True
    (instructor / "hw08" / "key.json").write_text(json.dumps(key))
    answers = {q: e["answer"] for q, e in KEY["answers"].items()} | {"8.6.6": "a"}
    result = grade("hw08", _answers_file(tmp_path, answers), tasks=[6], instructor=instructor)
    assert KEY["answers"]["8.6.6"]["why_not"]["a"] in task_result(result, 6).message


# ---- calling minitf's own implementation -------------------------------------------------------------------
def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    result = graded(submission_file("hw08_calls_minitf"), tasks=[1, 2, 3])
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    for t, name in ((t1, "shift_right"), (t3, "cross_entropy")):
        assert t.status == "no credit" and t.score == 0, (t.label, t.status)
        assert "no credit" in t.message and name in t.message, t.message
    assert t2.ok and t2.score == t2.max_score


def test_calling_minitf_through_hidden_paths_is_caught_at_run_time(submission_file):
    result = graded(submission_file("hw08_calls_minitf_hidden"), tasks=[2, 4])
    for number, name in ((2, "minitf.masks.causal_mask"), (4, "minitf.attention.MultiHeadAttention.backward")):
        t = task_result(result, number)
        assert t.status == "no credit" and t.score == 0, (t.label, t.status, t.message)
        assert f"called minitf's own {name}" in t.message, t.message


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
    assert "exit code 3" in t2.message, t2.message
    assert t6.ok


def test_garbage_output_loses_nothing(submission_file):
    result = graded(submission_file("hw08_prints_garbage"), tasks=[1, 3, 6])
    assert result.all_passed and result.score == result.max_score, [(t.label, t.message) for t in result.tasks]


# ---- hostile submissions: each scores 0 on what it attacks ---------------------------------------------------------
def _minitf_sources() -> dict:
    package = Path(__import__("minitf").__file__).resolve().parent
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(package.rglob("*.py"))}


@pytest.mark.parametrize("name, tasks", [
    ("hw08_reference_by_path", [1, 2, 3, 4, 5, 6]),
    ("hw08_read_key", [6]),
    ("hw08_overwrite_key", [6]),
    ("hw08_rewrite_report", [1, 3, 6]),
    ("hw08_patch_writer", [1, 3, 6]),
])
def test_hostile_submission_steals_nothing(hostile_file, tmp_path, name, tasks):
    results = tmp_path / "results.json"
    result = graded(hostile_file(name), tasks=tasks)
    result.write_results(results)
    assert result.score == 0, [(t.label, t.score, t.message) for t in result.tasks]
    assert json.loads(results.read_text())["score"] == 0


def test_minitf_hidden_in_a_dict_a_closure_or_a_default_gets_no_credit(hostile_file):
    result = graded(hostile_file("hw08_hidden_reference"), tasks=[1, 2, 3])
    for t in result.tasks:
        assert t.score == 0 and t.status == "no credit", (t.label, t.status, t.message)
        assert "called minitf's own" in t.message, t.message


def test_code_that_never_returns_is_stopped(hostile_file):
    t0 = time.perf_counter()
    result = graded(hostile_file("hw08_never_returns"), tasks=[1, 2], test_timeout=2, task_timeout=5)
    assert time.perf_counter() - t0 < 60
    for t in result.tasks:
        assert t.score == 0 and t.status == "timeout", (t.label, t.status, t.message)


def test_allocating_10_gb_fails_in_the_students_process(hostile_file):
    result = graded(hostile_file("hw08_allocates_10gb"), tasks=[1])
    t1 = task_result(result, 1)
    assert t1.score == 0 and "MemoryError" in t1.message, t1.message


def test_writing_outside_its_directory_changes_nothing(hostile_file):
    before = _minitf_sources()
    outside = [Path(tempfile.gettempdir()) / "minitf-hostile-wrote-here", Path.home() / "minitf-hostile-wrote-here"]
    for p in outside:
        p.unlink(missing_ok=True)
    result = graded(hostile_file("hw08_writes_outside"), tasks=[1, 3])
    assert result.score == 0
    assert _minitf_sources() == before
    assert not any(p.exists() for p in outside)


@pytest.mark.parametrize("name, tasks, status", [
    ("hw08_mutates_model", [5], "failed"),  # the grader's model is its own: nothing comes back into it
    ("hw08_private_greedy", [5], "no credit"),  # minitf's greedy loop is switched off under its private name too
    ("hw08_finite_differences", [4], "failed"),  # float64 finite differences miss the tolerance of a backward
    ("hw08_forged_reply", [1], "failed"),  # a model in a reply, a deflated member: refused before unpacking
])
def test_hostile_submission_scores_zero(hostile_file, name, tasks, status):
    t0 = time.perf_counter()
    result = graded(hostile_file(name), tasks=tasks)
    assert time.perf_counter() - t0 < 60
    for t in result.tasks:
        assert t.score == 0 and t.status == status, (t.label, t.status, t.message)


def test_automatic_differentiation_is_not_importable(hostile_file):
    """torch autograd would write a backward for the student: the import fails in the student's process."""
    pytest.importorskip("torch", reason="shows something only where torch is installed")
    result = homework_tools.graded(hostile_file("hw02_torch_autograd"), tasks=[3])
    t = task_result(result, 3)
    assert t.score == 0 and "automatic differentiation is not available" in t.message, (t.status, t.message)


@requires_bwrap
@pytest.mark.parametrize("name, tasks", [
    ("hw08_patch_guard", [1, 2, 3, 4, 5, 6]),  # the audit hook switched off: the operating system still says no
    ("hw08_dir_fd", [1, 2, 3, 4, 5, 6]),  # dir_fd reads: the instructor folder is not there to read
    ("hw08_fresh_copy", [3]),  # minitf's source is not there to read
])
def test_hostile_submission_sees_nothing_inside_bubblewrap(hostile_file, name, tasks):
    result = graded(hostile_file(name), tasks=tasks)
    assert result.isolation == "bwrap"
    assert result.score == 0, [(t.label, t.score, t.message) for t in result.tasks]


@pytest.mark.parametrize("name, marker", [
    ("hw08_detached_process", "minitf-hostile-detached-ran"),  # subprocess, os.system, fork, ctypes, posix_spawn
    pytest.param("hw08_fork_exec", "minitf-hostile-fork-exec-ran", marks=requires_bwrap),  # the unaudited fork
])
def test_a_process_that_would_outlive_grading_changes_nothing(hostile_file, tmp_path, name, marker):
    marker = Path(tempfile.gettempdir()) / marker
    marker.unlink(missing_ok=True)
    results = tmp_path / "results.json"
    result = graded(hostile_file(name), tasks=[1, 6])
    result.write_results(results)
    time.sleep(4)  # a detached script would have woken up by now
    assert result.score == 0 and json.loads(results.read_text())["score"] == 0
    assert not marker.exists()  # it never started, or ran in the sandbox's own /tmp and died with it


@requires_bwrap
def test_sqlite_writes_nothing_outside(hostile_file):
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    targets = [Path(tempfile.gettempdir()) / "minitf-hostile-sqlite.pth", site / "minitf-hostile-sqlite.pth"]
    result = graded(hostile_file("hw08_sqlite_write"), tasks=[1])
    assert result.score == 0 and not any(p.exists() for p in targets)


def test_hidden_tests_insist_on_bubblewrap_unless_process_is_named(monkeypatch):
    import minitf.grading.workers as workers

    monkeypatch.setattr(workers.shutil, "which", lambda name: None)  # as on a machine without bwrap
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
        grade("hw08", REFERENCE, tasks=[1], isolation="process")


def test_every_run_draws_its_own_problems():
    first = grade("hw08", REFERENCE, tasks=[1])
    second = grade("hw08", REFERENCE, tasks=[1])
    assert first.seed != second.seed and first.score == second.score == 15


# ---- the command line ----------------------------------------------------------------------------------------------
def test_cli_homework_new_writes_the_rendered_template(tmp_path, capsys):
    assert cli_main(["homework", "new", "hw08", str(tmp_path)]) == 0
    copied = tmp_path / HW08.filename
    assert copied.read_text() == HW08.render_template()
    assert "minitf grade hw08" in capsys.readouterr().out
    assert cli_main(["homework", "new", "hw08", str(copied)]) == 2
    assert "minitf homework new: error:" in capsys.readouterr().err
    assert cli_main(["homework", "new", "hw08", str(copied), "--force"]) == 0
    assert cli_main(["homework", "new", "hw99", str(tmp_path / "x.py")]) == 2
    assert "hw08" in capsys.readouterr().err


def test_cli_homework_list_names_every_task(capsys):
    assert cli_main(["homework", "list"]) == 0
    out = capsys.readouterr().out
    assert "hw08  Lesson 8" in out and "8.6" in out and "(autograder only)" in out


def test_cli_grade_prints_a_table_and_writes_results(tmp_path, capsys):
    results = tmp_path / "results.json"
    argv = ["grade", "hw08", "--reference", "--instructor", str(INSTRUCTOR), "--task", "6", "--task", "2",
            "--results", str(results)]
    assert cli_main(argv) == 0
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
    (["hw99", "--reference"], "homework: expected one of 'hw0"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--task", "99"], "--task: expected one of [1, 2, 3, 4, 5, 6]"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--timeout", "-5"],
     "--timeout: expected a positive finite number (seconds), got -5.0"),
    (["hw08", "--reference", "--instructor", "INSTRUCTOR", "--test-timeout", "0"],
     "--test-timeout: expected a positive finite number (seconds), got 0.0"),
    (["hw08", "--reference", "--instructor", "NOWHERE"], "--instructor: expected a folder holding hw08/"),
])
def test_cli_grade_usage_errors_exit_2_naming_the_flag(tmp_path, capsys, monkeypatch, argv, message):
    """A bad call (2) must be told apart from a submission that lost points (1)."""
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    subst = {"MISSING": str(tmp_path / "missing.py"), "INSTRUCTOR": str(INSTRUCTOR), "NOWHERE": str(tmp_path)}
    argv = [subst.get(a, a) for a in argv]
    assert cli_main(["grade", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("minitf grade: error: ") and message in err, err


def test_cli_grade_reference_needs_the_instructor_folder(capsys, monkeypatch):
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    assert cli_main(["grade", "hw08", "--reference"]) == 2
    assert "instructor material" in capsys.readouterr().err
    monkeypatch.setenv("MINITF_INSTRUCTOR", str(INSTRUCTOR))
    assert cli_main(["grade", "hw08", "--reference", "--task", "1"]) == 0


def test_cli_grade_exit_status_is_1_when_points_are_lost(tmp_path, capsys):
    path = new_homework("hw08", tmp_path)
    assert cli_main(["grade", "hw08", str(path), "--task", "6", "--instructor", str(INSTRUCTOR)]) == 1
    assert "not answered yet" in capsys.readouterr().out


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


# ---- the Gradescope autograder -------------------------------------------------------------------------------------
def _gradescope(tmp_path, bundle: Path, student_file: Path) -> dict:
    root = tmp_path / "autograder"
    shutil.copytree(bundle, root / "source")
    (root / "submission").mkdir()
    shutil.copyfile(student_file, root / "submission" / HW08.filename)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root),  # this Python first, as the image's would be
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    if not BWRAP:
        env["MINITF_ISOLATION"] = "process"
    proc = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_autograder_bundle_grades_a_submission_as_gradescope_runs_it(tmp_path, capsys):
    bundle = tmp_path / "bundle"
    assert cli_main(["homework", "autograder", "hw08", "--instructor", str(INSTRUCTOR), "--out", str(bundle)]) == 0
    for name in ("setup.sh", "run_autograder", "autograder.zip", "instructor/hw08/reference.py",
                 "instructor/hw08/key.json", "instructor/hw08/tests.py", "minitf/setup.cfg",
                 "minitf/minitf/course/l08_teacher_forcing/homework/tests/task1.py"):
        assert (bundle / name).is_file(), name
    assert os.access(bundle / "run_autograder", os.X_OK)
    full = _gradescope(tmp_path / "ref", bundle, REFERENCE)
    assert full["score"] == 100.0 and len(full["tests"]) == 6
    blank = _gradescope(tmp_path / "blank", bundle, new_homework("hw08", tmp_path / "blank.py"))
    assert blank["score"] == 0.0


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


def test_a_call_that_changes_its_input_in_place_fails_naming_the_argument():
    """call_read_only (the homeworks' ``call``) compares each array and dict argument with the
    copy the student's process sent back after the call."""
    import numpy as np

    from minitf.grading.asserts import call_read_only

    class Student:  # what a StudentFunction proxy exposes: the call, and the arguments as the call left them
        __name__ = "step"

        def __init__(self, mutate):
            self.mutate, self.returned_args = mutate, None

        def __call__(self, x, params):
            x, params = x.copy(), {k: v.copy() for k, v in params.items()}
            if self.mutate == "x":
                x[0] += 1.0
            elif self.mutate == "params":
                params["W"] *= 2.0
            self.returned_args = [x, params]
            return x.sum()

    args = (np.ones(3), {"W": np.eye(2)})
    assert call_read_only(Student(None), ["x", "params"], args, why="reused") == 3.0
    for mutate in ("x", "params"):
        with pytest.raises(pytest.fail.Exception, match=rf"step changed its argument {mutate} in place: .*reused"):
            call_read_only(Student(mutate), ["x", "params"], args, why="reused")
