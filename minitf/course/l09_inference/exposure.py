"""Lesson 9, section 6 (*Exposure bias, measured*): the error at each target position, fed
the true prefix and fed its own, for a transformer trained with teacher forcing and with
scheduled sampling (:mod:`minitf.scheduled_sampling`, two decoder passes).

**The task.**  ``sort`` on strings of exactly :data:`LENGTH` = 20 letters from 12 symbols
(``fbhad... -> abdfh...``).  The next letter of a sorted string depends on the prefix
already written (how many ``c`` have been written decides whether the next is another
``c``), so a wrong letter fed back can cause more wrong letters: compounding has something
to work on.  (``reverse`` and ``copy`` do not show it with a transformer: target t reads
source position n-1-t or t, found from the position alone, whatever the prefix; and a
model of this size does not learn them in a few hundred updates.)  Every source has the
same length, so every position is averaged over the same :data:`EVAL_SIZE` examples:
position 21 is ``<eos>``.

**The variants** (:data:`VARIANTS`), each trained with every seed of :data:`SEEDS` (same
initialisation and data order for one seed across variants, so differences are paired):

* ``teacher_forcing``: the plain model, :data:`STEPS` updates;
* ``ss_linear``, ``ss_exponential``, ``ss_inverse_sigmoid``: scheduled sampling with argmax
  tokens, the gold probability eps falling from 1 to 0.5 at the last update
  (:func:`minitf.course.kit.schedules.schedule_for`, Lesson 1's schedules);
* ``teacher_forcing_400``: the plain model with a third more updates, about the work of a
  scheduled-sampling run (its extra forward pass is about a third of a training step:
  forward and backward cost about three forwards), to tell "more computation" from
  "scheduled sampling".

**Stored runs.**  :func:`measure` trains every variant with every seed and writes
:data:`RESULTS_PATH` (``minitf/course/l09_inference/results/exposure.json``), and the weights of
the runs the notebook looks at closely (:data:`STORED_MODELS`, beside it)::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l09_inference exposure --measure

The notebook and the figures (:mod:`minitf.course.l09_inference.figures_exposure`) read it
(:func:`load_results`); the notebook loads the stored weights (:func:`stored_model_run`) and
evaluates them again, which must give the stored numbers (:func:`compare_with_stored`);
``tests/course/l09/test_exposure.py`` trains runs again and compares numbers and weights.  In
float64 on one BLAS thread a run is deterministic.

======================================  ===================================================
what                                    where
======================================  ===================================================
the set-up                              :func:`exposure_task`, :func:`eval_pairs`,
                                        :func:`eval_batch`, :func:`model_config`,
                                        :func:`train_config`, :func:`policy`,
                                        :func:`run_variant`
the measurement                         :func:`error_by_position` (reuses Lesson 8's
                                        :func:`~minitf.course.kit.predictions.predict_both_ways`)
the stored runs                         :func:`measure`, :func:`load_results`,
                                        :func:`stored_runs`, :func:`seed_table`,
                                        :func:`compare_with_stored`
scheduled sampling, shown               :func:`mixing_example` (pass 1 and the mix on one
                                        example, position by position),
                                        :func:`schedule_curves` (eps_i over the updates)
======================================  ===================================================

Shapes: B batch, T target length (21 here, ``<eos>`` included), V vocabulary.
"""
from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...checks import check_choice, check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX, Batch
from ...models import EncoderDecoder
from ...scheduled_sampling import MixedInputs, ScheduledSampling, scheduled_sampling_inputs
from ...data.tasks import Task, get_task
from ...training import History, TrainConfig, sequence_metrics, train
from ..kit.runs import check_batch, check_model, lesson_model_config, lesson_train_config
from ..kit import stored
from ..kit.schedules import FINAL_EPS, SCHEDULES, schedule_for
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results
from ..kit.predictions import generated, predict_both_ways

