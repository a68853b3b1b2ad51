"""Attacks through imports and forbidden code: a minitf function that does the task's work under
a name the task did not list (each a patch on the blank template).  minitf is not there to
import in the student's process, so none of them runs; where the source names what a task
replaces, the task also gets no credit by the static scan.

Known limit, not tested here: complex-step differentiation of a forward the student may call
(or wrote) gives a backward to ~1e-16 without writing it; nothing short of reading the code
tells the two apart.
"""
from __future__ import annotations

import pytest
from grading.tools import hostile_file, task_result  # noqa: F401
from grading import tools


@pytest.mark.parametrize("name, task", [
    ("hw01_transformer_mixing", 4),  # minitf.scheduled_sampling's own_previous_tokens + mix_decoder_inputs
    ("hw01_pointer_scatter_add", 4),  # minitf.models.pointer_generator.scatter_add for dW_E
    ("hw03_log_softmax", 2),  # exp(log_softmax) for the forbidden softmax
    ("hw06_parts_built", 2),  # the model assembled from its parts, its arrays counted by hand
    ("hw10_copy_nll", 1),  # the pointer-generator's copy_nll on softmax(logits): a masked NLL
])
def test_shortcut_through_minitf_scores_zero(hostile_file, name, task):
    t = task_result(tools.graded(hostile_file(name), tasks=[task]), task)
    assert t.score == 0 and t.status in ("failed", "no credit"), (t.label, t.status, t.message)
    failing = [x["message"] for x in t.tests if x["outcome"] != "passed"]
    assert any("minitf is not available" in m or "no credit" in m for m in failing), failing
