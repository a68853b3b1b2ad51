"""The training loop and evaluation: determinism, divergence, both sides of the gap,
the decoder-only model trained by the same loop, and the ``minitf train`` command."""
import itertools
import json
import re

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import IGNORE_INDEX, make_batch
from minitf.decoding import greedy_search
from minitf.models import DecoderOnly, EncoderDecoder
from minitf.data.tasks import get_task
from minitf.loss import cross_entropy
from minitf.optim import AdamW, global_grad_norm
from minitf.training import (TrainConfig, TrainingDiverged, decoder_only_batch, default_model_config, eval_pairs,
                             evaluate, make_optimizer, make_schedule, sequence_metrics, train, train_step)

TINY = dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1, n_decoder_layers=1)


def tiny_run(seed=0, steps=15, model_cls=EncoderDecoder, task="copy"):
    task = get_task(task, min_len=3, max_len=6) if task != "addition" else get_task(task)
    model = model_cls(default_model_config(task, **TINY, seed=seed))
    hist = train(model, task, TrainConfig(steps=steps, batch_size=16, eval_every=0, eval_size=32,
                                          seed=seed, progress=False, warmup=5))
    return model, hist


def test_same_seed_gives_the_same_loss_trajectory_bit_for_bit():
    _, h1 = tiny_run(seed=3)
    _, h2 = tiny_run(seed=3)
    assert h1.loss == h2.loss  # exact float equality on purpose: determinism, not closeness
    _, h3 = tiny_run(seed=4)
    assert h3.loss != h1.loss


class RecordingTask:
    """A task whose training batches are recorded (sources as text), to see what train() fed."""

    def __init__(self, task):
        self.task, self.tokenizer, self.name, self.seen = task, task.tokenizer, task.name, set()

    def batch(self, pairs):
        return self.task.batch(pairs)

    def dataset(self, n, seed):
        return self.task.dataset(n, seed)

    def batches(self, batch_size, rng, exclude=()):
        for b in self.task.batches(batch_size, rng, exclude):
            self.seen.update(self.tokenizer.decode_batch(b.input_ids))
            yield b


def test_train_holds_out_its_evaluation_set_and_the_callers():
    """Short copy strings over 3 letters recur all the time, so without the hold-out the
    evaluation sources would be trained on (checked first, so the test can fail)."""
    task = get_task("copy", min_len=2, max_len=3, n_symbols=3)  # 9 + 27 possible sources
    cfg = TrainConfig(steps=20, batch_size=16, eval_every=0, eval_size=6, seed=0, progress=False, warmup=5)
    evaluation = {s for s, _ in eval_pairs(task, cfg)}
    extra = {s for s, _ in task.dataset(4, seed=99)} - evaluation
    plain = RecordingTask(task)
    for b in itertools.islice(plain.batches(16, np.random.default_rng(0)), 20):
        pass
    assert evaluation & plain.seen and extra & plain.seen
    recording = RecordingTask(task)
    train(EncoderDecoder(default_model_config(task, **TINY)), recording, cfg, held_out=extra)
    assert len(recording.seen) > 10 and not (evaluation | extra) & recording.seen
    # a single text or pairs would silently hold out the wrong things: refused
    model = EncoderDecoder(default_model_config(task, **TINY))
    with pytest.raises(TypeError, match=r"^held_out: expected a collection of source texts, got a single str"):
        train(model, task, cfg, held_out="ab")
    with pytest.raises(TypeError, match=r"^exclude: expected source texts \(str\), got tuple"):
        train(model, task, cfg, held_out=task.dataset(2, seed=1))


