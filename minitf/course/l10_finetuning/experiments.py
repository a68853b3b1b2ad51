"""Lesson 10 (*Fine-tuning on supervised pairs*): the pretrained checkpoint, the stored sweep, the live runs.

The downstream task is :class:`~minitf.data.corpus.TenseTask` (``past->present``: rewrite a
sentence of the course's small language in the present tense, each verb agreeing with its own
subject).  The model is :func:`minitf.pretraining.model_config`'s small encoder-decoder
(D = 64, 4 heads, 2 + 2 layers, shared and tied embeddings, float32).  The pretrained weights
come from BART denoising (:class:`~minitf.data.corpus.DenoisingTask` ``"bart"``: text infilling
and sentence permutation) on the same language, with every sentence of the downstream
evaluation sets (both tenses, every seed of the sweep) held out of pretraining
(:func:`held_out`).

**The pretrained checkpoint** (:data:`CHECKPOINT_PATH`,
``minitf/course/l10_finetuning/results/pretrained.npz``, about 1 MB: float32 weights, no optimizer
state) is written by one command::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l10_finetuning pretrain

(:func:`pretrain_checkpoint`: :data:`PRETRAIN_STEPS` steps of :func:`minitf.pretraining.pretrain`
from a model initialised with seed :data:`PRETRAIN_SEED`; the checkpoint records the run's wall
and processor time: 59.5 s and 24.6 s on the machine that wrote it).
:func:`pretrained_model` loads it.  How ``tests/course/l10/test_experiments.py`` checks that the file
is what the command produces, without repeating the whole run:

* the run's beginning: the command records a fingerprint of every parameter after
  :data:`PROBE_STEP` updates (:func:`fingerprint`: its sum of squares and a fixed random
  projection); the test re-runs the command's code for those first steps
  (:func:`pretrain_checkpoint` with ``stop_at=PROBE_STEP``) and compares (float32, relative
  1e-4), together with the recorded losses of those steps;
* the run's end: the checkpoint records the evaluation :func:`minitf.training.train` made
  at its last step (teacher-forced loss and accuracy, free-running exact match on the
  denoising evaluation set); the test evaluates the stored weights again and must get the
  same numbers, so the weights are the ones that run ended with;
* the settings: the recorded training config, model config, seed and held-out digest are
  the module's.

What this does not prove: that steps ``PROBE_STEP + 1 .. PRETRAIN_STEPS`` were the command's
and not some other training that happens to end at the recorded evaluation.  Re-running them
all takes as long as the command: ``python -m minitf.course.l10_finetuning pretrain --out /tmp/x.npz`` and compare.

**The stored sweep** (:data:`RESULTS_PATH`, ``minitf/course/l10_finetuning/results/sweep.json``) is too much
training for a notebook (47 fine-tuning runs, about 300 steps each).  ``python -m minitf.course.l10_finetuning sweep``
runs every :func:`sweep_runs` item (each cached in a work directory, so the sweep can run in
parts, ``--part i/n``, and be resumed) and ``python -m minitf.course.l10_finetuning assemble`` writes
the file.  Each run is :func:`run_finetune`; its *seed* fixes the set of supervised pairs
(``pairs_seed``), the data order and the evaluation set (``TrainConfig.seed``: 256 held-out
pairs drawn with ``seed + 10_000``) and, from scratch, the initial weights.  Every seed
fine-tunes the *same* pretrained checkpoint: the spread over seeds is the spread of
fine-tuning, not of pretraining (one pretraining run).  The notebook re-runs a short
fine-tune live and compares it with the stored one (:func:`compare_with_stored`).

======================================  ===================================================
section of Lesson 10                    here
======================================  ===================================================
1  the same loss on real pairs          :func:`downstream_task`, :func:`pretrained_model`,
                                        :func:`loss_on`
2  pretrained vs from scratch           :func:`sample_efficiency_table`, :func:`summary`
3  what to update                       the frozen-encoder runs, :func:`lr_table`
4  evaluate with a self-fed run         :func:`history`, :func:`early_stopping_picks`
5  overfitting and the held-out set     the ``overfit`` runs (:func:`history`)
======================================  ===================================================
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from ...checkpoint import load_checkpoint, load_model, save_checkpoint
from ...checks import check_choice, check_int
from ...data.corpus import DenoisingTask, TenseTask
from ...models import EncoderDecoder
from ...pretraining import FewPairs, finetune, held_out_sentences, model_config, pretrain
from ...data.tasks import Task
from ...training import TrainConfig, eval_pairs, evaluate, forward_loss
from ..kit import stored
from ..kit.stored import Stopwatch, provenance, write_results

__all__ = ["RESULTS_PATH", "CHECKPOINT_PATH", "OBJECTIVE", "PRETRAIN_STEPS", "PRETRAIN_SEED", "PROBE_STEP",
           "N_PAIRS", "SEEDS", "STEPS", "BATCH", "LR", "WARMUP", "EVAL_SIZE", "HISTORY_EVERY", "OVERFIT_PAIRS",
           "OVERFIT_STEPS", "OVERFIT_EVERY", "LR_GRID", "LIVE", "LIVE_SCRATCH", "downstream_task", "held_out",
           "pretrain_config", "finetune_config", "pretraining_task", "pretrain_checkpoint", "pretrained_model",
           "checkpoint_record", "fresh_model", "fingerprint", "generate", "run_finetune", "sweep_runs", "load_results",
           "sample_efficiency_table", "summary", "gaps", "history", "early_stopping_picks", "early_stopping_table",
           "lr_table", "pairs_trained_on", "compare_with_stored", "loss_on", "main"]

RESULTS_DIR = Path(__file__).resolve().with_name("results")
RESULTS_PATH = RESULTS_DIR / "sweep.json"
CHECKPOINT_PATH = RESULTS_DIR / "pretrained.npz"
WORK_DIR = Path(os.environ.get("MINITF_LESSON10_WORK", Path(tempfile.gettempdir()) / "minitf_lesson10"))

# pretraining
OBJECTIVE = "bart"
PRETRAIN_STEPS, PRETRAIN_BATCH, PRETRAIN_LR, PRETRAIN_WARMUP = 600, 32, 2e-3, 50
PRETRAIN_SEED = 0
PROBE_STEP = 12
# fine-tuning
N_PAIRS = (100, 300, 1000)
SEEDS = (0, 1, 2)
STEPS, BATCH, LR, WARMUP, EVAL_SIZE = 300, 32, 1e-3, 30, 256
HISTORY_EVERY = 25  # evaluations along the n = 100 runs (early stopping)
OVERFIT_PAIRS, OVERFIT_STEPS, OVERFIT_EVERY = 20, 300, 20
LR_GRID = ((3e-4, WARMUP), (3e-3, WARMUP), (1e-2, WARMUP), (LR, 0), (1e-2, 0))
LIVE = dict(init="bart", n_pairs=100, seed=0, steps=60, warmup=10)  # the notebook's live runs
LIVE_SCRATCH = {**LIVE, "init": "scratch"}


def downstream_task() -> TenseTask:
    """The supervised task: past -> present on the course's language."""
    return TenseTask(direction="past->present")


