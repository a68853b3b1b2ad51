"""Lesson 7, section 4: the stored pretraining runs, and what their teacher-forced accuracy is made of.

A denoising target mixes tokens of very different difficulty.  T5's target is the hidden
words *and* one sentinel per span *and* ``<eos>``: the sentinels come in a fixed order
(``<extra_id_0>``, ``<extra_id_1>``, ...) and ``<eos>`` ends every target, so a model gets them
right long before it can guess a hidden word.  BART's target is the whole text: most of its
words are in the encoder's input, to be copied, and only the words text infilling removed are
hidden.  One accuracy over the whole target compares two different mixtures.  So every target
token gets a *kind* (:data:`KINDS`), and the accuracy is counted per kind:

=============  ==========================================================================
kind           which target tokens
=============  ==========================================================================
``hidden``     a word the encoder does not see: T5's words after a sentinel, BART's words
               that text infilling replaced by a ``<mask>``
``visible``    BART only: a word that is also in its input (sentence permutation moves it,
               it is still there to copy)
``sentinel``   T5 only: ``<extra_id_k>``
``eos``        ``<eos>``
=============  ==========================================================================

**Which BART words are hidden.**  BART's noise does not say; :func:`bart_hidden` replays it.
With a copy of the generator, the library's own :func:`~minitf.data.noise.sentence_permutation`
and :func:`~minitf.data.noise.text_infilling` run on arrays that record where each token came
from (their random draws depend only on the lengths and the full stops, not on the tokens),
and the replayed input is checked against :func:`~minitf.data.noise.bart_noise`'s, token for
token.

**The evaluation set** (:func:`eval_examples`): :data:`EVAL_PIECES` packed pieces of the corpus,
drawn with :data:`EVAL_SEED` (apart from the training draws), each corrupted both ways, so the
two objectives are scored on the same texts.

**Stored runs.**  :func:`measure` trains the lesson's two tiny models (``lesson7_runs``) for
every seed of :data:`SEEDS` and writes, per seed and objective, the counts by kind, the
training loss per step (4 digits: what ``l07_loss_curves`` draws) and the held-out accuracy of
the training loop's own evaluation, to :data:`RESULTS_PATH`, and the trained weights of seed
:data:`CHECKPOINT_SEED` beside it (:func:`checkpoint_path`)::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l07_pretraining measure

The two full trainings take longer than the notebook's time budget on a busy machine, so the
notebook trains the first :data:`LIVE_STEPS` updates of each live (:func:`first_steps`, the
same schedule, stopped early) and compares them with the stored curve, and it loads the stored
weights (:func:`stored_model`) to count by kind again (:func:`compare_with_stored`).
``tests/course/l07/test_pretraining_runs.py`` trains seed 0 in full and checks the weights.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...checks import check_choice, check_int
from ...data import IGNORE_INDEX
from ...data.corpus import OBJECTIVES, DenoisingTask
from ...data.noise import BartNoise, bart_noise, sentence_permutation, text_infilling
from ...models import EncoderDecoder
from ...training import train
from ..kit import stored
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results
from .experiments import (PACK_LENGTH, lesson7_model_config, lesson7_pieces, lesson7_runs, lesson7_task,
                          lesson7_train_config)

__all__ = ["KINDS", "EVAL_PIECES", "EVAL_SEED", "SEEDS", "CHECKPOINT_SEED", "LIVE_STEPS", "RESULTS_PATH",
           "bart_hidden", "KindedExample", "eval_examples", "count_by_kind", "accuracy", "run_numbers", "measure",
           "load_results", "compare_with_stored", "seed_accuracies", "checkpoint_path", "stored_model",
           "first_steps", "compare_curve", "weight_difference"]

KINDS = ("hidden", "visible", "sentinel", "eos")
"""The kinds of target token (module docstring)."""

EVAL_PIECES = 200
EVAL_SEED = 70_000
SEEDS = (0, 1, 2, 3, 4)
CHECKPOINT_SEED = 0  # whose trained weights are stored beside RESULTS_PATH
LIVE_STEPS = 60  # the updates the notebook trains live, of each objective
RESULTS_PATH = Path(__file__).resolve().with_name("results") / "pretraining_runs.json"
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l07_pretraining measure"

_TAG = 10 ** 6  # added to a position to mark it as a position, not a token id


def bart_hidden(ids, rng: np.random.Generator, noise: BartNoise, *, mask_id: int, full_stop_id: int):
    """``bart_noise(ids, rng, noise, ...)`` and which tokens of ``ids`` it hid.

    Returns ``(source (n',), hidden (n,) bool)``; ``rng`` advances exactly as
    :func:`~minitf.data.noise.bart_noise` advances it.  Only the recipes without rotation and
    with text infilling (BART's final recipe, the lesson's) are replayed."""
    ids = np.asarray(ids, dtype=np.int64)
    if noise.rotate > 0 or noise.masking != "infilling":
        raise ValueError(f"noise: only text infilling without rotation is replayed, got {noise}")
    replay = copy.deepcopy(rng)  # the same draws, in the same order
    source = bart_noise(ids, rng, noise, mask_id=mask_id, full_stop_id=full_stop_id)
    n = len(ids)
    origin = np.arange(n)  # (n,) the original position of each token of the permuted text
    if noise.permute_sentences > 0:
        is_stop = ids == full_stop_id
        sentence = np.concatenate([[0], np.cumsum(is_stop)[:-1]])  # (n,) which sentence a token ends or is in
        labelled = np.where(is_stop, full_stop_id, _TAG + sentence)  # the full stops where they are
        permuted = sentence_permutation(labelled, replay, full_stop_id, noise.permute_sentences)
        start = {int(s): int(np.flatnonzero(sentence == s)[0]) for s in np.unique(sentence)}
        seen: dict = {}
        current = None
        for j, t in enumerate(permuted.tolist()):  # a sentence moves whole: its tokens stay in order
            current = current if t == full_stop_id else t - _TAG
            origin[j] = start[current] + seen.get(current, 0)
            seen[current] = seen.get(current, 0) + 1
    if noise.mask_ratio > 0:
        kept = text_infilling(np.arange(n) + _TAG, replay, -1, noise.mask_ratio, noise.poisson_lambda)
    else:
        kept = np.arange(n) + _TAG
    rebuilt = np.where(kept >= _TAG, ids[origin[np.maximum(kept - _TAG, 0)]], mask_id)
    if not np.array_equal(rebuilt, source):
        raise AssertionError("bart_hidden: the replay does not reproduce bart_noise's input")
    hidden = np.ones(n, dtype=bool)
    hidden[origin[kept[kept >= _TAG] - _TAG]] = False
    return source, hidden


class KindedExample(NamedTuple):
    """One evaluation pair and the kind of each of its target tokens (``<eos>`` last)."""

    source: str
    target: str
    kinds: tuple  # one of KINDS per target token, <eos> included


def _t5_kinds(task: DenoisingTask, target: str) -> tuple:
    tok = task.tokenizer
    sentinels = {tok.vocab_size - 1 - k for k in range(tok.n_sentinels)}
    return tuple("sentinel" if i in sentinels else "hidden" for i in tok.encode(target)) + ("eos",)


def eval_examples(objective: str, n: int = EVAL_PIECES, seed: int = EVAL_SEED) -> list:
    """:data:`EVAL_PIECES` pieces of corpus text (drawn with ``seed``, as the training draws
    its own), corrupted by ``objective``'s noise, each with the kind of every target token.
    Piece i is corrupted with the generator ``default_rng([seed, i])``: T5 and BART see the same
    pieces."""
    objective = check_choice("objective", objective, OBJECTIVES)
    task = lesson7_task(objective)
    tok = task.tokenizer
    out = []
    for i, text in enumerate(lesson7_pieces(check_int("n", n, low=1), seed)):
        rng = np.random.default_rng([seed, i])
        if objective == "t5":
            source, target = task.corrupt(text, rng)
            out.append(KindedExample(source, target, _t5_kinds(task, target)))
        else:
            src_ids, hidden = bart_hidden(tok.encode(text), rng, task.bart, mask_id=tok.mask_id,
                                          full_stop_id=tok.encode(".")[0])
            out.append(KindedExample(tok.decode(src_ids), text,
                                     tuple("hidden" if h else "visible" for h in hidden) + ("eos",)))
    return out


def count_by_kind(model, objective: str, examples) -> dict:
    """Teacher-forced argmax against the labels, counted by kind: ``{kind: [right, total]}``
    over the kinds the objective has."""
    task = lesson7_task(objective)
    batch = task.batch([(e.source, e.target) for e in examples])
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    right = logits.argmax(axis=-1) == batch.labels  # (B, T)
    counts: dict = {}
    for b, e in enumerate(examples):
        real = np.flatnonzero(batch.labels[b] != IGNORE_INDEX)
        if len(real) != len(e.kinds):
            raise AssertionError(f"example {b}: {len(real)} target tokens, {len(e.kinds)} kinds")
        for t, kind in zip(real, e.kinds):
            c = counts.setdefault(kind, [0, 0])
            c[0] += int(right[b, t])
            c[1] += 1
    return {k: counts[k] for k in KINDS if k in counts}


def accuracy(counts: dict, kinds=None) -> float:
    """The share right over ``kinds`` (default: all) of a :func:`count_by_kind` dict."""
    kinds = tuple(counts) if kinds is None else tuple(kinds)
    right, total = (sum(counts[k][i] for k in kinds if k in counts) for i in (0, 1))
    return right / total if total else float("nan")


def run_numbers(seed: int) -> dict:
    """What the results file keeps of one seed: per objective, the counts by kind on
    :func:`eval_examples`, the training loss per step (4 digits) and the held-out
    teacher-forced accuracy of the training loop's last evaluation."""
    runs = lesson7_runs(seed)
    out = {}
    for objective in OBJECTIVES:
        run = runs[objective]
        out[objective] = {"counts": count_by_kind(run.model, objective, eval_examples(objective)),
                          "loss": [round(float(x), 4) for x in run.history.loss],
                          "train_eval_accuracy": round(float(run.history.evals[-1]["teacher_forced_token_accuracy"]), 6)}
    return out


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seeds=SEEDS, log=sys.stderr) -> dict:
    """Train both objectives for every seed, count by kind, write ``path`` (None: nothing)."""
    clock = Stopwatch()
    runs = {}
    for seed in seeds:
        runs[str(seed)] = run_numbers(seed)
        if log is not None:
            acc = {o: accuracy(r["counts"], ["hidden"]) for o, r in runs[str(seed)].items()}
            print(f"seed {seed}: hidden-word accuracy {acc}", file=log, flush=True)
    results = {"about": ("Lesson 7 section 4's stored runs: the tiny model pretrained on T5 span corruption and on "
                         "BART's recipe, every seed; teacher-forced argmax counts by kind of target token on "
                         f"{EVAL_PIECES} pieces of {PACK_LENGTH} words (seed {EVAL_SEED}); the training loss per step."),
               **provenance(COMMAND), **clock.seconds(),
               "settings": {"train": lesson7_train_config().to_dict(), "eval_pieces": EVAL_PIECES,
                            "eval_seed": EVAL_SEED, "seeds": list(seeds)},
               "runs": runs}
    if path is not None:
        write_results(path, results)
        if CHECKPOINT_SEED in seeds:
            from ...checkpoint import save_model

            for objective, run in lesson7_runs(CHECKPOINT_SEED).items():
                save_model(checkpoint_path(objective), run.model, lesson7_task(objective).tokenizer,
                           train=lesson7_train_config(CHECKPOINT_SEED).to_dict(),
                           extra={"objective": objective, "seed": CHECKPOINT_SEED, "command": COMMAND})
    return results


def checkpoint_path(objective: str) -> Path:
    """Where the weights of ``objective``'s seed-:data:`CHECKPOINT_SEED` run are stored."""
    objective = check_choice("objective", objective, OBJECTIVES)
    return RESULTS_PATH.with_name(f"pretraining_{objective}_seed{CHECKPOINT_SEED}.npz")


_MODELS: dict = {}


def stored_model(objective: str) -> EncoderDecoder:
    """The stored weights of ``objective``'s seed-:data:`CHECKPOINT_SEED` run (loaded once per
    process, in eval mode: do not modify)."""
    from ...checkpoint import load_model

    path = checkpoint_path(objective)
    if objective not in _MODELS:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no stored weights; run {COMMAND}")
        _MODELS[objective] = load_model(path)[0].eval()
    return _MODELS[objective]


class _Stop(Exception):
    def __init__(self, history):
        super().__init__("stopped")
        self.history = history


def first_steps(objective: str, seed: int = 0, steps: int = LIVE_STEPS) -> np.ndarray:
    """The training loss of the first ``steps`` updates of ``lesson7_runs(seed)[objective]``'s
    training, trained here: the same model, data and learning-rate schedule (warm-up and
    cosine decay over all its steps), stopped after ``steps`` updates.  (steps,)"""
    objective = check_choice("objective", objective, OBJECTIVES)
    full = lesson7_train_config(seed)
    steps = check_int("steps", steps, low=1, high=full.steps)
    task = lesson7_task(objective)
    model = EncoderDecoder(lesson7_model_config(task, seed))

    def stop(step, history):
        raise _Stop(history)

    try:  # one evaluation at `steps`, to stop there; evaluating does not change the training
        train(model, task, lesson7_train_config(seed, eval_every=steps), callback=stop)
    except _Stop as e:
        return np.array(e.history.loss)
    raise AssertionError("first_steps: the training did not stop")


def compare_curve(objective: str, losses, results: dict, seed: int = 0) -> stored.Match:
    """Live losses of the first updates (:func:`first_steps`) against the stored curve's first
    ones, within 1e-4 (its 4 stored digits)."""
    kept = results["runs"][str(seed)][objective]["loss"][:len(losses)]
    return stored.compare_run(objective, seed, {"loss": list(losses)}, {"loss": kept}, {"loss": (("loss",), 1e-4)})


def weight_difference(a: EncoderDecoder, b: EncoderDecoder) -> float:
    """max |a - b| over every parameter of two models of one config."""
    pa, pb = a.parameters(), b.parameters()
    if set(pa) != set(pb):
        raise ValueError(f"the models' parameters differ: {sorted(set(pa) ^ set(pb))}")
    return max(float(np.max(np.abs(pa[n] - pb[n]))) for n in pa)


def load_results(path: Path | str = RESULTS_PATH) -> dict:
    """The stored runs (:func:`measure` wrote them)."""
    return stored.load_results(path, COMMAND)


def compare_with_stored(seed: int, live: dict, results: dict) -> stored.Match:
    """Live numbers of one seed against the stored ones: ``live`` is ``{objective: {"counts":
    ..., "loss": ... (optional)}}`` (:func:`run_numbers`, or the counts of the stored models);
    the counts must be equal, the loss curves (where given) within 1e-4 (their 4 stored digits)."""
    kept = results["runs"][str(seed)]
    flat = lambda numbers: {f"{o} {k}": v for o, r in numbers.items() for k, v in r["counts"].items()}  # noqa: E731
    curves = lambda numbers: {f"{o} loss": r["loss"] for o, r in numbers.items() if "loss" in r}  # noqa: E731
    live_f, kept_f = {**flat(live), **curves(live)}, {**flat(kept), **curves(kept)}
    fields = {"counts": (tuple(flat(live)), 0.0)}
    if curves(live):
        fields["loss"] = (tuple(curves(live)), 1e-4)
    return stored.compare_run("pretraining", seed, live_f, kept_f, fields)


def seed_accuracies(results: dict, objective: str, kinds=None) -> np.ndarray:
    """(n_seeds,) the accuracy over ``kinds`` of every stored seed, in seed order."""
    return np.array([accuracy(results["runs"][s][objective]["counts"], kinds)
                     for s in sorted(results["runs"], key=int)])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["measure"]:
        print(f"usage: python -m minitf.course.l07_pretraining measure   (writes {RESULTS_PATH})", file=sys.stderr)
        return 2
    measure()
    return 0
