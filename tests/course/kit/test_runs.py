"""Tests for minitf.course.kit.runs: the set-up, cache, copies and norms every lesson shares."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.course.kit import runs as common
from minitf.models import EncoderDecoder
from minitf.data.tasks import get_task


@pytest.fixture(scope="module")
def task():
    return get_task("reverse", min_len=2, max_len=6, n_symbols=5)


def tiny(task, **fields):
    return common.lesson_model_config(task, 3, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                                      n_decoder_layers=1, **fields)


# ---- a lesson's set-up -----------------------------------------------------------------------------
def test_lesson_configs_take_the_tokenizers_ids_and_compute_in_float64(task):
    mc = tiny(task)
    tok = task.tokenizer
    assert (mc.pad_id, mc.bos_id, mc.eos_id) == (tok.pad_id, tok.bos_id, tok.eos_id)
    assert mc.dtype == "float64" and mc.seed == 3 and mc.tgt_vocab_size == tok.vocab_size
    assert tiny(task, dtype="float32").dtype == "float32"  # a lesson may still ask for float32
    tc = common.lesson_train_config(5, steps=7, batch_size=4)
    assert (tc.seed, tc.steps, tc.batch_size, tc.progress) == (5, 7, 4, False)


def test_train_fresh_trains_a_new_model_and_calls_back_with_it(task):
    seen = []
    tc = common.lesson_train_config(0, steps=4, batch_size=4, eval_every=2, eval_size=4, warmup=1)
    model, optimizer, history = common.train_fresh(task, tiny(task), tc,
                                                   callback=lambda m, step, h: seen.append((m, step)))
    assert isinstance(model, EncoderDecoder) and optimizer.step_count == 4 and len(history.loss) == 4
    assert [step for _, step in seen] == [2, 4] and all(m is model for m, _ in seen)
    again = common.train_fresh(task, tiny(task), tc)  # the same set-up trains to the same weights
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(p, again.model.parameters()[name])


# ---- one run per process --------------------------------------------------------------------------------
def test_once_per_process_is_one_entry_however_the_call_is_spelt():
    calls = []

    @common.once_per_process
    def run(seed: int = 0, n: int = 2):
        calls.append((seed, n))
        return object()

    first = run()
    assert run(0) is first and run(seed=0) is first and run(0, 2) is first and run(n=2) is first
    assert run(np.int64(0)) is first  # a NumPy integer is the int of the same value
    assert run(1) is not first and run(seed=1) is run(1)
    assert calls == [(0, 2), (1, 2)]
    assert all(type(a) is int for call in calls for a in call)  # the function sees plain ints
    run.cache_clear()
    assert run() is not first and calls[-1] == (0, 2)
    assert run.__name__ == "run"


@pytest.mark.parametrize("bad, error", [("0", TypeError), (0.0, TypeError), (True, ValueError), (-1, ValueError)])
def test_once_per_process_checks_its_arguments_before_the_cache(bad, error):
    @common.once_per_process
    def run(seed: int = 0):
        return seed

    run(1)  # True == 1: a bool must not find seed 1's entry
    with pytest.raises(error, match="seed"):
        run(bad)
    with pytest.raises(TypeError):
        run(0, 1)  # more arguments than the signature has


# ---- copies and norms --------------------------------------------------------------------------------------
def test_copy_model_keeps_the_weights_and_changes_the_config(task):
    model = EncoderDecoder(tiny(task, dtype="float32"))
    twin = common.to_float64(model)
    assert twin.dtype == np.float64 and twin.config.dtype == "float64" and model.config.dtype == "float32"
    for name, p in model.parameters().items():
        np.testing.assert_array_equal(twin.parameters()[name], p.astype(np.float64))
    unmasked = common.copy_model(model, causal=False)
    assert unmasked.config.causal is False and model.config.causal is True
    with pytest.raises(TypeError, match="model"):
        common.copy_model("model")


def test_norm_is_one_vector_of_every_array():
    a, b = np.array([3.0, 0.0]), np.array([[4.0]], dtype=np.float32)
    assert common.norm([a, b]) == 5.0
    assert common.norm([]) == 0.0


def test_grad_norm_reads_the_modules_gradients(task):
    model = EncoderDecoder(tiny(task))
    model.zero_grad()
    assert common.grad_norm(model) == 0.0
    g = next(iter(model.gradients().values()))
    g.flat[0] = 2.0
    assert common.grad_norm(model) == 2.0
    model.zero_grad()


def test_checks_name_the_argument():
    with pytest.raises(TypeError, match="model: expected a minitf EncoderDecoder, got str"):
        common.check_model("m")
    with pytest.raises(TypeError, match="batch: expected a minitf.data.Batch, got tuple"):
        common.check_batch((1, 2))
