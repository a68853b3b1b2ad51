"""Lesson 1's sweep: the task, the models it trains and the stored results of training them.

A model is named by a :class:`Variant` (width, conditioning, reversal, attention, scheduled
sampling, steps) and a seed; :func:`run_variant` trains it once per process (an LSTM
:class:`~minitf.models.RNNSeq2Seq` in float64, by :func:`minitf.training.train`) and
:func:`evaluate_by_length` measures it on held-out pairs of every source length.
:func:`minitf.course.l01_seq2seq.measure` writes the sweep's numbers to :data:`RESULTS_PATH`;
:func:`load_results`, :func:`stored_runs`, :func:`seed_mean` read them back and
:func:`compare_with_stored` checks a live run against them.  Everything here is re-exported
by :mod:`minitf.course.l01_seq2seq`, which holds the measurements of each section.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...checks import check_choice, check_int
from ...data import IGNORE_INDEX
from ...decoding import greedy_search
from ...models import RNNSeq2Seq
from ...models.rnn_seq2seq import default_rnn_config
from ...rnn import RNNConfig, ScheduledSampling
from ...data.tasks import Task, get_task
from ...training import History, TrainConfig, make_optimizer, sequence_metrics, token_accuracy, train
from ..kit import stored
from ..kit.schedules import SCHEDULES, schedule_for
from ..kit.stored import one_blas_thread


# ---- the lesson's settings ----------------------------------------------------------------------
MIN_LEN, MAX_LEN, N_SYMBOLS = 3, 12, 12  # copy: sources of 3..12 letters from 12 symbols
EVAL_PER_LENGTH = 40  # held-out pairs per source length, never trained on
EVAL_SEED = 1000  # the pairs of length n: copy(n..n).dataset(EVAL_PER_LENGTH, seed=EVAL_SEED + n)
EMBEDDING = 32  # E
REFERENCE_WIDTH = 64  # d of the lesson's reference model
STEPS = 300  # AdamW updates of 32 pairs per run (LONG_STEPS: four times as many)
LONG_STEPS = 1200
BATCH_SIZE, LR, WARMUP = 32, 1e-2, 20
WIDTHS = (16, 32, 64, 128)  # d of the width sweep
SEEDS = (0, 1, 2)  # every variant of the sweep is trained with each
ATTENTIONS = ("additive", "dot", "general")
ATTENTION_FEEDS = {"additive": "input", "dot": "output", "general": "output"}
"""Where each score's context goes: as in the paper that introduced it (Bahdanau et al. 2015
feed it to the step's input; Luong et al. 2015 combine it with the new state)."""
RESULTS_PATH = Path(__file__).resolve().with_name("results") / "sweep.json"
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l01_seq2seq --measure"
CURVE_WINDOW = 25  # the stored loss curve: mean training loss over each 25 updates


def lesson1_task(min_len: int = MIN_LEN, max_len: int = MAX_LEN) -> Task:
    """``copy`` (``fbhad -> fbhad``) on strings of ``min_len``..``max_len`` of 12 letters."""
    return get_task("copy", min_len=min_len, max_len=max_len, n_symbols=N_SYMBOLS)


def eval_pairs() -> list:
    """The held-out pairs: :data:`EVAL_PER_LENGTH` of every length 3..12, shortest first (400)."""
    pairs = []
    for n in range(MIN_LEN, MAX_LEN + 1):
        pairs += lesson1_task(n, n).dataset(EVAL_PER_LENGTH, seed=EVAL_SEED + n)
    return pairs


