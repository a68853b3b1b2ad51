"""What every homework must pass: its files agree with each other (template, reference, key,
questions, tests), its blank template scores 0 and its reference 100 on every task, every
coded task has its classic mistakes and grades problems drawn from the secret seed, and the
static scan passes the template and the reference.  Parametrized over every homework the
course's folders hold.
"""
from __future__ import annotations

import ast
import importlib
import json
import time

import pytest
from grading.tools import (BWRAP, COURSE_TESTS, HOSTILE, INSTRUCTOR, answer_key, base_name, check_name, lesson_tests,
                           reference_path, submissions_dir, task_result)
from grading import tools

from minitf.grading import get_homework, homeworks, new_homework
from minitf.grading.grader import grade
from minitf.grading.submission import scan_source

HW08 = get_homework("hw08")
REFERENCE = INSTRUCTOR / "hw08" / "reference.py"


# ---- the files agree with each other -------------------------------------------------------------------
def _top_level_names(text: str) -> set[str]:
    tree = ast.parse(text)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return names


EXPECTED_HOMEWORKS = ["hw01", "hw02", "hw03", "hw04", "hw05", "hw06", "hw07", "hw08", "hw09", "hw10"]
def classic_mistakes(homework: str) -> list:
    """``CLASSIC_MISTAKES`` of ``tests/course/lNN/test_homework.py``: (submission, task, phrase)."""
    return importlib.import_module(f"course.{lesson_tests(homework).name}.test_homework").CLASSIC_MISTAKES


ALL = pytest.mark.parametrize("hw", [get_homework(n) for n in sorted(homeworks())], ids=lambda hw: hw.name)


def test_homeworks_are_found_by_scanning_the_lesson_folders():
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
    for path in [*hw.directory.rglob("*.py"), INSTRUCTOR / hw.name / "tests.py", *COURSE_TESTS.rglob("submissions/*.py"),
                 *HOSTILE.rglob("*.py")]:
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
    target of at least one of them (listed in its ``tests/course/lNN/test_homework.py``)."""
    mistakes = classic_mistakes(hw.name)
    assert len(mistakes) >= 8
    for name, number, _ in mistakes:
        assert name.startswith(hw.name + "_") and (submissions_dir(hw.name) / f"{name}.py").is_file(), name
    coded = {t.number for t in hw.tasks if not t.autograder_only}
    assert coded <= {number for _, number, _ in mistakes}


@ALL
def test_scan_passes_the_template_and_the_reference(hw):
    for text in (hw.render_template(), reference_path(hw.name).read_text(encoding="utf-8")):
        assert scan_source(text, hw) == {}


# ---- whole runs ----------------------------------------------------------------------------------------------
@ALL
def test_reference_scores_full_marks(hw):
    t0 = time.perf_counter()
    result = tools.reference_result(hw.name)
    seconds = time.perf_counter() - t0
    assert [t.task.number for t in result.tasks] == [t.number for t in hw.tasks]
    for t in result.tasks:
        assert t.ok and t.score == t.max_score and t.passed == t.total > 0, (t.label, t.status, t.message)
    assert result.score == result.max_score == 100.0
    assert result.all_passed
    # every coded task grades secret problems: its tests that take homework_seed ran as [public] and [secret]
    for t in result.tasks:
        if t.task.autograder_only:
            continue
        secret = {check_name(x) for x in t.tests if x.get("problems") == "secret"}
        public = {check_name(x) for x in t.tests if x.get("problems") == "public"}
        assert secret and secret == public, (t.label, sorted(secret), sorted(public))
        # and every check does: a check on fixed problems alone (a docstring's example) would pay a lookup table
        fixed = sorted({check_name(x) for x in t.tests if x.get("problems") is None})
        assert not fixed, (t.label, "checks with no secret problem", fixed)
    print(f"grading the {hw.name} reference, all {len(hw.tasks)} tasks: {seconds:.1f} s")


@ALL
def test_blank_template_scores_zero_on_every_task(hw, tmp_path):
    path = new_homework(hw.name, tmp_path)
    result = tools.graded(path, homework=hw.name)
    for t in result.tasks:
        assert t.score == 0 and t.status == "failed" and t.passed == 0 and t.total > 0, (t.label, t.status)
        assert f"Task {hw.lesson}.{t.task.number}" in t.message or "not answered yet" in t.message, t.message
    assert result.score == 0


def test_without_the_instructor_files_the_concept_check_is_left_to_the_autograder(tmp_path, monkeypatch):
    monkeypatch.delenv("MINITF_INSTRUCTOR", raising=False)
    result = grade("hw08", REFERENCE, tasks=[1, 6], folder=REFERENCE.parent)
    t1, t6 = task_result(result, 1), task_result(result, 6)
    assert t1.ok and not t6.graded and t6.status == "autograder only" and t6.total == 0
    assert result.max_score == 15 and result.score == 15 and result.all_passed
    assert "8.6: scored only by the course's autograder" in result.table()





# ---- the same file, the same instructor folder: the same results, test for test -----------------------------
def _json(results: dict) -> str:
    return json.dumps(results, indent=2, sort_keys=True)


def _differences(first: dict, second: dict) -> list:
    """Where two results.json differ: the score, or a test's name, score, status or output."""
    out = [("score", first.get("score"), second.get("score"))] if first.get("score") != second.get("score") else []
    for a, b in zip(first.get("tests", []), second.get("tests", [])):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                out.append((a.get("name"), k, str(a.get(k))[:300], str(b.get(k))[:300]))
    if len(first.get("tests", [])) != len(second.get("tests", [])):
        out.append(("tests", len(first.get("tests", [])), len(second.get("tests", []))))
    return out