def finetune_config(seed: int, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP,
                    eval_every: int = 0) -> TrainConfig:
    """Fine-tuning's settings: AdamW, warm-up then cosine decay, batches of :data:`BATCH`,
    evaluation on :data:`EVAL_SIZE` held-out pairs drawn with ``seed + 10_000``."""
    return TrainConfig(steps=steps, batch_size=BATCH, lr=lr, warmup=warmup, eval_every=eval_every,
                       eval_size=EVAL_SIZE, seed=seed, progress=False)


def pretrain_config() -> TrainConfig:
    return TrainConfig(steps=PRETRAIN_STEPS, batch_size=PRETRAIN_BATCH, lr=PRETRAIN_LR, warmup=PRETRAIN_WARMUP,
                       eval_every=100, eval_size=128, seed=PRETRAIN_SEED, progress=False)


@functools.lru_cache(maxsize=1)
def held_out() -> frozenset:
    """Every sentence (both tenses) of the downstream evaluation sets of :data:`SEEDS`: no
    pretraining document contains one, so fine-tuned models are scored on unseen sentences."""
    task = downstream_task()
    return frozenset().union(*(held_out_sentences(task, finetune_config(s)) for s in SEEDS))


def _digest(texts) -> str:
    return hashlib.sha256("\n".join(sorted(texts)).encode()).hexdigest()[:16]


def pretraining_task() -> DenoisingTask:
    return DenoisingTask(OBJECTIVE, held_out=held_out())


