"""Data-parallel training (minitf/data_parallel.py, train(..., workers=N)): N shards weighted by
their real tokens give exactly the one batch's gradient -- and the naive per-shard mean does not,
with uneven padding; replicas share the weights and own their gradients; the threaded update is
the optimizer's own, bit for bit; the same seed and workers give the same run."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import IGNORE_INDEX, make_batch
from minitf.data.tasks import get_task
from minitf.data_parallel import (MIN_SHARD_ROWS, DataParallel, balanced_groups, combine_gradients, default_workers,
                                  jumped_generator, make_replica, optimizer_shard, shard_bounds, shard_generators,
                                  split_batch)
from minitf.models import DecoderOnly, EncoderDecoder, EncoderOnly, RNNSeq2Seq
from minitf.models.rnn_seq2seq import default_rnn_config
from minitf.optim import SGD, AdamW
from minitf.pretraining import encoder_parameter_names, finetune
from minitf.rnn.scheduled_sampling import ScheduledSampling, get_teacher_forcing_schedule
from minitf.training import TrainConfig, default_model_config, forward_loss, train, train_step

V = 13


def small_config(**kw) -> ModelConfig:
    return ModelConfig(**{**dict(src_vocab_size=V, tgt_vocab_size=V, d_model=16, n_heads=4, d_ff=24, max_len=24,
                                 dtype="float64", seed=3, share_embeddings=True, tie_output=True), **kw})


def uneven_batch(B: int = 6, seed: int = 0):
    """Sources of random lengths; the first half's targets 1-2 tokens, the second half's 8: every
    split into contiguous shards has shards of very different real-token counts."""
    rng = np.random.default_rng(seed)
    sources = [rng.integers(4, V, size=rng.integers(2, 8)).tolist() for _ in range(B)]
    targets = [rng.integers(4, V, size=(rng.integers(1, 3) if i < B // 2 else 8)).tolist() for i in range(B)]
    return make_batch(sources, targets, pad_id=0, start_id=1)


def one_batch_gradient(model, batch, **kw) -> dict:
    loss, dlogits, cache, _, _ = forward_loss(model, batch, **kw)
    model.zero_grad()
    model.backward(dlogits, cache)
    return {name: g.copy() for name, g in model.gradients().items()}, loss


def shard_loss(**kw):
    def fn(replica, shard, k):
        loss, dlogits, cache, _, labels = forward_loss(replica, shard, **kw)
        return loss, dlogits, cache, labels
    return fn


def exactly_zero(name: str) -> bool:
    """A key bias's exact gradient is zero (softmax ignores a constant added to every score of a
    query); what backward computes there is rounding noise, meaningless relative to itself."""
    return name.endswith(".b_k")


def relative_difference(got: np.ndarray, exact: np.ndarray) -> float:
    """max |got - exact| / max |exact|: the parameter's gradient as one vector (entry by entry, an
    entry that is a near-cancellation of large terms would measure the cancellation, not the code)."""
    return float(np.abs(got - exact).max() / np.abs(exact).max()) if np.any(exact) else float(np.any(got))


def worst_relative_error(got: dict, exact: dict) -> tuple[float, str]:
    errors = {n: relative_difference(got[n], exact[n]) for n in exact if not exactly_zero(n)}
    name = max(errors, key=errors.get)
    return errors[name], name


# ---- the weighted combination ---------------------------------------------------------------------
@pytest.mark.parametrize("workers", [2, 3, 4])
def test_token_weighted_shards_give_the_one_batch_gradient_and_the_per_shard_mean_does_not(workers):
    model = EncoderDecoder(small_config())
    batch = uneven_batch()
    exact, loss = one_batch_gradient(model, batch)
    counts = [int((s.labels != IGNORE_INDEX).sum()) for s in split_batch(batch, workers)]
    assert len(set(counts)) > 1, f"the padding must be uneven across the shards, got {counts} real tokens"
    for name in exact:
        if exactly_zero(name):
            assert np.abs(exact[name]).max() < 1e-15  # what "exactly zero" computes: rounding

    with DataParallel(model, workers) as parallel:
        out = parallel.forward_backward(batch, shard_loss())
        weighted = {n: g.copy() for n, g in model.gradients().items()}
        error, where = worst_relative_error(weighted, exact)
        assert error < 1e-12, f"{workers} token-weighted shards: {where} differs from the one batch by {error:.2e}"
        assert out.loss == pytest.approx(loss, rel=1e-13) and out.n_tokens == batch.n_tokens
        assert [p.n_tokens for p in out.shards] == counts

        mean = parallel.forward_backward(batch, shard_loss(), weighting="shards")
        naive = model.gradients()
        error, where = worst_relative_error(naive, exact)
        assert error > 1e-2, (f"the per-shard mean (1/N) sum_k g_k should not be the batch's gradient with "
                              f"uneven padding ({counts} tokens), yet {where} is within {error:.2e}")
        assert mean.loss != pytest.approx(loss, rel=1e-3)


def test_combine_gradients_is_the_weighted_sum_written_where_asked():
    g1 = {"W": np.array([1.0, 2.0]), "b": np.array([4.0])}
    g2 = {"W": np.array([3.0, -2.0]), "b": np.array([0.0])}
    out = combine_gradients([g1, g2], [1, 3])  # w = 1/4, 3/4
    np.testing.assert_array_equal(out["W"], [2.5, -1.0])
    np.testing.assert_array_equal(out["b"], [1.0])
    assert out["W"] is not g1["W"] and g1["W"][0] == 1.0  # new arrays by default
    same = combine_gradients([g1, g2], [1, 3], weighting="shards", out=g1, names=["W"])
    assert same["W"] is g1["W"] and g1["W"].tolist() == [2.0, 0.0] and g1["b"].tolist() == [4.0]
    with pytest.raises(ValueError, match="n_tokens: expected one count per shard"):
        combine_gradients([g1, g2], [3])
    with pytest.raises(ValueError, match="weighting"):
        combine_gradients([g1, g2], [1, 3], weighting="rows")


@pytest.mark.parametrize("kind", ["decoder-only concat", "decoder-only causal_lm", "rnn"])
def test_every_model_family_gives_the_one_batch_gradient(kind):
    batch = uneven_batch(B=5, seed=1)
    kw = {}
    if kind == "rnn":
        task = get_task("reverse")
        model = RNNSeq2Seq(default_rnn_config(task, attention="additive", hidden_size=8, embedding_size=6,
                                              dtype="float64", seed=2))
        batch = task.batch(task.dataset(5, seed=3))
    else:
        model = DecoderOnly(small_config(n_encoder_layers=0, max_len=40))
        kw = {"decoder_only_format": kind.split()[1]}
    exact, loss = one_batch_gradient(model, batch, **kw)
    with DataParallel(model, 2) as parallel:
        out = parallel.forward_backward(batch, shard_loss(**kw))
    error, where = worst_relative_error(model.gradients(), exact)
    assert error < 1e-12, f"{kind}: {where} differs by {error:.2e}"
    assert out.loss == pytest.approx(loss, rel=1e-13)


# ---- shards ---------------------------------------------------------------------------------------------
def test_shards_are_contiguous_rows_as_equal_as_they_can_be():
    assert shard_bounds(7, 3) == [(0, 3), (3, 5), (5, 7)]
    assert shard_bounds(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    batch = uneven_batch(B=7)
    shards = split_batch(batch, 3)
    for name, a in zip(batch._fields, batch):
        np.testing.assert_array_equal(np.concatenate([getattr(s, name) for s in shards]), a)
        assert all(getattr(s, name).shape[1] == a.shape[1] for s in shards)  # the batch's padded widths
        assert all(np.shares_memory(getattr(s, name), a) for s in shards)  # views
    with pytest.raises(ValueError, match="n_shards: expected an integer in"):
        shard_bounds(3, 4)


def test_a_batch_smaller_than_the_workers_takes_one_shard_a_row():
    model = EncoderDecoder(small_config())
    batch = uneven_batch(B=2)
    exact, _ = one_batch_gradient(model, batch)
    with DataParallel(model, 3) as parallel:
        out = parallel.forward_backward(batch, shard_loss())
    assert len(out.shards) == 2
    assert worst_relative_error(model.gradients(), exact)[0] < 1e-12


def test_default_workers_one_per_cpu_with_enough_rows_a_shard():
    assert default_workers(64, cpus=2) == 2
    assert default_workers(64, cpus=8) == 64 // MIN_SHARD_ROWS
    assert default_workers(2 * MIN_SHARD_ROWS - 1, cpus=2) == 1
    assert default_workers(8, cpus=1) == 1
    assert default_workers(64) >= 1


# ---- replicas ---------------------------------------------------------------------------------------------
def test_a_replica_shares_the_weights_owns_its_gradients_and_keeps_tied_weights_tied():
    model = EncoderDecoder(small_config(dropout=0.1))
    replica = make_replica(model, 1)
    P, R = model.parameters(), replica.parameters()
    assert list(P) == list(R) and all(P[n] is R[n] for n in P)
    G, GR = model.gradients(), replica.gradients()
    assert all(G[n] is not GR[n] and not np.shares_memory(G[n], GR[n]) for n in G)
    assert replica.src_embed is replica.tgt_embed  # share_embeddings: still one table in the replica
    assert replica.src_pos.table is model.src_pos.table  # a constant: shared, not copied
    batch = uneven_batch()
    model.eval(), replica.eval()
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    P["decoder_norm.gamma"] *= 1.5  # an update of the model's weights reaches the replica
    np.testing.assert_array_equal(replica.forward(batch.input_ids, batch.decoder_input_ids)[0],
                                  model.forward(batch.input_ids, batch.decoder_input_ids)[0])
    assert not np.array_equal(model.forward(batch.input_ids, batch.decoder_input_ids)[0], logits)


def test_replicas_draw_jumped_streams_the_model_keeps_its_own():
    model = EncoderDecoder(small_config(dropout=0.1))
    state = model.src_dropout.rng.bit_generator.state
    replicas = [make_replica(model, k) for k in (1, 2)]
    assert model.src_dropout.rng.bit_generator.state == state  # making replicas draws nothing
    expected = [jumped_generator(model.src_dropout.rng, k).random(4) for k in (1, 2)]
    for replica, want in zip(replicas, expected):
        assert replica.src_dropout.rng is replica.encoder_layers[0].dropout1.rng  # one stream per replica
        assert replica.src_dropout.rng is not model.src_dropout.rng
        np.testing.assert_array_equal(replica.src_dropout.rng.random(4), want)
    gens = shard_generators(np.random.default_rng(5), 3)
    assert gens[0].random() == np.random.default_rng(5).random()
    assert len({g.random() for g in gens}) == 3


def test_an_rnn_policy_is_copied_with_its_own_coins_and_stays_in_step():
    task = get_task("reverse")
    policy = ScheduledSampling(get_teacher_forcing_schedule("linear", k=1.0, c=0.05), rng=7)
    model = RNNSeq2Seq(default_rnn_config(task, hidden_size=8, embedding_size=6), scheduled_sampling=policy)
    history = train(model, task, TrainConfig(steps=6, batch_size=8, eval_every=0, eval_size=8, progress=False),
                    workers=2)
    assert len(history.loss) == 6 and policy.step == 6  # the model's own policy: one step per update


# ---- the update --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda p: AdamW(p, lr=1e-2), lambda p: SGD(p, lr=1e-2, momentum=0.9,
                                                                               weight_decay=0.1)])
def test_the_threaded_update_is_the_optimizers_own_bit_for_bit(make):
    model = EncoderDecoder(small_config(dtype="float32"))
    twin = EncoderDecoder(small_config(dtype="float32"))
    rng = np.random.default_rng(0)
    grads = {n: rng.standard_normal(p.shape).astype(np.float32) for n, p in model.parameters().items()}
    serial, threaded = make(twin.parameters()), make(model.parameters())
    with DataParallel(model, 3) as parallel:
        for _ in range(3):
            serial.step(grads)
            parallel.step(threaded, grads)
    assert threaded.step_count == serial.step_count == 3
    for name, p in twin.parameters().items():
        np.testing.assert_array_equal(model.parameters()[name], p, err_msg=name)
    for key, value in serial.state_dict().items():
        np.testing.assert_array_equal(threaded.state_dict()[key], value, err_msg=key)


def test_optimizer_shards_share_the_buffers_and_groups_balance_the_sizes():
    params = {"a": np.zeros(10), "b": np.zeros(6), "c": np.zeros(5), "d": np.zeros(1)}
    groups = balanced_groups({n: p.size for n, p in params.items()}, 2)
    assert sorted(sum(params[n].size for n in g) for g in groups) == [11, 11]
    opt = AdamW(params)
    shard = optimizer_shard(opt, groups[1])
    assert set(shard.params) == set(groups[1]) and all(shard.state["m"][n] is opt.state["m"][n] for n in groups[1])


# ---- training ----------------------------------------------------------------------------------------------
def _trained(workers: int, dropout: float = 0.0, steps: int = 8):
    task = get_task("reverse")
    model = EncoderDecoder(default_model_config(task, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                                                n_decoder_layers=1, dropout=dropout))
    history = train(model, task, TrainConfig(steps=steps, batch_size=12, eval_every=0, eval_size=8, seed=2,
                                             progress=False), workers=workers)
    return {n: p.copy() for n, p in model.parameters().items()}, history


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_the_same_seed_and_workers_give_the_same_trajectory(dropout):
    a, ha = _trained(2, dropout)
    b, hb = _trained(2, dropout)
    assert ha.loss == hb.loss
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    c, hc = _trained(1, dropout)
    assert hc.tokens == ha.tokens  # the same batches
    if dropout:
        assert hc.loss[1:] != ha.loss[1:]  # other workers, other dropout masks: documented


def encoder_only_config(task) -> ModelConfig:
    V = task.tokenizer.vocab_size + 1  # one id more for <mask> (a CharTokenizer has none)
    return default_model_config(task, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=0,
                                src_vocab_size=V, tgt_vocab_size=V)


def test_workers_are_checked_and_a_parallel_step_refuses_one_generator_for_all_shards():
    task = get_task("reverse")
    model = EncoderDecoder(default_model_config(task, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                                                n_decoder_layers=1))
    with pytest.raises(ValueError, match="workers: expected a positive integer, got 0"):
        train(model, task, TrainConfig(steps=1, batch_size=4, eval_size=4, progress=False), workers=0)
    eo = EncoderOnly(encoder_only_config(task), mask_id=task.tokenizer.vocab_size)
    batch = task.batch(task.dataset(4, seed=0))
    with DataParallel(eo, 2) as parallel, pytest.raises(TypeError, match="rng: with parallel, expected a list of 2"):
        train_step(eo, batch, AdamW(eo.parameters()), 1e-3, rng=np.random.default_rng(0), parallel=parallel)


def test_an_encoder_only_model_trains_with_a_masking_stream_per_shard():
    task = get_task("reverse")
    cfg = encoder_only_config(task)
    runs = []
    for _ in range(2):
        model = EncoderOnly(cfg, mask_id=task.tokenizer.vocab_size)
        h = train(model, task, TrainConfig(steps=4, batch_size=12, eval_every=0, eval_size=8, progress=False),
                  workers=2)
        runs.append(h.loss)
    assert runs[0] == runs[1] and all(np.isfinite(runs[0]))


def test_finetuning_with_a_frozen_encoder_and_workers_leaves_the_encoder_bit_for_bit():
    task = get_task("reverse")
    model = EncoderDecoder(default_model_config(task, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                                                n_decoder_layers=1))
    frozen = {n: model.parameters()[n].copy() for n in encoder_parameter_names(model)}
    decoder_before = model.parameters()["decoder_norm.gamma"].copy()
    finetune(model, task, TrainConfig(steps=3, batch_size=12, eval_every=0, eval_size=8, progress=False),
             freeze_encoder=True, workers=2)
    for name, before in frozen.items():
        np.testing.assert_array_equal(model.parameters()[name], before, err_msg=name)
    assert not np.array_equal(model.parameters()["decoder_norm.gamma"], decoder_before)