__all__ = [
    "LENGTH", "N_SYMBOLS", "EVAL_SIZE", "EVAL_SEED", "STEPS", "SEEDS", "VARIANTS", "SCHEDULES", "FINAL_EPS",
    "RESULTS_PATH", "exposure_task", "eval_pairs", "eval_batch", "model_config", "train_config", "policy", "Run", "run_variant",
    "PositionErrors", "error_by_position", "run_numbers", "measure", "load_results", "stored_runs", "seed_table",
    "Match", "compare_with_stored", "MixRow", "mixing_example", "schedule_curves", "STORED_MODELS",
    "checkpoint_path", "write_checkpoint", "stored_model_run", "weight_difference",
]

# ---- the section's settings ------------------------------------------------------------------
LENGTH, N_SYMBOLS = 20, 12  # sort: sources of exactly 20 letters from 12 symbols
EVAL_SIZE, EVAL_SEED = 200, 90_000  # held-out pairs, never trained on
STEPS, BATCH_SIZE, LR, WARMUP = 300, 32, 3e-3, 20
MODEL = dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1, n_decoder_layers=1)  # Lesson 9's size
SEEDS = (0, 1, 2, 3, 4)
VARIANTS = {  # name -> (teacher-forcing schedule or None, updates)
    "teacher_forcing": (None, STEPS),
    "ss_linear": ("linear", STEPS),
    "ss_exponential": ("exponential", STEPS),
    "ss_inverse_sigmoid": ("inverse_sigmoid", STEPS),
    "teacher_forcing_400": (None, 400),
}
RESULTS_PATH = Path(__file__).resolve().with_name("results") / "exposure.json"
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l09_inference exposure --measure"
STORED_MODELS = (("teacher_forcing", 0), ("ss_linear", 0))  # (variant, seed) whose trained weights are stored beside RESULTS_PATH
CURVE_WINDOW = 25  # the stored loss curve: mean training loss over each 25 updates


# ---- the set-up --------------------------------------------------------------------------------
def exposure_task() -> Task:
    """``sort`` of exactly :data:`LENGTH` letters from :data:`N_SYMBOLS` symbols."""
    return get_task("sort", min_len=LENGTH, max_len=LENGTH, n_symbols=N_SYMBOLS)


def eval_pairs() -> list:
    """The :data:`EVAL_SIZE` held-out (source, target) pairs every model is measured on."""
    return exposure_task().dataset(EVAL_SIZE, seed=EVAL_SEED)


def eval_batch() -> Batch:
    """:func:`eval_pairs` as one batch: labels (200, 21), the last position ``<eos>``."""
    return exposure_task().batch(eval_pairs())


def model_config(seed: int, task: Task | None = None) -> ModelConfig:
    """Lesson 9's model size (D = 32, H = 2, F = 64, one block each side), float64, ``seed``."""
    return lesson_model_config(exposure_task() if task is None else task, seed, **MODEL)


def _variant(name: str) -> tuple:
    return VARIANTS[check_choice("variant", name, tuple(VARIANTS))]


def train_config(variant: str, seed: int) -> TrainConfig:
    """AdamW, batches of 32, warm-up of 20 updates then cosine decay from 3e-3, data order ``seed``."""
    _, steps = _variant(variant)
    return lesson_train_config(seed, steps=steps, batch_size=BATCH_SIZE, lr=LR, warmup=WARMUP, eval_every=0,
                               eval_size=16)


def policy(variant: str, seed: int) -> ScheduledSampling | None:
    """The variant's scheduled-sampling policy (argmax tokens, coins seeded by ``seed``), or None."""
    schedule, steps = _variant(variant)
    return None if schedule is None else ScheduledSampling(schedule_for(schedule, steps), rng=seed)


class Run(NamedTuple):
    """A trained model of the section (:func:`run_variant`)."""

    variant: str
    seed: int
    model: EncoderDecoder  # trained, in eval mode; shared by whoever asks: do not modify
    history: History
    cpu_seconds: float  # processor time of the training


@functools.lru_cache(maxsize=None)
def _run(variant: str, seed: int) -> Run:
    task = exposure_task()
    model = EncoderDecoder(model_config(seed, task))
    t0 = time.process_time()
    history = train(model, task, train_config(variant, seed), scheduled_sampling=policy(variant, seed),
                    held_out=[s for s, _ in eval_pairs()])
    model.eval()
    return Run(variant, seed, model, history, time.process_time() - t0)