# ---- the pretrained checkpoint -------------------------------------------------------------------------
def fingerprint(model) -> dict:
    """Per parameter: [sum of squares, projection on a fixed random vector] (float64), a
    compact check that two runs reached the same weights."""
    out = {}
    for name, p in sorted(model.parameters().items()):
        v = np.asarray(p, dtype=np.float64).ravel()
        seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
        r = np.random.default_rng(seed).standard_normal(v.size)
        out[name] = [float(v @ v), float(v @ r)]
    return out


class _StopAt(Exception):
    pass


class _Probe(Task):
    """``task`` as :func:`minitf.training.train` sees it, plus a look at the model when step
    ``k + 1`` asks for its batch (after ``k`` updates): the :func:`fingerprint` is recorded, and
    with ``stop`` training ends there."""

    def __init__(self, task: Task, model, k: int, stop: bool = False):
        self.task, self.model, self.k, self.stop = task, model, k, stop
        self.name, self.tokenizer, self.config = task.name, task.tokenizer, task.config
        self.max_source_len, self.max_target_len = task.max_source_len, task.max_target_len
        self.fingerprint = None

    def sample(self, n, rng):
        return self.task.sample(n, rng)

    def dataset(self, n, seed):
        return self.task.dataset(n, seed)

    def batch(self, pairs):
        return self.task.batch(pairs)

    def batches(self, batch_size, rng, exclude=()):
        for i, b in enumerate(self.task.batches(batch_size, rng, exclude=exclude)):
            if i == self.k:
                self.fingerprint = fingerprint(self.model)
                if self.stop:
                    raise _StopAt
            yield b


def pretrain_checkpoint(path=CHECKPOINT_PATH, *, stop_at: int | None = None, log=sys.stderr) -> dict:
    """The command ``python -m minitf.course.l10_finetuning pretrain``: pretrain, write ``path``.

    With ``stop_at=k`` nothing is written: the same run stops after ``k`` updates and the
    :func:`fingerprint` of the weights then is returned (``{"fingerprint": ...}``), for the test.
    """
    task = pretraining_task()
    model = EncoderDecoder(model_config(task, seed=PRETRAIN_SEED))
    probe = _Probe(task, model, PROBE_STEP if stop_at is None else check_int("stop_at", stop_at, low=0),
                   stop=stop_at is not None)
    cfg = pretrain_config()
    clock = Stopwatch()
    try:
        hist = pretrain(model, probe, cfg)
    except _StopAt:
        return {"fingerprint": probe.fingerprint}
    extra = {"tokenizer": task.tokenizer.to_dict(), "task": task.name, "task_config": task.config,
             "held_out_digest": _digest(held_out()), "held_out_count": len(held_out()),
             "probe_step": PROBE_STEP, "probe_fingerprint": probe.fingerprint,
             "loss": [round(float(x), 6) for x in hist.loss], "evals": hist.evals,
             **provenance("OPENBLAS_NUM_THREADS=1 python -m minitf.course.l10_finetuning pretrain"), **clock.seconds()}
    save_checkpoint(path, config={"model": model.config.to_dict(), "train": cfg.to_dict()},
                    params=model.parameters(), extra=extra)
    if log is not None:
        e = hist.evals[-1]
        print(f"wrote {path}: loss {hist.loss[-1]:.3f}, denoising free-running exact match "
              f"{e['free_running_exact_match']:.3f} ({extra['wall_seconds']:.0f} s)", file=log, flush=True)
    return extra