def test_training_lowers_the_loss():
    _, hist = tiny_run(steps=60)
    assert np.mean(hist.loss[-10:]) < 0.75 * np.mean(hist.loss[:5])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_nan_loss_stops_training_with_a_clear_message():
    task = get_task("copy", min_len=3, max_len=6)
    model = EncoderDecoder(default_model_config(task, **TINY))
    model.parameters()["decoder_norm.gamma"][0] = np.nan
    with pytest.raises(TrainingDiverged, match=r"loss is nan: training stopped"):
        train(model, task, TrainConfig(steps=5, batch_size=8, eval_every=0, eval_size=8, progress=False, warmup=1))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_an_inf_gradient_stops_training_before_the_update():
    task = get_task("copy", min_len=3, max_len=6)
    model = EncoderDecoder(default_model_config(task, **TINY))
    model.parameters()["decoder_layers.0.ff.linear1.W"][0, 0] = np.inf
    before = {k: v.copy() for k, v in model.parameters().items()}
    with pytest.raises(TrainingDiverged):
        train(model, task, TrainConfig(steps=5, batch_size=8, eval_every=0, eval_size=8, progress=False, warmup=1))
    for k, v in model.parameters().items():
        np.testing.assert_array_equal(v, before[k], err_msg=f"{k} was updated after divergence")


def test_evaluate_runs_free_with_the_decoder_minitf_generate_uses():
    task = get_task("copy", min_len=3, max_len=6)
    model, _ = tiny_run(steps=5)
    model.eval()
    batch = task.batch(task.dataset(4, seed=1))
    tok = task.tokenizer
    pred = evaluate(model, batch, max_len=5)["predictions"]
    np.testing.assert_array_equal(pred, greedy_search(model, batch.input_ids, max_new_tokens=5).sequences)
    # replay: each generated token is the argmax given the previously generated ones
    prefix = np.full((4, 1), tok.bos_id)
    for t in range(pred.shape[1]):
        logits, _ = model.forward(batch.input_ids, prefix)
        expect = logits[:, -1].argmax(-1)
        alive = ~(pred[:, :t] == tok.eos_id).any(axis=1)
        np.testing.assert_array_equal(pred[alive, t], expect[alive])
        # after a row's <eos> nothing is generated: <pad>, which never matches a label
        np.testing.assert_array_equal(pred[~alive, t], tok.pad_id)
        prefix = np.concatenate([prefix, pred[:, t:t + 1]], axis=1)


def test_a_premature_eos_earns_no_credit_for_the_positions_after_it():
    eos, pad = 2, 0
    labels = np.array([[5, 6, eos]])
    assert sequence_metrics(np.array([[eos, pad, pad]]), labels, eos)["token_accuracy"] == 0.0
    assert sequence_metrics(np.array([[5, eos, pad]]), labels, eos)["token_accuracy"] == pytest.approx(1 / 3)


def test_sequence_metrics_by_hand():
    eos = 2
    labels = np.array([[5, 6, eos, IGNORE_INDEX], [7, 8, 9, eos]])
    pred = np.array([[5, 6, eos, eos], [7, 4, 9, eos]])
    m = sequence_metrics(pred, labels, eos)
    assert m["exact_match"] == 0.5
    assert m["token_accuracy"] == pytest.approx(6 / 7)
    # a prediction that does not stop at the target's end is not an exact match
    m = sequence_metrics(np.array([[5, 6, 3, 3], [7, 8, 9, eos]]), labels, eos)
    assert m["exact_match"] == 0.5
    # a target without <eos> (make_batch allows it): the output must be it, then stop
    no_eos = np.array([[5, 6, IGNORE_INDEX, IGNORE_INDEX]])
    assert sequence_metrics(np.array([[5, 6, eos, eos]]), no_eos, eos)["exact_match"] == 1.0
    assert sequence_metrics(np.array([[5, 6, 7, eos]]), no_eos, eos)["exact_match"] == 0.0
    assert sequence_metrics(np.array([[5, 6]]), no_eos, eos)["exact_match"] == 0.0  # never stopped


def test_evaluate_reports_both_sides_and_restores_the_mode():
    task = get_task("copy", min_len=3, max_len=6)
    model, _ = tiny_run(steps=5)
    model.train()
    out = evaluate(model, task.batch(task.dataset(8, seed=2)))
    for k in ("teacher_forced_loss", "teacher_forced_token_accuracy", "free_running_exact_match",
              "free_running_token_accuracy"):
        assert k in out and np.isfinite(out[k])
    assert model.training


