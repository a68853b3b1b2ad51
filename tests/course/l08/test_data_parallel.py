"""Tests for minitf.course.lesson08_parallel: N shards weighted by their real tokens give the one
batch's gradient; the per-shard mean does not, with uneven padding."""
from __future__ import annotations

import pytest

from minitf.course.l08_teacher_forcing import data_parallel as lesson08_parallel
from minitf.course.l08_teacher_forcing.data_parallel import ShardGradients, shard_gradients, uneven_batch
from minitf.data import IGNORE_INDEX


@pytest.mark.parametrize("n_shards", [2, 4])
def test_token_weighted_shards_are_the_batch_and_the_per_shard_mean_is_not(n_shards):
    r = shard_gradients(n_shards)
    assert isinstance(r, ShardGradients) and r.n_shards == n_shards
    assert len(set(r.tokens_per_shard)) > 1  # uneven padding across the shards
    assert sum(r.tokens_per_shard) == int((uneven_batch().labels != IGNORE_INDEX).sum())
    assert r.token_weighted < 1e-12
    assert r.per_shard_mean > 1e-2 and r.per_shard_mean_overall > 1e-2, r
    assert r.loss_token_weighted == pytest.approx(r.loss_batch, rel=1e-13)
    assert r.loss_per_shard_mean != pytest.approx(r.loss_batch, rel=1e-3)


def test_the_measurement_would_catch_a_wrong_weighting(monkeypatch):
    """If the library's weights were 1/N ("tokens" computing the per-shard mean), the measured
    token-weighted difference would be as large as the naive one."""
    from minitf import data_parallel

    real = data_parallel.shard_weights
    monkeypatch.setattr(data_parallel, "shard_weights", lambda n_tokens, weighting="tokens": real(n_tokens, "shards"))
    r = lesson08_parallel.shard_gradients(2)
    assert r.token_weighted > 1e-2


def test_shard_gradients_checks_its_arguments():
    with pytest.raises(ValueError, match="n_shards: expected an integer in"):
        shard_gradients(1)