def pretrained_model(path=CHECKPOINT_PATH) -> EncoderDecoder:
    """A fresh copy of the pretrained model (each call loads the file again: fine-tuning
    changes the weights in place)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no pretrained checkpoint; run OPENBLAS_NUM_THREADS=1 python -m "
                                f"minitf.course.l10_finetuning pretrain")
    return load_model(path)[0]


def checkpoint_record(path=CHECKPOINT_PATH) -> dict:
    """What the pretraining command recorded in the checkpoint (``extra``) and its configs."""
    ck = load_checkpoint(path)
    return {**ck.extra, "config": ck.config}


def fresh_model(seed: int) -> EncoderDecoder:
    """The same architecture, randomly initialised with ``seed``: fine-tuning from scratch."""
    return EncoderDecoder(model_config(pretraining_task(), seed=seed))


def loss_on(model, pairs, task: Task) -> float:
    """The teacher-forced cross-entropy of ``model`` on ``pairs`` (Lesson 8's loss, unchanged)."""
    with model.evaluating():
        return float(forward_loss(model, task.batch(pairs))[0])


def generate(model, pairs, task: Task | None = None) -> list[str]:
    """The model's greedy (free-running) outputs for the sources of ``pairs``, as text."""
    task = downstream_task() if task is None else task
    predictions = evaluate(model, task.batch(pairs))["predictions"]
    return [task.tokenizer.decode(row) for row in predictions]


# ---- fine-tuning runs -----------------------------------------------------------------------------------
def _key(spec: dict) -> str:
    return "-".join(f"{k}={spec[k]}" for k in sorted(spec))


def run_finetune(init: str = "bart", n_pairs: int = 100, seed: int = 0, *, freeze_encoder: bool = False,
                 steps: int = STEPS, lr: float = LR, warmup: int = WARMUP, eval_every: int = 0,
                 group: str = "", model=None) -> dict:
    """Fine-tune from the pretrained checkpoint (``init="bart"``) or from scratch
    (``"scratch"``) on ``n_pairs`` supervised pairs; returns the run's numbers: the final
    free-running and teacher-forced metrics, each evaluation, the training loss per step."""
    check_choice("init", init, ("bart", "scratch"))
    if model is None:
        model = pretrained_model() if init == "bart" else fresh_model(seed)
    cfg = finetune_config(seed, steps=steps, lr=lr, warmup=warmup, eval_every=eval_every)
    clock = Stopwatch()
    h = finetune(model, downstream_task(), cfg, n_pairs=n_pairs, pairs_seed=seed, freeze_encoder=freeze_encoder)
    last = h.evals[-1]
    r6 = lambda x: round(float(x), 6)  # noqa: E731
    return {"group": group, "init": init, "n_pairs": n_pairs, "seed": seed, "freeze_encoder": freeze_encoder,
            "steps": steps, "lr": lr, "warmup": warmup, "eval_every": eval_every,
            "exact_match": r6(last["free_running_exact_match"]),
            "token_accuracy": r6(last["free_running_token_accuracy"]),
            "teacher_forced_loss": r6(last["teacher_forced_loss"]),
            "teacher_forced_token_accuracy": r6(last["teacher_forced_token_accuracy"]),
            "train_loss_last10": r6(np.mean(h.loss[-10:])),
            "loss": [r6(x) for x in h.loss],
            "evals": [{k: (v if k == "step" else r6(v)) for k, v in e.items()} for e in h.evals],
            **clock.seconds()}


def sweep_runs() -> list[dict]:
    """Every run of the stored sweep, most important first: (keyword arguments of :func:`run_finetune`)."""
    runs = []
    for n in N_PAIRS:
        for seed in SEEDS:
            for init in ("bart", "scratch"):
                runs.append(dict(group="sample_efficiency", init=init, n_pairs=n, seed=seed,
                                 eval_every=HISTORY_EVERY if n == N_PAIRS[0] else 0))
    runs.append(dict(group="live", **LIVE))
    for seed in SEEDS:
        runs.append(dict(group="overfit", init="bart", n_pairs=OVERFIT_PAIRS, seed=seed, steps=OVERFIT_STEPS,
                         eval_every=OVERFIT_EVERY))
    for n in N_PAIRS:
        for seed in SEEDS:
            runs.append(dict(group="frozen", init="bart", n_pairs=n, seed=seed, freeze_encoder=True,
                             eval_every=HISTORY_EVERY if n == N_PAIRS[0] else 0))
    for seed in SEEDS:
        for lr, warmup in LR_GRID:
            runs.append(dict(group="lr", init="bart", n_pairs=N_PAIRS[0], seed=seed, lr=lr, warmup=warmup))
    runs.append(dict(group="live", **LIVE_SCRATCH))
    return runs


def _work_file(spec: dict) -> Path:
    return WORK_DIR / (hashlib.sha256(_key(spec).encode()).hexdigest()[:16] + ".json")


def sweep(part: tuple[int, int] = (0, 1), log=sys.stderr) -> None:
    """Run this part's share of :func:`sweep_runs` (every ``n``-th, from the ``i``-th), each
    written to the work directory as it finishes; runs already there are skipped."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    i, n = part
    for spec in sweep_runs()[i::n]:
        f = _work_file(spec)
        if f.exists():
            continue
        r = run_finetune(**spec)
        f.write_text(json.dumps(r) + "\n")
        if log is not None:
            print(f"{_key(spec)}: exact {r['exact_match']:.3f} tok {r['token_accuracy']:.3f} "
                  f"tf_loss {r['teacher_forced_loss']:.3f} ({r['wall_seconds']:.0f} s)", file=log, flush=True)


def assemble(path=RESULTS_PATH, log=sys.stderr) -> dict:
    """Gather the finished runs from the work directory into ``path``; runs not finished are
    listed under ``missing``."""
    runs, missing = [], []
    for spec in sweep_runs():
        f = _work_file(spec)
        (runs.append(json.loads(f.read_text())) if f.exists() else missing.append(spec))
    rec = checkpoint_record()
    results = {
        "about": ("Lesson 10's stored sweep: fine-tuning the pretrained checkpoint (BART denoising) or a fresh "
                  "model on the tense task's supervised pairs.  Each seed fixes the pair set, the data order, the "
                  "evaluation set and (from scratch) the initial weights; every seed fine-tunes the same "
                  "pretrained checkpoint.  Written by minitf.course.l10_finetuning (sweep, then assemble)."),
        **provenance("OPENBLAS_NUM_THREADS=1 python -m minitf.course.l10_finetuning sweep && "
                     "python -m minitf.course.l10_finetuning assemble"),
        "settings": {"task": "tense past->present", "n_pairs": list(N_PAIRS), "seeds": list(SEEDS),
                     "finetune": finetune_config(0).to_dict() | {"seed": "the run's seed"},
                     "history_every": HISTORY_EVERY,
                     "overfit": {"n_pairs": OVERFIT_PAIRS, "steps": OVERFIT_STEPS, "eval_every": OVERFIT_EVERY},
                     "lr_grid": [list(x) for x in LR_GRID], "live": LIVE,
                     "pretrained": {"objective": OBJECTIVE, "steps": PRETRAIN_STEPS,
                                    "held_out_digest": rec["held_out_digest"],
                                    "final_eval": rec["evals"][-1]}},
        "cpu_seconds": round(sum(r["cpu_seconds"] for r in runs), 1),
        "runs": runs, "missing": missing,
    }
    write_results(path, results)
    if log is not None:
        print(f"wrote {path}: {len(runs)} runs, {len(missing)} missing", file=log)
    return results


# ---- reading the stored sweep ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _load(path: str) -> str:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no stored results; run OPENBLAS_NUM_THREADS=1 python -m "
                                f"minitf.course.l10_finetuning sweep, then assemble")
    return p.read_text()


def load_results(path=RESULTS_PATH) -> dict:
    """The stored sweep (a fresh dict each call)."""
    return json.loads(_load(str(path)))


def _runs(results, group: str, **match) -> list[dict]:
    results = load_results() if results is None else results
    return [r for r in results["runs"] if r["group"] == group and all(r[k] == v for k, v in match.items())]


def sample_efficiency_table(results: dict | None = None, *, include_frozen: bool = False) -> list[dict]:
    """One row per stored run of the sample-efficiency sweep: ``objective`` (``"bart"``: from the
    pretrained checkpoint, ``"scratch"``), ``n_pairs``, ``seed``, ``exact_match`` and
    ``token_accuracy`` (free-running, greedy, on the 256 held-out pairs), plus
    ``teacher_forced_loss``, ``teacher_forced_token_accuracy`` and ``freeze_encoder``.
    ``include_frozen``: also the frozen-encoder runs (objective ``"bart"``, ``freeze_encoder`` True)."""
    groups = ("sample_efficiency", "frozen") if include_frozen else ("sample_efficiency",)
    rows = []
    for g in groups:
        for r in _runs(results, g):
            rows.append({"objective": r["init"], "n_pairs": r["n_pairs"], "seed": r["seed"],
                         "freeze_encoder": r["freeze_encoder"], "exact_match": r["exact_match"],
                         "token_accuracy": r["token_accuracy"], "teacher_forced_loss": r["teacher_forced_loss"],
                         "teacher_forced_token_accuracy": r["teacher_forced_token_accuracy"]})
    return rows


def summary(results: dict | None = None, field: str = "exact_match") -> dict:
    """``{(variant, n_pairs): (mean, min, max, number of seeds)}`` of ``field`` over seeds;
    variant ``"bart"``, ``"scratch"`` or ``"frozen"``."""
    out: dict = {}
    for row in sample_efficiency_table(results, include_frozen=True):
        variant = "frozen" if row["freeze_encoder"] else row["objective"]
        out.setdefault((variant, row["n_pairs"]), []).append(row[field])
    return {k: (float(np.mean(v)), float(np.min(v)), float(np.max(v)), len(v)) for k, v in sorted(out.items())}


def gaps(results: dict | None = None, field: str = "exact_match") -> dict:
    """``{n_pairs: (mean, min, max)}`` over seeds of the paired difference pretrained minus
    scratch in ``field`` (both runs of a seed fine-tune on the same pairs, in the same order,
    and are scored on the same held-out pairs)."""
    rows = sample_efficiency_table(results)
    out = {}
    for n in sorted({r["n_pairs"] for r in rows}):
        by_seed = {(r["objective"], r["seed"]): r[field] for r in rows if r["n_pairs"] == n}
        diffs = [by_seed[("bart", s)] - by_seed[("scratch", s)] for (o, s) in sorted(by_seed) if o == "bart"
                 and ("scratch", s) in by_seed]
        out[n] = (float(np.mean(diffs)), float(np.min(diffs)), float(np.max(diffs)))
    return out


def history(results: dict | None = None, group: str = "sample_efficiency", init: str = "bart",
            n_pairs: int | None = None, seed: int = 0, freeze_encoder: bool = False) -> dict:
    """One stored run's evaluations as arrays: ``step``, ``teacher_forced_loss``,
    ``free_running_exact_match``, ... and ``train_loss`` (per step)."""
    n_pairs = (OVERFIT_PAIRS if group == "overfit" else N_PAIRS[0]) if n_pairs is None else n_pairs
    found = _runs(results, group, init=init, n_pairs=n_pairs, seed=seed, freeze_encoder=freeze_encoder)
    if not found:
        raise KeyError(f"no stored run: group={group!r} init={init!r} n_pairs={n_pairs} seed={seed}")
    r = found[0]
    out = {k: np.array([e[k] for e in r["evals"]]) for k in r["evals"][0]}
    out["train_loss"] = np.array(r["loss"])
    return out


def early_stopping_picks(h: dict) -> dict:
    """Which evaluation early stopping would keep: on the teacher-forced validation loss
    (its minimum) and on the free-running exact match (its maximum, first if tied); with each
    pick's step and both its numbers."""
    i_loss = int(np.argmin(h["teacher_forced_loss"]))
    i_em = int(np.argmax(h["free_running_exact_match"]))
    pick = lambda i: {"step": int(h["step"][i]), "teacher_forced_loss": float(h["teacher_forced_loss"][i]),  # noqa: E731
                      "exact_match": float(h["free_running_exact_match"][i])}
    return {"teacher_forced_loss": pick(i_loss), "exact_match": pick(i_em)}


def early_stopping_table(results: dict | None = None) -> list[dict]:
    """For every stored run on 100 pairs that evaluated along the way (pretrained, encoder
    frozen, from scratch; every seed): the two picks of :func:`early_stopping_picks`, how many
    evaluations tie at the exact match's maximum, the difference between the picks' exact
    matches in sentences of the :data:`EVAL_SIZE` held-out pairs (exact-match pick minus loss
    pick), and the spread of the exact match (in sentences) over the evaluations from the
    loss's pick on: how much it moves from one evaluation to the next without any pick."""
    rows = []
    for label, which in (("pretrained", dict(init="bart")), ("encoder frozen", dict(group="frozen", freeze_encoder=True)),
                         ("from scratch", dict(init="scratch"))):
        for seed in SEEDS:
            h = history(results, seed=seed, **which)
            picks = early_stopping_picks(h)
            em = h["free_running_exact_match"]
            i_loss = int(np.argmin(h["teacher_forced_loss"]))
            sentences = np.rint(em * EVAL_SIZE).astype(int)  # (evaluations,)
            rows.append({"run": label, "seed": seed, **{f"{k}_pick": v for k, v in picks.items()},
                         "ties_at_max": int((sentences == sentences.max()).sum()),
                         "difference_sentences": int(sentences.max() - sentences[i_loss]),
                         "spread_after_loss_pick": int(np.ptp(sentences[i_loss:])),
                         "evaluations": len(em)})
    return rows


def lr_table(results: dict | None = None) -> list[dict]:
    """The learning-rate / warm-up runs (pretrained, n = 100, every seed) with the
    sample-efficiency runs of the same pairs (peak lr :data:`LR`, warm-up :data:`WARMUP`):
    one row per (lr, warm-up), mean, min and max over seeds of the free-running exact match and
    each seed's (``exact_match_by_seed``, in the order of ``seeds``), and the mean token accuracy
    and teacher-forced loss, all measured at the end of the run."""
    runs = _runs(results, "sample_efficiency", init="bart", n_pairs=N_PAIRS[0]) + _runs(results, "lr")
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["lr"], r["warmup"]), []).append(r)
    rows = []
    for (lr, warmup), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rs = sorted(rs, key=lambda r: r["seed"])
        em = [r["exact_match"] for r in rs]
        rows.append({"lr": lr, "warmup": warmup, "seeds": [r["seed"] for r in rs], "exact_match_by_seed": em,
                     "exact_match": float(np.mean(em)), "exact_match_min": min(em), "exact_match_max": max(em),
                     "token_accuracy": float(np.mean([r["token_accuracy"] for r in rs])),
                     "teacher_forced_loss": float(np.mean([r["teacher_forced_loss"] for r in rs]))})
    return rows