@ALL
def test_grading_twice_gives_the_same_results(hw, tmp_path):
    """The reference, the blank template and every classic mistake, graded a second time: the same
    results.json, byte for byte.  (The first grading is the one the other tests of this session
    made, where they ran -- ``tools.graded`` remembers it -- or one made now; the second is made in
    batches, ``grade_many``, which grades each file as it is graded alone.)"""
    t0 = time.perf_counter()
    blank = new_homework(hw.name, tmp_path)
    mistakes = [(name, number, tools.submission_path(name, tmp_path)) for name, number, _ in classic_mistakes(hw.name)]
    tools.grade_ahead([(hw.name, blank, None)] + [(hw.name, path, [number]) for _, number, path in mistakes])
    first = [tools.reference_result(hw.name).to_gradescope(), tools.first_results(blank, homework=hw.name)]
    first += [tools.first_results(path, tasks=[number], homework=hw.name) for _, number, path in mistakes]
    second = [tools.regraded([(hw.name, reference_path(hw.name), None)])[0]]
    second += tools.regraded([(hw.name, blank, None)] + [(hw.name, path, [number]) for _, number, path in mistakes])
    names = ["reference", "blank"] + [name for name, _, _ in mistakes]
    for name, a, b in zip(names, first, second):
        assert _json(a) == _json(b), (name, _differences(a, b))
    print(f"{hw.name}: reference, blank and {len(mistakes)} mistakes graded again in {time.perf_counter() - t0:.1f} s")


def test_the_comparison_sees_problems_drawn_afresh(tmp_path):
    """The planted bug the test above must catch: a grader that draws the problems afresh on every
    run, as this one did (here: two public seeds) -- the two results.json differ."""
    path = tools.submission_path("hw08_loss_mean_over_padding", tmp_path)
    first = grade("hw08", path, tasks=[3], instructor=INSTRUCTOR, seed=0).to_gradescope()
    second = grade("hw08", path, tasks=[3], instructor=INSTRUCTOR, seed=1).to_gradescope()
    assert first["score"] == second["score"] and _json(first) != _json(second) and _differences(first, second)