def run_variant(variant: str = "teacher_forcing", seed: int = 0) -> Run:
    """Train one variant of :data:`VARIANTS` with ``seed`` (once per process; then the same run)."""
    _variant(variant)
    return _run(variant, check_int("seed", seed, low=0))


def checkpoint_path(variant: str, seed: int) -> Path:
    """Where the weights of a run of :data:`STORED_MODELS` are stored, beside :data:`RESULTS_PATH`."""
    if (variant, seed) not in STORED_MODELS:
        raise ValueError(f"variant, seed: only {list(STORED_MODELS)} are stored, got {(variant, seed)}")
    return RESULTS_PATH.with_name(f"exposure_{variant}_seed{seed}.npz")


def write_checkpoint(variant: str, seed: int) -> Path:
    """Train (:func:`run_variant`) and store the weights of one run of :data:`STORED_MODELS`;
    :func:`measure` calls it for each of them."""
    from ...checkpoint import save_model

    path = checkpoint_path(variant, seed)
    run = run_variant(variant, seed)
    save_model(path, run.model, exposure_task().tokenizer,
               extra={"variant": variant, "seed": seed, "command": COMMAND, "cpu_seconds": round(run.cpu_seconds, 2)})
    return path


@functools.lru_cache(maxsize=None)
def stored_model_run(variant: str = "ss_linear", seed: int = 0) -> Run:
    """A run of :data:`STORED_MODELS` from its stored weights, without training (once per
    process): the notebook shows it in less time than a training takes.  ``history`` is None;
    ``cpu_seconds`` is the training's, as the results file records it.
    ``tests/course/l09/test_exposure.py`` trains it again and compares the weights."""
    from ...checkpoint import load_model

    path = checkpoint_path(variant, seed)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no stored weights; run {COMMAND}")
    model, _ = load_model(path)
    return Run(variant, seed, model.eval(), None, float(stored_runs(load_results(), variant)[seed]["cpu_seconds"]))


def weight_difference(a: EncoderDecoder, b: EncoderDecoder) -> float:
    """max |a - b| over every parameter of two models of one config."""
    pa, pb = a.parameters(), b.parameters()
    if set(pa) != set(pb):
        raise ValueError(f"the models' parameters differ: {sorted(set(pa) ^ set(pb))}")
    return max(float(np.max(np.abs(pa[n] - pb[n]))) for n in pa)


# ---- the measurement ------------------------------------------------------------------------------
class PositionErrors(NamedTuple):
    """A model's error at each target position (arrays (T,), position 1 first)."""

    positions: np.ndarray  # (T,) 1..T; the last is <eos> here
    teacher_forced: np.ndarray  # (T,) share of examples whose argmax given the true prefix is wrong at t
    free_running: np.ndarray  # (T,) share whose greedy output (fed its own prefix) is wrong at t
    counts: np.ndarray  # (T,) examples with a target token at t
    teacher_forced_token_error: float  # over every target position
    free_running_token_error: float
    free_running_exact_match: float


def error_by_position(model: EncoderDecoder, batch: Batch, *, predictions=None) -> PositionErrors:
    """The error rate at each target position, teacher-forced and free-running.

    Both sides come from :func:`~minitf.course.kit.predictions.predict_both_ways` (as Lesson 8's)
    (or ``predictions``, its output): the argmax at t given the true prefix, and greedy
    decoding's token at t.  A free-running position after the output's ``<eos>`` is wrong
    (nothing was generated there).  Position t counts the examples whose target reaches t.
    """
    check_model(model)
    check_batch(batch)
    tf_pred, fr_pred = predict_both_ways(model, batch) if predictions is None else predictions
    labels = batch.labels  # (B, T)
    real = labels != IGNORE_INDEX  # (B, T)
    fr = generated(fr_pred, model.config.eos_id, labels.shape[1])  # (B, T), -1 where nothing was generated
    counts = real.sum(axis=0)  # (T,)
    tf_wrong = (tf_pred != labels) & real  # (B, T)
    fr_wrong = (fr != labels) & real  # (B, T)
    keep = counts > 0
    n = real.sum()
    return PositionErrors(np.arange(1, labels.shape[1] + 1)[keep], (tf_wrong.sum(0) / np.maximum(counts, 1))[keep],
                          (fr_wrong.sum(0) / np.maximum(counts, 1))[keep], counts[keep],
                          float(tf_wrong.sum() / n), float(fr_wrong.sum() / n),
                          sequence_metrics(fr_pred, labels, model.config.eos_id)["exact_match"])


