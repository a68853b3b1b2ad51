"""A clever student's shortcuts through homeworks 1-6: a minitf function that does the task's
work under a name the task did not list (tests/homework_submissions/hostile/hwNN_*.py, each
a patch on the blank template).  Each scores 0 on the task it attacks.

Known limit, not tested here: complex-step differentiation of a forward the student may call
(or wrote) gives a backward to ~1e-16 without writing it; nothing short of reading the code
tells the two apart.
"""
from __future__ import annotations

import pytest

from homework_tools import graded, hostile_file, task_result  # noqa: F401  (hostile_file: a fixture)


@pytest.mark.parametrize("name, task", [
    ("hw01_transformer_mixing", 4),  # minitf.scheduled_sampling's own_previous_tokens + mix_decoder_inputs
    ("hw01_pointer_scatter_add", 4),  # minitf.models.pointer_generator.scatter_add for dW_E
    ("hw03_log_softmax", 2),  # exp(log_softmax) for the forbidden softmax
    ("hw06_parts_built", 2),  # the model assembled from its parts, its arrays counted by hand
])
def test_shortcut_scores_zero(hostile_file, name, task):
    result = graded(hostile_file(name), tasks=[task])
    t = task_result(result, task)
    assert t.score == 0 and t.status == "no credit", (t.label, t.status, t.message)
