"""Lesson 8's stored leaky runs (what the notebook's leakage table prints) are the live runs."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course import l08_teacher_forcing as l8
from minitf.course.l08_teacher_forcing import leakage_curves


@pytest.fixture(scope="module")
def live():
    return l8.leakage_runs(0)


def test_the_stored_runs_are_the_live_runs(live):
    """Both leaky runs match their stored losses to the rounding (half of 1e-6, plus 1e-6 for the
    kernel) and their exact match as stored; their free-running outputs are the stored ones."""
    matches = leakage_curves.compare_with_stored(live)
    assert sorted(matches) == sorted(leakage_curves.load_results()["runs"]) == sorted(leakage_curves.LEAKS)
    for name, m in matches.items():
        assert m.matches, (name, m.differences)
    stored = leakage_curves.stored_leakage_runs(0)
    for name, run in live.items():
        assert stored[name]["samples"] == run.samples, name
        assert stored[name]["step"] == list(run.history.step)


def test_a_changed_run_does_not_match(live):
    """The comparison can fail: a stored loss curve shifted by 1e-5 is outside the rounding."""
    results = leakage_curves.load_results()
    name = "labels_as_inputs"
    r = results["runs"][name]["0"]
    shifted = dict(r, loss=[x + 1e-5 for x in r["loss"]])
    results = dict(results, runs=dict(results["runs"], **{name: {"0": shifted}}))
    assert not leakage_curves.compare_with_stored(live, results)[name].matches
    assert leakage_curves.compare_with_stored(live, results)["no_causal_mask"].matches


def test_the_stored_runs_show_the_leak():
    """What the notebook's prose reads off them: the loss collapses to a few thousandths, and no
    free-running output is right."""
    for name, r in leakage_curves.stored_leakage_runs(0).items():
        assert len(r["loss"]) == len(r["step"]) == l8.lesson8_train_config().steps
        assert np.mean(r["loss"][-10:]) < 0.01 and r["free_running_exact_match"] == 0.0, name
        assert all(out != tgt for _, tgt, out in r["samples"])
    with pytest.raises(KeyError):
        leakage_curves.stored_leakage_runs(1)  # only seed 0 is stored