def _round(values, digits: int = 6) -> list:
    return [round(float(v), digits) for v in np.asarray(values).ravel()]


def run_numbers(run: Run) -> dict:
    """What the results file keeps of a run: its errors by position and overall (6 digits; with
    200 examples each is a multiple of 1/200, exact), its loss curve (mean over each 25
    updates, 4 digits) and its processor time."""
    e = error_by_position(run.model, eval_batch())
    numbers = {"teacher_forced": _round(e.teacher_forced), "free_running": _round(e.free_running),
               "teacher_forced_token_error": round(e.teacher_forced_token_error, 6),
               "free_running_token_error": round(e.free_running_token_error, 6),
               "free_running_exact_match": round(e.free_running_exact_match, 6),
               "cpu_seconds": round(run.cpu_seconds, 2)}
    if run.history is not None:  # a stored model (stored_model_run) has no training history
        loss = np.asarray(run.history.loss)
        numbers["loss_curve"] = _round([loss[i:i + CURVE_WINDOW].mean() for i in range(0, len(loss), CURVE_WINDOW)], 4)
    return numbers


# ---- the results file ------------------------------------------------------------------------------
def _settings() -> dict:
    return {"task": {"name": "sort", "min_len": LENGTH, "max_len": LENGTH, "n_symbols": N_SYMBOLS},
            "eval": {"size": EVAL_SIZE, "seed": EVAL_SEED},
            "model": {**MODEL, "dtype": "float64"},
            "train": {"steps": STEPS, "batch_size": BATCH_SIZE, "optimizer": "adamw", "lr": LR,
                      "schedule": "warmup_cosine", "warmup": WARMUP, "clip_norm": 1.0, "weight_decay": 0.01},
            "variants": {name: {"schedule": None if s is None else schedule_for(s, steps).to_dict(), "steps": steps}
                         for name, (s, steps) in VARIANTS.items()},
            "scheduled_sampling": {"final_eps": FINAL_EPS, "choice": "argmax", "coins_seed": "the run's seed"},
            "seeds": list(SEEDS), "curve_window": CURVE_WINDOW}


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seeds=SEEDS, variants=tuple(VARIANTS), log=sys.stderr) -> dict:
    """Train every variant with every seed, measure :func:`run_numbers`, write ``path`` (None:
    nothing written) and return the dict."""
    clock = Stopwatch()
    runs: dict = {}
    for variant in variants:
        for seed in seeds:
            numbers = run_numbers(run_variant(variant, seed))
            runs.setdefault(variant, {})[str(seed)] = numbers
            if log is not None:
                print(f"{variant} seed {seed}: token error teacher-forced {numbers['teacher_forced_token_error']:.3f}, "
                      f"free-running {numbers['free_running_token_error']:.3f} ({numbers['cpu_seconds']:.1f} s)",
                      file=log, flush=True)
    results = {
        "about": ("Lesson 9 section 6's stored runs: sort of 20 letters, a small encoder-decoder trained with teacher "
                  "forcing and with scheduled sampling, every variant with every seed; the error at each target "
                  "position on 200 held-out pairs, teacher-forced and free-running (greedy).  Written by "
                  "minitf.course.l09_inference.exposure.measure."),
        **provenance(COMMAND), **clock.seconds(),
        "settings": _settings(),
        "positions": list(range(1, LENGTH + 2)),
        "runs": runs,
    }
    if path is not None:
        write_results(path, results)
        for variant, seed in STORED_MODELS:
            if variant in variants and seed in seeds:
                write_checkpoint(variant, seed)
    return results


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    """The stored runs (:func:`measure` wrote them)."""
    return stored.load_results(path, COMMAND)