# ---- a model of the sweep ---------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """One kind of model of the lesson: an LSTM encoder-decoder of hidden width d.

    ``conditioning``: "init" (the encoder's final h and c start the decoder) or "concat"
    (its h joins the decoder's input at every step); ``attention``: "none", or a score of
    :data:`ATTENTIONS` over every encoder state; ``schedule``: None (plain teacher forcing) or
    scheduled sampling with a schedule of :data:`SCHEDULES` (:func:`schedule_for`)."""

    hidden_size: int = REFERENCE_WIDTH
    conditioning: str = "init"
    reverse_source: bool = False
    attention: str = "none"
    schedule: str | None = None
    steps: int = STEPS

    def __post_init__(self):
        check_int("hidden_size", self.hidden_size, low=1)
        check_choice("conditioning", self.conditioning, ("init", "concat"))
        check_choice("attention", self.attention, ("none",) + ATTENTIONS)
        if self.schedule is not None:
            check_choice("schedule", self.schedule, SCHEDULES)
        check_int("steps", self.steps, low=4)

    @property
    def name(self) -> str:
        """The key of the stored results: ``d64-init``, ``d64-init-reversed``, ``d64-init-additive``,
        ``d64-init-ss_linear``, ``d64-init-1200steps`` ..."""
        parts = [f"d{self.hidden_size}", self.conditioning]
        parts += ["reversed"] if self.reverse_source else []
        parts += [self.attention] if self.attention != "none" else []
        parts += [f"ss_{self.schedule}"] if self.schedule else []
        parts += [f"{self.steps}steps"] if self.steps != STEPS else []
        return "-".join(parts)

    def model_config(self, task: Task, seed: int) -> RNNConfig:
        """LSTM encoder and decoder, one layer each, E = 32, float64, initialised with ``seed``."""
        extra = {} if self.attention == "none" else dict(attention=self.attention,
                                                          attention_feed=ATTENTION_FEEDS[self.attention])
        return default_rnn_config(task, cell="lstm", embedding_size=EMBEDDING, hidden_size=self.hidden_size,
                                  conditioning=self.conditioning, reverse_source=self.reverse_source,
                                  dtype="float64", seed=seed, **extra)

    def train_config(self, seed: int) -> TrainConfig:
        """AdamW, batches of 32, warm-up of 20 updates then cosine decay from 1e-2, data order ``seed``."""
        return TrainConfig(steps=self.steps, batch_size=BATCH_SIZE, lr=LR, warmup=WARMUP, eval_every=0,
                           eval_size=16, seed=seed, progress=False)

    def policy(self, seed: int) -> ScheduledSampling | None:
        """The teacher-forcing policy of training (its coins seeded by ``seed``), or None."""
        return None if self.schedule is None else ScheduledSampling(schedule_for(self.schedule, self.steps),
                                                                    rng=seed)


REFERENCE = Variant()  # d = 64, init, source read forwards, no attention, teacher forcing
REVERSED = Variant(reverse_source=True)
ATTENTION = Variant(attention="additive")
SCHEDULED = Variant(schedule="inverse_sigmoid")

SWEEP: tuple[Variant, ...] = (
    *(Variant(hidden_size=d, conditioning=c) for d in WIDTHS for c in ("init", "concat")),
    *(Variant(hidden_size=d, reverse_source=True) for d in WIDTHS),
    *(Variant(attention=a) for a in ATTENTIONS),
    *(Variant(schedule=s) for s in SCHEDULES),
    Variant(steps=LONG_STEPS), Variant(schedule="inverse_sigmoid", steps=LONG_STEPS),
)
"""Every variant :func:`measure` trains, each with every seed of :data:`SEEDS`."""


class LengthMetrics(NamedTuple):
    """A model's accuracy on :func:`eval_pairs`, by source length (arrays over lengths 3..12)."""

    lengths: np.ndarray  # (10,) n = 3..12
    free_running_token: np.ndarray  # (10,) greedy output: share of target positions right (<eos> included)
    free_running_exact: np.ndarray  # (10,) greedy output: share of outputs exactly right
    teacher_forced_token: np.ndarray  # (10,) fed the gold prefix: share of positions whose argmax is right
    teacher_forced_sequence: np.ndarray  # (10,) fed the gold prefix: share of targets with every argmax right


def evaluate_by_length(model: RNNSeq2Seq, pairs: list | None = None) -> LengthMetrics:
    """Free-running (greedy, :func:`minitf.decoding.greedy_search`, at most MAX_LEN + 2 tokens)
    and teacher-forced accuracy of ``model`` on ``pairs`` (default :func:`eval_pairs`), by
    source length."""
    pairs = eval_pairs() if pairs is None else pairs
    task = lesson1_task()
    batch = task.batch(pairs)
    with model.evaluating():
        pred = greedy_search(model, batch.input_ids, max_new_tokens=MAX_LEN + 2).sequences  # (B, <= 14)
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V) teacher-forced
    real = batch.labels != IGNORE_INDEX  # (B, T)
    right = (logits.argmax(-1) == batch.labels) & real  # (B, T) for the whole-sequence accuracy
    n_of = np.array([len(s) for s, _ in pairs])
    lengths = np.unique(n_of)
    out = {k: [] for k in LengthMetrics._fields[1:]}
    for n in lengths:
        rows = n_of == n
        m = sequence_metrics(pred[rows], batch.labels[rows], model.config.eos_id)
        out["free_running_token"].append(m["token_accuracy"])
        out["free_running_exact"].append(m["exact_match"])
        out["teacher_forced_token"].append(token_accuracy(logits[rows], batch.labels[rows]))
        out["teacher_forced_sequence"].append(np.mean(right[rows].sum(1) == real[rows].sum(1)))
    return LengthMetrics(lengths, *(np.array(v, dtype=np.float64) for v in out.values()))


class Run(NamedTuple):
    """A trained model of the lesson (:func:`run_variant`)."""

    variant: Variant
    seed: int
    model: RNNSeq2Seq  # trained, eval mode, float64; shared by whoever asks: do not modify
    history: History
    metrics: LengthMetrics
    cpu_seconds: float  # processor time of the training (time.process_time)


_RUNS: dict = {}


@one_blas_thread
def run_variant(variant: Variant = REFERENCE, seed: int = 0) -> Run:
    """Train ``variant`` with ``seed`` (initialisation, data order, and scheduled sampling's
    coins) on :func:`lesson1_task`, holding out :func:`eval_pairs`; once per process and
    (variant, seed): a second call returns the same run.  ``run_variant.cache_clear()``
    forgets them."""
    if not isinstance(variant, Variant):
        raise TypeError(f"variant: expected a l01_seq2seq.Variant, got {type(variant).__name__}")
    seed = check_int("seed", seed, low=0)
    key = (variant, seed)
    if key not in _RUNS:
        task = lesson1_task()
        model = RNNSeq2Seq(variant.model_config(task, seed), scheduled_sampling=variant.policy(seed))
        cfg = variant.train_config(seed)
        t0 = time.process_time()
        history = train(model, task, cfg, optimizer=make_optimizer(model.parameters(), cfg),
                        held_out=[s for s, _ in eval_pairs()])
        cpu = time.process_time() - t0
        model.eval()
        _RUNS[key] = Run(variant, seed, model, history, evaluate_by_length(model), cpu)
    return _RUNS[key]


run_variant.cache_clear = _RUNS.clear


def _round(values, digits: int) -> list:
    return [round(float(v), digits) for v in np.asarray(values).ravel()]


def _significant(values, digits: int = 6) -> list:
    return [float(f"{float(v):.{digits}g}") for v in np.asarray(values).ravel()]


def run_numbers(run: Run) -> dict:
    """What the results file keeps of a run: its accuracies by length (rounded to 6 digits;
    free-running ones are multiples of 1/40, exact), its loss curve (mean training loss over
    each 25 updates, 4 digits), and its training time."""
    m = run.metrics
    loss = np.asarray(run.history.loss)
    curve = [loss[i:i + CURVE_WINDOW].mean() for i in range(0, len(loss), CURVE_WINDOW)]
    return {**{field: _round(getattr(m, field), 6) for field in LengthMetrics._fields[1:]},
            "loss_curve": _round(curve, 4), "cpu_seconds": round(run.cpu_seconds, 2)}


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    """The stored sweep (:func:`measure` wrote it)."""
    return stored.load_results(path, COMMAND)


def stored_runs(results: dict, variant: Variant | str) -> dict:
    """``{seed: run numbers}`` of one variant in ``results`` (seeds as ints)."""
    return stored.stored_runs(results, variant.name if isinstance(variant, Variant) else variant)


def seed_mean(results: dict, variant: Variant | str, field: str = "free_running_token") -> tuple:
    """(mean over seeds, min over seeds, max over seeds) of ``field``, each an array over lengths."""
    rows = np.array([r[field] for r in stored_runs(results, variant).values()])  # (seeds, lengths)
    return rows.mean(0), rows.min(0), rows.max(0)


Match = stored.Match  # a live run against its stored numbers


def compare_with_stored(run: Run, results: dict) -> Match:
    """Compare a live :func:`run_variant` with the same variant and seed in ``results``
    (:func:`minitf.course.kit.stored.compare_run`): every accuracy by length equal (as stored,
    6 digits), the loss curve within 1e-4 (its 4 stored digits)."""
    accuracies = LengthMetrics._fields[1:]  # every accuracy by length
    return stored.compare_run(run.variant.name, run.seed, run_numbers(run), stored_runs(results, run.variant)[run.seed],
                              {"accuracies": (accuracies, 0.0), "loss_curve": (("loss_curve",), 1e-4)})
