"""Lesson 5's stored short runs (what the notebook prints of sections 4 and 5) are the live runs."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course import l05_block as l5
from minitf.course.l05_block import short_runs


@pytest.mark.parametrize("seed", short_runs.SEEDS)
def test_the_stored_runs_are_the_live_runs(seed):
    """Every FFN and position run of both seeds matches its stored numbers (8 significant digits)
    to within 1e-6."""
    matches = short_runs.compare_with_stored(seed)
    assert sorted(matches) == sorted(short_runs.load_results()["runs"])
    for name, m in matches.items():
        assert m.matches, (name, m.differences)


def test_a_changed_number_does_not_match():
    """The comparison can fail: a stored held-out loss moved by 1e-5 is outside the tolerance."""
    results = short_runs.load_results()
    name = short_runs.ffn_name(*l5.FFN_VARIANTS[0])
    r = results["runs"][name]["0"]
    moved = dict(r, held_out_loss=r["held_out_loss"] + 1e-5)
    results = dict(results, runs=dict(results["runs"], **{name: {**results["runs"][name], "0": moved}}))
    matches = short_runs.compare_with_stored(0, results)
    assert not matches[name].matches
    assert all(m.matches for n, m in matches.items() if n != name)


def test_the_notebooks_readers_give_the_live_objects_fields():
    """What the notebook reads has the fields the live functions return, in their order."""
    summaries = short_runs.stored_ffn_summaries(1)
    assert list(summaries) == list(l5.FFN_VARIANTS)
    assert all(isinstance(s, l5.RunSummary) for s in summaries.values())
    acc = short_runs.stored_position_accuracy(0)
    assert list(acc) == list(short_runs.POSITION_KINDS) and all(isinstance(a, l5.PositionAccuracy) for a in acc.values())
    assert acc["learned"].chance == pytest.approx(1 / 12) and acc["learned"].accuracy.shape == (l5.TEST_MAX_LEN,)
    rows, shrink = short_runs.stored_learned_rows(0)
    assert {side: used for side, (_, used) in rows.items()} == {"source": l5.TRAIN_MAX_LEN,
                                                                "target": l5.TRAIN_MAX_LEN + 1}
    assert 0 < shrink < 0.1 and all(np.all(change[used:] < change[:used].min()) for change, used in rows.values())
    with pytest.raises(KeyError):
        short_runs.stored_ffn_summaries(2)  # only seeds 0 and 1 are stored