stored_runs = stored.stored_runs  # {seed: run numbers} of one variant in the stored results


def seed_table(results: dict, field: str = "free_running_token_error", baseline: str = "teacher_forcing") -> dict:
    """``{variant: (values by seed (n_seeds,), differences from baseline by seed (n_seeds,))}``
    of a scalar ``field``; a seed's difference is paired: same initialisation and data order."""
    base = stored_runs(results, baseline)
    table = {}
    for variant in results["runs"]:
        runs = stored_runs(results, variant)
        seeds = sorted(runs)
        values = np.array([runs[s][field] for s in seeds])
        table[variant] = (values, values - np.array([base[s][field] for s in seeds]))
    return table


Match = stored.Match  # a live run against its stored numbers


def compare_with_stored(run: Run, results: dict) -> Match:
    """Compare a live :func:`run_variant` with the same variant and seed in ``results``
    (:func:`minitf.course.kit.stored.compare_run`): the errors by position equal (as stored,
    6 digits), the loss curve within 1e-4 (its 4 stored digits)."""
    errors = ("teacher_forced", "free_running")  # the errors by position
    fields = {"errors": (errors, 0.0)}
    if run.history is not None:  # a stored model has its weights, not its training's loss curve
        fields["loss_curve"] = (("loss_curve",), 1e-4)
    return stored.compare_run(run.variant, run.seed, run_numbers(run), stored_runs(results, run.variant)[run.seed],
                              fields)


# ---- scheduled sampling, shown ----------------------------------------------------------------------
class MixRow(NamedTuple):
    """One decoder position of :func:`mixing_example`."""

    t: int  # decoder position, 0 = <bos>
    gold: str  # the gold input at t: y_{t-1}
    predicted: str  # pass 1's prediction at t-1 (argmax given the gold prefix): the candidate for t
    coin_gold: bool  # what the draw said (position 0 is always gold)
    fed: str  # what pass 2 is fed at t
    label: str  # what pass 2 is scored on at t: y_t


def mixing_example(model: EncoderDecoder, batch: Batch, eps: float, seed: int = 0, row: int = 0) -> list:
    """Pass 1 and the mix of :func:`minitf.scheduled_sampling.scheduled_sampling_inputs` on
    ``batch`` at gold probability ``eps`` (argmax, coins from ``seed``), read off for one
    ``row``, position by position: a list of :class:`MixRow` (padding left out)."""
    check_model(model)
    check_batch(batch)
    mix: MixedInputs = scheduled_sampling_inputs(model, batch, ScheduledSampling(eps, rng=seed))
    name = exposure_task().tokenizer.id_to_token
    real = batch.decoder_input_ids[row] != model.config.pad_id
    return [MixRow(t, name(int(batch.decoder_input_ids[row, t])), name(int(mix.own[row, t])) if t else "",
                   bool(mix.gold[row, t]), name(int(mix.decoder_input_ids[row, t])), name(int(batch.labels[row, t])))
            for t in np.flatnonzero(real)]


def schedule_curves(steps: int = STEPS) -> dict:
    """``{name: eps (steps,)}``: the gold probability at each update 1..steps of the three
    schedules the section trains with (:func:`minitf.course.l01_seq2seq.schedule_for`)."""
    steps = check_int("steps", steps, low=4)
    out = {}
    for name in SCHEDULES:
        schedule = schedule_for(name, steps)
        out[name] = np.array([schedule(i) for i in range(1, steps + 1)])
    return out


# ---- the command -------------------------------------------------------------------------------------
def main(argv=None) -> int:
    return stored.measure_main(argv, module="minitf.course.l09_inference.exposure", measure=measure,
                               default_out=RESULTS_PATH,
                               description="Lesson 9 section 6's stored runs "
                                           "(minitf/course/l09_inference/results/exposure.json).")

