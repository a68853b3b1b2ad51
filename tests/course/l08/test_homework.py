"""Homework 8 (Training: teacher forcing & the loss): each classic mistake fails the right task
with a message naming it, a mistake costs nothing on the other tasks, the concept check teaches
without giving the key away, and a file that uses minitf scores nothing for it.

The checks every homework must pass (reference 100, blank 0, files and key, scan) are in
``tests/grading/test_homeworks.py``; the grader's own defences, tested on this homework, in
``tests/grading/``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from grading.tools import INSTRUCTOR, expect_caught, expect_minitf_refused, submission_file, task_result  # noqa: F401
from grading import tools

from minitf.grading import get_homework
from minitf.grading.grader import grade

HW08 = get_homework("hw08")
KEY = json.loads((INSTRUCTOR / "hw08" / "key.json").read_text(encoding="utf-8"))


def graded(path, tasks=None, homework: str = "hw08", **kwargs):
    return tools.graded(path, tasks, homework=homework, **kwargs)


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
# mistakes against a clause of the template the tests did not exercise before (issue 28):
# an argument at another value, float32, a batch of one
CONTRACT_MISTAKES = [
    ("hw08_loss_ignore_index_hardcoded", 3, "read the ignore_index argument"),
    ("hw08_encoder_gradient_float64_sum", 4, "expected dtype float32"),
    ("hw08_decode_pads_with_zero", 5, "model.config.pad_id"),
    ("hw08_decode_eos_hardcoded", 5, "stop a row at the eos_id given"),
    ("hw08_decode_start_hardcoded", 5, "start from the start_id given"),
    ("hw08_exposure_bias_tokenizer_ids", 5, 'generate from the start_id given'),
]
CLASSIC_MISTAKES += CONTRACT_MISTAKES


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
    table = " ".join(result.table().split())  # wrapped: compared word for word
    assert KEY["answers"]["8.6.6"]["why_not"]["a"] not in table
    assert KEY["answers"]["8.6.6"]["explanation"] not in table
    assert KEY["answers"]["8.6.1"]["explanation"] in table  # a right answer is explained


def test_after_the_deadline_wrong_answers_are_explained(tmp_path):
    instructor = tmp_path / "instructor"
    shutil.copytree(INSTRUCTOR, instructor)
    key = json.loads((instructor / "hw08" / "key.json").read_text())
    key["settings"]["explain_wrong_answers"] = True
    (instructor / "hw08" / "key.json").write_text(json.dumps(key))
    answers = {q: e["answer"] for q, e in KEY["answers"].items()} | {"8.6.6": "a"}
    result = grade("hw08", _answers_file(tmp_path, answers), tasks=[6], instructor=instructor)
    assert KEY["answers"]["8.6.6"]["why_not"]["a"] in task_result(result, 6).message


# ---- a file that uses minitf ----------------------------------------------------------------------------------
def test_calling_minitf_gets_no_credit_for_that_task(submission_file):
    """minitf is not there to import in the student's process: the tasks whose functions the
    source names get no credit (the static scan), the others nothing either (the file cannot be
    imported), and every message says why."""
    result = graded(submission_file("hw08_calls_minitf"), tasks=[1, 2, 3])
    t1, t2, t3 = (task_result(result, k) for k in (1, 2, 3))
    for t, name in ((t1, "shift_right"), (t3, "cross_entropy")):
        assert t.status == "no credit" and t.score == 0, (t.label, t.status)
        assert "no credit" in t.message and name in t.message, t.message
    expect_minitf_refused(t2)
    assert "minitf is not available" in t2.message, t2.message


def test_calling_minitf_through_hidden_paths_finds_no_minitf(submission_file):
    """minitf reached by a computed name at call time: the import fails in the student's process,
    saying minitf is not available; the attention layer handed over has no ``backward`` (it stays
    in the grader, offering ``forward`` alone), so the zeros its failure falls back on score 0."""
    result = graded(submission_file("hw08_calls_minitf_hidden"), tasks=[2, 4])
    t2, t4 = task_result(result, 2), task_result(result, 4)
    assert t2.score == 0 and t2.status == "failed" and "minitf is not available" in t2.message, t2.message
    assert t4.score == 0 and t4.status == "failed", (t4.status, t4.message)
