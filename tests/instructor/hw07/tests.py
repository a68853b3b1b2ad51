"""Hidden tests of homework 7: the concept check (task 7.4), which needs the answer key.

Instructor material, run by the grader in its own process next to the public tests
(``minitf grade hw07 FILE --instructor tests/instructor``).  The key (``key.json`` beside
this file) never reaches the student's process.  A wrong answer is told where to look in
Lesson 7; the reasoning behind the right answer is shown once the answer is right, or for
every answer once ``settings.explain_wrong_answers`` is set (after the deadline).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from minitf.grading import get_homework
from minitf.grading.asserts import check_concept_answer

HOMEWORK = "hw07"
KEY = json.loads((Path(__file__).resolve().parent / "key.json").read_text(encoding="utf-8"))
QUESTIONS = get_homework(HOMEWORK).questions


@pytest.mark.hw07_task4
@pytest.mark.parametrize("question", sorted(KEY["answers"]))
def test_concept_check_hw07(submission, question, record_property):
    check_concept_answer(submission, question, KEY, QUESTIONS, record_property)