def test_decoder_only_batch_puts_source_then_shifted_target():
    b = make_batch([[5, 6, 7], [8]], [[9, 10, 2], [11, 2]], pad_id=0, start_id=1)
    ids, labels = decoder_only_batch(b, start_id=1, pad_id=0)
    np.testing.assert_array_equal(ids, [[5, 6, 7, 1, 9, 10], [8, 0, 0, 1, 11, 2]])
    np.testing.assert_array_equal(labels, [[-100, -100, -100, 9, 10, 2], [-100, -100, -100, 11, 2, -100]])


def test_the_decoder_only_model_trains_with_the_same_loop():
    _, hist = tiny_run(steps=60, model_cls=DecoderOnly)
    assert np.mean(hist.loss[-10:]) < 0.75 * np.mean(hist.loss[:5])


def test_train_command_writes_metrics(tmp_path, capsys):
    from minitf.cli import main

    out = tmp_path / "m.json"
    ckpt = tmp_path / "c.npz"
    rc = main(["train", "--task", "copy", "--steps", "8", "--d-model", "32", "--layers", "1", "--eval-every", "4",
               "--no-progress", "--samples", "2", "--metrics-out", str(out), "--save", str(ckpt)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "teacher-forced" in printed and "free-running" in printed and "target" in printed
    m = json.loads(out.read_text())
    for k in ("teacher_forced_token_accuracy", "free_running_exact_match", "free_running_token_accuracy",
              "train_loss", "steps", "seconds"):
        assert k in m
    assert m["steps"] == 8
    from minitf.checkpoint import load_checkpoint

    ck = load_checkpoint(ckpt)
    cfg = ModelConfig.from_dict(ck.config["model"])
    assert cfg.d_model == 32 and ck.extra["task"] == "copy"


@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "--steps: expected a positive integer, got 0"),
    (["--batch-size", "-1"], "--batch-size: expected a positive integer, got -1"),
    (["--eval-every", "-1"], "--eval-every: expected a non-negative integer, got -1"),
    (["--seed", "-1"], "--seed: expected a non-negative integer, got -1"),
    (["--samples", "-4"], "--samples: expected a non-negative integer, got -4"),
    (["--lr", "-1"], "--lr: expected a positive finite number, got -1.0"),
    (["--lr", "nan"], "--lr: expected a positive finite number, got nan"),
    (["--heads", "3"], "--heads: expected a divisor of d_model=64"),
    (["--workers", "0"], "--workers: expected a positive integer, got 0"),
])
def test_train_command_rejects_bad_arguments_naming_the_flag(capsys, argv, message):
    from minitf.cli import main

    assert main(["train", *argv, "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("minitf train: error: ") and message in err, err


@pytest.mark.parametrize("field, value, message", [
    ("steps", 0, "steps: expected a positive integer, got 0"),
    ("batch_size", 2.0, "batch_size: expected a positive integer, got 2.0"),
    ("eval_size", 0, "eval_size: expected a positive integer"),
    ("warmup", -1, "warmup: expected a non-negative integer"),
    ("eval_every", -1, "eval_every: expected a non-negative integer"),
    ("lr", 0.0, "lr: expected a positive finite number"),
    ("lr", float("inf"), "lr: expected a positive finite number"),
    ("clip_norm", 0.0, "clip_norm: expected a positive finite number"),
    ("label_smoothing", 1.5, "label_smoothing: expected a finite number in [0, 1]"),
])
def test_train_config_rejects_bad_fields(field, value, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        TrainConfig(**{field: value})


def test_train_config_takes_numpy_numbers_but_not_booleans():
    cfg = TrainConfig(lr=np.float32(1e-3), clip_norm=np.float64(0.5), label_smoothing=np.float32(0.1),
                      steps=np.int64(3))
    assert cfg.steps == 3
    with pytest.raises(ValueError, match="^lr: expected a positive finite number, got True"):
        TrainConfig(lr=True)


@pytest.mark.parametrize("schedule", ["warmup_cosine", "noam", "constant"])
@pytest.mark.parametrize("steps, warmup", [(1, 100), (5, 0), (5, 3)])
def test_every_update_has_a_positive_learning_rate(schedule, steps, warmup):
    """The last update (and a run of one step) must move the weights: no lr of 0 at the end,
    and a Noam schedule with warmup 0 is allowed (its peak is then at step 1)."""
    lrs = [make_schedule(TrainConfig(steps=steps, warmup=warmup, schedule=schedule, lr=1e-3), 32)(s)
           for s in range(1, steps + 1)]
    assert all(lr > 0 for lr in lrs), lrs
    assert max(lrs) <= 1e-3 * (1 + 1e-12)  # never above the configured peak ...
    if schedule == "constant" or (schedule == "noam" and warmup == 0) or 1 <= warmup <= steps:
        assert max(lrs) == pytest.approx(1e-3)  # ... and it is reached when the warm-up fits


def test_a_trained_model_round_trips_through_a_checkpoint_bit_exactly(tmp_path):
    from minitf.checkpoint import copy_params_into, load_checkpoint, save_checkpoint
    from minitf.training import make_optimizer

    task = get_task("copy", min_len=3, max_len=6)
    cfg = default_model_config(task, **TINY)
    model = EncoderDecoder(cfg)
    tcfg = TrainConfig(steps=5, batch_size=8, eval_every=0, eval_size=8, progress=False, warmup=1)
    opt = make_optimizer(model.parameters(), tcfg)
    train(model, task, tcfg, optimizer=opt)
    path = tmp_path / "model.npz"
    save_checkpoint(path, config={"model": cfg.to_dict()}, params=model.parameters(),
                    optimizer_state=opt.state_dict())
    ck = load_checkpoint(path)
    fresh = EncoderDecoder(ModelConfig.from_dict(ck.config["model"]))
    copy_params_into(fresh.parameters(), ck.params)
    for name, p in model.parameters().items():
        q = fresh.parameters()[name]
        assert p.dtype == q.dtype and np.array_equal(p, q), name
    opt2 = make_optimizer(fresh.parameters(), tcfg)
    opt2.load_state_dict(ck.optimizer_state)
    for k, v in opt.state_dict().items():
        assert np.array_equal(v, opt2.state_dict()[k]), k
    b = task.batch(task.dataset(4, seed=5))
    l1, _ = model.forward(b.input_ids, b.decoder_input_ids)
    l2, _ = fresh.forward(b.input_ids, b.decoder_input_ids)
    assert np.array_equal(l1, l2)


# ---- the loop's wiring: what reaches the optimizer -------------------------------------------------
class SpyAdamW(AdamW):
    """Records the lr and the gradient norm each update actually used."""

    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        self.seen = []

    def step(self, grads):
        self.seen.append((self.lr, global_grad_norm(grads)))
        super().step(grads)


def _copy_setup(**cfg):
    task = get_task("copy", min_len=3, max_len=6)
    model = EncoderDecoder(default_model_config(task, **TINY))
    return task, model, TrainConfig(**{**dict(steps=6, batch_size=8, eval_every=0, eval_size=8, progress=False,
                                              warmup=3), **cfg})


def test_train_feeds_the_schedule_to_the_optimizer_and_clips():
    task, model, cfg = _copy_setup(clip_norm=1e-3)
    opt = SpyAdamW(model.parameters(), lr=cfg.lr)
    hist = train(model, task, cfg, optimizer=opt)
    schedule = make_schedule(cfg, model.config.d_model)
    assert [lr for lr, _ in opt.seen] == [schedule(s) for s in range(1, cfg.steps + 1)]
    assert all(norm <= 1e-3 * (1 + 1e-5) for _, norm in opt.seen)  # clipped before the update
    assert all(norm > 1e-3 for norm in hist.grad_norm)  # the history keeps the norm before clipping


def test_train_step_uses_label_smoothing():
    task, model, _ = _copy_setup()
    batch = task.batch(task.dataset(8, seed=3))
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    expected, _ = cross_entropy(logits, batch.labels, label_smoothing=0.3)
    out = train_step(model, batch, AdamW(model.parameters()), lr=1e-3, label_smoothing=0.3)
    assert out["loss"] == pytest.approx(expected, rel=1e-6)


def test_a_non_finite_gradient_with_a_finite_loss_stops_training(monkeypatch):
    task, model, cfg = _copy_setup(clip_norm=None)
    before = {k: v.copy() for k, v in model.parameters().items()}
    backward = model.backward

    def poisoned_backward(dlogits, cache):
        out = backward(dlogits, cache)
        model.gradients()["decoder_layers.0.ff.linear1.W"][0, 0] = np.inf
        return out

    monkeypatch.setattr(model, "backward", poisoned_backward)
    with pytest.raises(TrainingDiverged, match=r"^step 1: gradient norm is inf"):
        train(model, task, cfg)
    for k, v in model.parameters().items():
        np.testing.assert_array_equal(v, before[k])


def test_teacher_forced_accuracy_counts_real_positions_only():
    task, model, _ = _copy_setup()
    batch = task.batch(task.dataset(8, seed=4))
    assert (batch.labels == IGNORE_INDEX).any()  # padding present, so counting it would show
    out = evaluate(model, batch)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
    real = batch.labels != IGNORE_INDEX
    assert out["teacher_forced_token_accuracy"] == ((logits.argmax(-1) == batch.labels) & real).sum() / real.sum()



# ---- workers and BLAS threads -----------------------------------------------------------------------------
def test_workers_run_on_one_blas_thread_each_and_one_worker_leaves_the_count(monkeypatch):
    from minitf.process import BLAS_THREAD_VARS, numpy_blas_thread_count, numpy_blas_threads

    for name in BLAS_THREAD_VARS:
        monkeypatch.delenv(name, raising=False)
    task = get_task("copy")
    seen = {}
    with numpy_blas_threads(2):
        before = numpy_blas_thread_count()
        for workers in (1, 2):
            seen[workers] = []
            train(EncoderDecoder(default_model_config(task, **TINY)), task,
                  TrainConfig(steps=2, batch_size=4, eval_every=1, eval_size=4, progress=False), workers=workers,
                  callback=lambda step, hist, w=workers: seen[w].append(numpy_blas_thread_count()))
            assert numpy_blas_thread_count() == before  # restored
    if before is not None:  # an OpenBLAS minitf can ask
        assert before == 2 and seen == {1: [2, 2], 2: [1, 1]}


def test_a_blas_thread_count_set_in_the_environment_is_left_alone(monkeypatch):
    from minitf.process import numpy_blas_thread_count, numpy_blas_threads

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    task = get_task("copy")
    seen = []
    with numpy_blas_threads(2):
        train(EncoderDecoder(default_model_config(task, **TINY)), task,
              TrainConfig(steps=1, batch_size=4, eval_size=4, progress=False), workers=2,
              callback=lambda step, hist: seen.append(numpy_blas_thread_count()))
    assert seen in ([2], [None])


def test_one_worker_is_the_ordinary_loop_bit_for_bit():
    """train(workers=1) against train_step by hand: the same weights, bit for bit."""
    task = get_task("copy")
    cfg = TrainConfig(steps=4, batch_size=8, eval_every=0, eval_size=8, seed=2, progress=False)
    a = EncoderDecoder(default_model_config(task, **TINY))
    train(a, task, cfg, workers=1)
    b = EncoderDecoder(default_model_config(task, **TINY))
    opt, schedule = make_optimizer(b.parameters(), cfg), make_schedule(cfg, b.config.d_model)
    batches = task.batches(cfg.batch_size, np.random.default_rng(cfg.seed), exclude=[s for s, _ in eval_pairs(task, cfg)])
    for step in range(1, cfg.steps + 1):
        train_step(b, next(batches), opt, schedule(step), cfg.clip_norm)
    for name, p in a.parameters().items():
        np.testing.assert_array_equal(p, b.parameters()[name], err_msg=name)


def test_train_command_trains_data_parallel_and_says_so(capsys):
    from minitf.cli import main

    rc = main(["train", "--task", "copy", "--steps", "2", "--d-model", "16", "--heads", "2", "--layers", "1",
               "--eval-every", "0", "--no-progress", "--samples", "0", "--workers", "2"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "2 workers, data-parallel: shards of 32 rows" in printed, printed
    rc = main(["train", "--task", "copy", "--steps", "1", "--d-model", "16", "--heads", "2", "--layers", "1",
               "--eval-every", "0", "--no-progress", "--samples", "0", "--workers", "1", "--batch-size", "5"])
    assert rc == 0 and "(1 worker;" in capsys.readouterr().out
