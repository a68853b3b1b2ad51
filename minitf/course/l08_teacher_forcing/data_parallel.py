"""Lesson 8, section 3 (the loss over real tokens), continued: a batch cut into shards.

Data-parallel training splits each batch into N shards, runs each shard's forward and backward
on its own worker (a thread here, a GPU in a cluster), and combines the N gradients.  Because the
batch's loss is the mean over its m real target tokens, the shards must be combined weighted by
their real tokens m_k::

    L = sum_k (m_k / m) L_k        so        dL/dW = sum_k (m_k / m) g_k

:func:`shard_gradients` measures it live, in float64, on a batch whose padding is uneven across
the shards: the token-weighted sum equals the one batch's gradient to rounding, and the per-shard
mean ``(1/N) sum_k g_k`` -- what a naive data-parallel loop computes -- does not.  Across GPUs the
sum is an all-reduce; the weights are the same.  The machinery is :mod:`minitf.data_parallel`'s,
the one :func:`minitf.training.train` runs with ``workers=N``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...checks import check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX, make_batch
from ...data_parallel import DataParallel, split_batch
from ...models import EncoderDecoder
from ...training import forward_loss

__all__ = ["ShardGradients", "uneven_batch", "shard_gradients"]

V = 13  # the toy vocabulary: ids 4..12 are ordinary tokens, 0-3 the specials (ModelConfig's defaults)


class ShardGradients(NamedTuple):
    """N shards against one batch (:func:`shard_gradients`)."""

    n_shards: int
    tokens_per_shard: list  # m_k: each shard's real target tokens (uneven)
    token_weighted: float  # max over parameters of max|g - g_batch| / max|g_batch|, g = sum_k (m_k/m) g_k
    per_shard_mean: float  # the same for g = (1/N) sum_k g_k, the naive mean
    worst_parameter: str  # where the per-shard mean is furthest off
    per_shard_mean_overall: float  # ||g - g_batch|| / ||g_batch|| over all parameters together, per-shard mean
    loss_batch: float  # the one batch's mean loss over its real tokens
    loss_token_weighted: float  # sum_k (m_k/m) L_k: the same number
    loss_per_shard_mean: float  # (1/N) sum_k L_k: another number


def uneven_batch(B: int = 8, seed: int = 0):
    """B pairs: the first half's targets 1 or 2 tokens long, the second half's 8, so contiguous
    shards have very different numbers of real target tokens."""
    B = check_int("B", B, low=2)
    rng = np.random.default_rng(seed)
    sources = [rng.integers(4, V, size=rng.integers(2, 8)).tolist() for _ in range(B)]
    targets = [rng.integers(4, V, size=(rng.integers(1, 3) if i < B // 2 else 8)).tolist() for i in range(B)]
    return make_batch(sources, targets, pad_id=ModelConfig.pad_id, start_id=ModelConfig.bos_id)


def _exactly_zero(name: str) -> bool:
    """A key bias's gradient is exactly zero in exact arithmetic (softmax ignores a constant added
    to all of a query's scores): what backward computes there is rounding, nothing to compare."""
    return name.endswith(".b_k")


def _relative_difference(got: dict, exact: dict) -> dict:
    return {n: float(np.abs(got[n] - exact[n]).max() / np.abs(exact[n]).max())
            for n in exact if not _exactly_zero(n) and np.any(exact[n])}


def _overall_difference(got: dict, exact: dict) -> float:
    names = [n for n in exact if not _exactly_zero(n)]
    return float(np.sqrt(sum(((got[n] - exact[n]) ** 2).sum() for n in names))
                 / np.sqrt(sum((exact[n] ** 2).sum() for n in names)))


def shard_gradients(n_shards: int = 2, seed: int = 0) -> ShardGradients:
    """The one batch's gradient against ``n_shards`` shards combined two ways, in float64.

    A small encoder-decoder (D 16, 4 heads, 2 + 2 layers, initialised with ``seed``) and
    :func:`uneven_batch`: the gradient of the batch's mean loss in one pass, then the shards on
    ``n_shards`` threads (:class:`minitf.data_parallel.DataParallel`) combined weighted by tokens and
    by the per-shard mean.  The differences are relative per parameter, skipping the key biases
    (their exact gradient is zero).
    """
    n_shards = check_int("n_shards", n_shards, 2, 8)
    model = EncoderDecoder(ModelConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=16, n_heads=4, d_ff=32,
                                       max_len=24, dtype="float64", seed=seed))
    batch = uneven_batch(seed=seed)
    loss, dlogits, cache, _, _ = forward_loss(model, batch)  # the one batch
    model.zero_grad()
    model.backward(dlogits, cache)
    exact = {n: g.copy() for n, g in model.gradients().items()}

    def shard_loss(replica, shard, k):
        shard_loss_k, dlogits_k, cache_k, _, labels_k = forward_loss(replica, shard)
        return shard_loss_k, dlogits_k, cache_k, labels_k

    with DataParallel(model, n_shards) as parallel:
        weighted = parallel.forward_backward(batch, shard_loss, weighting="tokens")
        by_tokens = _relative_difference(model.gradients(), exact)
        mean = parallel.forward_backward(batch, shard_loss, weighting="shards")
        by_shards = _relative_difference(model.gradients(), exact)
        overall = _overall_difference(model.gradients(), exact)
    worst = max(by_shards, key=by_shards.get)
    return ShardGradients(n_shards, [int((s.labels != IGNORE_INDEX).sum()) for s in split_batch(batch, n_shards)],
                          max(by_tokens.values()), by_shards[worst], worst, overall, loss, weighted.loss, mean.loss)
