"""Scheduled sampling for the transformer (minitf/scheduled_sampling.py, the two-pass step in
minitf/training.py, ``minitf train --scheduled-sampling`` with the encoder-decoder): pass-2
inputs position by position, eps = 1 as plain teacher forcing, the gradient of pass 2 alone,
seeds, and a quick run that learns."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from minitf.cli import main
from minitf.checkpoint import load_checkpoint
from minitf.data import IGNORE_INDEX
from minitf.models import DecoderOnly, EncoderDecoder
from minitf.optim import AdamW
from minitf.rnn.scheduled_sampling import choose_tokens, get_teacher_forcing_schedule
from minitf.scheduled_sampling import (ScheduledSampling, mix_decoder_inputs, own_previous_tokens,
                                       scheduled_sampling_batch, scheduled_sampling_inputs)
from minitf.data.tasks import get_task
from minitf.training import TrainConfig, default_model_config, train, train_step

TINY = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=2)


def setup(seed=0, dtype="float64", dropout=0.0, n=12):
    """A tiny untrained model and a batch of reversals of different lengths (so some padding)."""
    task = get_task("reverse", min_len=2, max_len=7)
    model = EncoderDecoder(default_model_config(task, **TINY, dtype=dtype, dropout=dropout, seed=seed))
    batch = task.batch(task.dataset(n, seed=seed + 1))
    assert (batch.labels == IGNORE_INDEX).any(), "the batch should hold padding"
    return task, model, batch


def step_gradients(model, batch, policy=None, label_smoothing=0.0):
    """One train_step (no clipping); its result and the gradients it computed (copied)."""
    opt = AdamW(model.parameters(), lr=1e-3)
    out = train_step(model, batch, opt, 1e-3, None, label_smoothing, scheduled_sampling=policy)
    return out, {k: v.copy() for k, v in model.gradients().items()}


# ---- the mix -------------------------------------------------------------------------------------
def test_mix_by_hand():
    gold_in = np.array([[1, 5, 6, 7, 0, 0]])  # <bos>=1, padding 0
    preds = np.array([[15, 16, 17, 18, 19, 20]])  # made at positions 0..5
    own = own_previous_tokens(preds, gold_in)
    assert own.tolist() == [[1, 15, 16, 17, 18, 19]]  # predicted at t-1, fed at t
    use_gold = np.array([[False, False, True, False, False, False]])
    fed, gold = mix_decoder_inputs(gold_in, own, use_gold, pad_id=0)
    assert fed.tolist() == [[1, 15, 6, 17, 0, 0]]  # <bos> and padding kept
    assert gold.tolist() == [[True, False, True, False, True, True]]


@pytest.mark.parametrize("choice", ["argmax", "sample"])
def test_pass_two_inputs_position_by_position(choice):
    _, model, batch = setup()
    eps, seed = 0.5, 7
    mix = scheduled_sampling_inputs(model, batch, ScheduledSampling(eps, choice=choice, rng=seed))
    # the same draws, redone: pass 1 on the gold inputs (no dropout), coins first, then the tokens
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    B, T, V = logits.shape
    rng = np.random.default_rng(seed)
    coin = rng.random((B, T)) < eps
    pred = choose_tokens(logits.reshape(B * T, V), choice, rng).reshape(B, T)
    pad = model.config.pad_id
    n_own = n_changed = 0
    for b in range(B):
        for t in range(T):
            gold_tok = batch.decoder_input_ids[b, t]
            if t == 0 or gold_tok == pad:
                expected, why = gold_tok, "<bos> or padding"
            elif coin[b, t]:
                expected, why = gold_tok, "the coin said gold"
            else:
                expected, why = pred[b, t - 1], "the pass-1 prediction for position t-1"
                n_own += 1
                n_changed += int(expected != gold_tok)
            assert mix.decoder_input_ids[b, t] == expected, \
                f"row {b} position {t}: expected {why} ({expected}), got {mix.decoder_input_ids[b, t]}"
            assert mix.gold[b, t] == (why != "the pass-1 prediction for position t-1")
    assert n_own > 10 and n_changed > 5, "the check must see the model's own tokens, differing from the gold ones"
    assert (mix.decoder_input_ids[batch.decoder_input_ids == pad] == pad).all()
    assert mix.eps == eps


def test_batch_keeps_labels_and_source():
    _, model, batch = setup()
    mixed, mix = scheduled_sampling_batch(model, batch, ScheduledSampling(0.0, rng=3))
    assert mixed.labels is batch.labels and mixed.input_ids is batch.input_ids
    assert mixed.decoder_input_ids is mix.decoder_input_ids
    # eps = 0: every real position past <bos> is the model's own
    real_in = batch.decoder_input_ids != model.config.pad_id
    real_in[:, 0] = False
    assert not mix.gold[real_in].any()


# ---- the step -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_eps_one_is_plain_teacher_forcing_exactly(dropout):
    """Pass 1 runs without dropout and draws nothing from its generators: with eps = 1 the
    update is bit for bit the plain one, dropout masks included."""
    _, model_a, batch = setup(dropout=dropout, dtype="float32")
    model_b = copy.deepcopy(model_a)
    plain, g_plain = step_gradients(model_a, batch)
    ss, g_ss = step_gradients(model_b, batch, ScheduledSampling(1.0, choice="sample", rng=0))
    assert ss["loss"] == plain["loss"] and ss["eps"] == 1.0 and ss["gold_fraction"] == 1.0
    for name in g_plain:
        np.testing.assert_array_equal(g_ss[name], g_plain[name], err_msg=name)
    for name, p in model_a.parameters().items():
        np.testing.assert_array_equal(model_b.parameters()[name], p, err_msg=name)


def test_the_gradient_is_a_teacher_forced_step_on_the_mixed_inputs():
    """Nothing flows through pass 1 or the choice: the update equals a plain teacher-forced
    update whose decoder inputs are the mixed ones (labels gold)."""
    _, model_a, batch = setup()
    model_b = copy.deepcopy(model_a)
    mixed, mix = scheduled_sampling_batch(copy.deepcopy(model_a), batch, ScheduledSampling(0.3, rng=11))
    assert (mixed.decoder_input_ids != batch.decoder_input_ids).any()
    ss, g_ss = step_gradients(model_a, batch, ScheduledSampling(0.3, rng=11), label_smoothing=0.1)
    plain, g_plain = step_gradients(model_b, mixed, label_smoothing=0.1)
    assert ss["loss"] == plain["loss"]
    for name in g_plain:
        np.testing.assert_array_equal(g_ss[name], g_plain[name], err_msg=name)
    # and it is not the gold inputs' gradient
    _, model_c, _ = setup()
    _, g_gold = step_gradients(model_c, batch, label_smoothing=0.1)
    assert not all(np.allclose(g_gold[name], g_ss[name]) for name in g_gold)


def test_the_step_follows_the_schedule_one_update_at_a_time():
    _, model, batch = setup(dtype="float32")
    schedule = get_teacher_forcing_schedule("linear", c=0.25, k=1.0, eps_min=0.1)
    policy = ScheduledSampling(schedule, rng=0)
    opt = AdamW(model.parameters(), lr=1e-3)
    eps = [train_step(model, batch, opt, 1e-3, scheduled_sampling=policy)["eps"] for _ in range(6)]
    assert eps == pytest.approx([1.0, 0.75, 0.5, 0.25, 0.1, 0.1])
    assert policy.step == 6


def tiny_train(seed=0, ss_seed=0, steps=8, schedule=0.5, choice="argmax"):
    task = get_task("copy", min_len=3, max_len=6)
    model = EncoderDecoder(default_model_config(task, **TINY, seed=seed))
    policy = ScheduledSampling(schedule, choice=choice, rng=ss_seed)
    hist = train(model, task, TrainConfig(steps=steps, batch_size=16, eval_every=0, eval_size=32, seed=seed,
                                          progress=False, warmup=2), scheduled_sampling=policy)
    return model, hist, policy


def test_seeds_reproduce_and_the_policy_seed_matters():
    _, h1, p1 = tiny_train(choice="sample")
    _, h2, _ = tiny_train(choice="sample")
    _, h3, _ = tiny_train(choice="sample", ss_seed=1)
    assert h1.loss == h2.loss and h1.evals == h2.evals
    assert h1.loss != h3.loss
    assert p1.step == 8  # one schedule step per update; evaluation takes none


def test_train_refuses_a_policy_for_other_models():
    task = get_task("copy", min_len=3, max_len=6)
    model = DecoderOnly(default_model_config(task, **{**TINY, "n_encoder_layers": 0}))
    with pytest.raises(TypeError, match="scheduled_sampling: only for an EncoderDecoder"):
        train(model, task, TrainConfig(steps=1, progress=False), scheduled_sampling=ScheduledSampling(0.5))


def test_a_quick_run_learns():
    task = get_task("copy", min_len=3, max_len=6)
    model = EncoderDecoder(default_model_config(task, d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                                n_decoder_layers=1, seed=0))
    policy = ScheduledSampling(get_teacher_forcing_schedule("linear", c=1 / 300, eps_min=0.5), rng=0)
    hist = train(model, task, TrainConfig(steps=300, batch_size=32, eval_every=0, eval_size=64, seed=0,
                                          progress=False, warmup=20, lr=3e-3), scheduled_sampling=policy)
    first, last = np.mean(hist.loss[:10]), np.mean(hist.loss[-10:])
    assert last < 0.3 * first, (first, last)
    assert hist.evals[-1]["free_running_token_accuracy"] > 0.8, hist.evals[-1]


# ---- the command ---------------------------------------------------------------------------------------
TINY_CLI = ["--task", "copy", "--steps", "6", "--batch-size", "8", "--eval-every", "0", "--samples", "0",
            "--no-progress", "--d-model", "16", "--heads", "2", "--layers", "1"]


def test_the_command_trains_the_transformer_with_scheduled_sampling(tmp_path, capsys):
    path = tmp_path / "ss.npz"
    assert main(["train", *TINY_CLI, "--scheduled-sampling", "exp", "--ss-k", "0.9", "--ss-choice", "sample",
                 "--save", str(path)]) == 0
    out, err = capsys.readouterr()
    assert ("scheduled sampling, exponential decay (k=0.9), the model's sample token when not forced, "
            "from a first decoder pass") in out
    assert f"eps {0.9 ** 5:.3f}" in out  # the evaluation after update 6: eps = k^5
    saved = load_checkpoint(path).config
    assert saved["architecture"] == "encoder-decoder"
    assert saved["scheduled_sampling"] == {"schedule": {"name": "exponential", "k": 0.9}, "choice": "sample",
                                           "steps_taken": 6}


@pytest.mark.parametrize("argv, message", [
    (["--model", "decoder-only", "--scheduled-sampling", "exp"],
     "--scheduled-sampling: only used with --model rnn or encoder-decoder, got --model decoder-only"),
    (["--ss-k", "0.5"], "--ss-k: only used with --scheduled-sampling"),
    (["--scheduled-sampling", "exp", "--ss-min", "0.1"], "--ss-min: only used with --scheduled-sampling linear"),
    (["--scheduled-sampling", "exp", "--ss-k", "1.5"], "--ss-k: expected a finite number in (0, 1), got 1.5"),
    (["--scheduled-sampling", "linear", "--ss-c", "-1"], "--ss-c: expected a positive finite number"),
])
def test_bad_values_exit_2_with_one_line_naming_the_flag(capsys, argv, message):
    assert main(["train", *argv, "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("minitf train: error: ") and err.count("\n") == 1 and message in err, err