def pairs_trained_on(n_pairs: int, seed: int) -> int:
    """How many of a run's ``n_pairs`` pairs it really trains on: :func:`minitf.training.train`
    leaves out of the batches every pair whose source is one of the seed's held-out sources
    (:func:`~minitf.training.eval_pairs`), so a few of the fixed set (:class:`FewPairs`) may be lost."""
    task = downstream_task()
    held_out_sources = {src for src, _ in eval_pairs(task, finetune_config(seed))}
    return sum(src not in held_out_sources for src, _ in FewPairs(task, n_pairs, seed).pairs)


def compare_with_stored(run: dict, results: dict | None = None, tol: float = 2 / EVAL_SIZE) -> stored.Match:
    """A live run (:func:`run_finetune`) against the stored run of the same settings
    (:func:`minitf.course.kit.stored.compare_run`): exact match and token accuracy within
    ``tol``, the teacher-forced loss within 0.01 (float32 arithmetic may differ in the last bits
    between machines; on the machine that wrote the file the differences are 0).  The variant is
    the run's initialisation, ``"bart"`` or ``"scratch"``."""
    keys = ("init", "n_pairs", "seed", "freeze_encoder", "steps", "lr", "warmup")
    runs = (load_results() if results is None else results)["runs"]
    found = [r for r in runs if all(r[k] == run[k] for k in keys)]
    if not found:
        raise KeyError(f"run: no stored run with {', '.join(f'{k}={run[k]}' for k in keys)}")
    return stored.compare_run(run["init"], run["seed"], run, found[0],
                              {"exact_match": (("exact_match",), tol), "token_accuracy": (("token_accuracy",), tol),
                               "teacher_forced_loss": (("teacher_forced_loss",), 0.01)})


# ---- the command ---------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitf.course.l10_finetuning",
                                     description="Lesson 10's pretrained checkpoint and stored sweep.")
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("pretrain", help=f"pretrain; write {CHECKPOINT_PATH.name}")
    p.add_argument("--out", default=str(CHECKPOINT_PATH))
    s = sub.add_parser("sweep", help=f"run the fine-tuning sweep (cached in {WORK_DIR})")
    s.add_argument("--part", default="0/1", help="i/n: run every n-th run from the i-th")
    a = sub.add_parser("assemble", help=f"gather the finished runs into {RESULTS_PATH.name}")
    a.add_argument("--out", default=str(RESULTS_PATH))
    args = parser.parse_args(argv)
    if args.what == "pretrain":
        pretrain_checkpoint(args.out)
    elif args.what == "sweep":
        try:
            i, n = (int(x) for x in args.part.split("/"))
        except ValueError:
            parser.error(f"--part: expected i/n with integers 0 <= i < n, got {args.part!r}")
        if not 0 <= i < n:
            parser.error(f"--part: expected i/n with 0 <= i < n, got {args.part!r}")
        sweep((i, n))
    else:
        assemble(args.out)
    return 0

