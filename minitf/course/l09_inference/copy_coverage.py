"""Lesson 9, section 5 (*Coverage and copy*): the task, the metrics and the experiments.

The task is :class:`~minitf.data.copy_task.CopyTask`: reports of 3 to 6 events between
people, each name drawn from a pool, rewritten as a compact list (``kavo wrote mire ; dosa
visited lupa``).  Every name must reach the output.  50 names are in the output vocabulary,
150 *rare* ones occur in training but are source-only, and 100 *unseen* ones never occur in
training and are source-only too, so only copying can write them.  Three held-out sets of
200 reports (:func:`eval_sets`): seen names, unseen names, and *long* reports of
:data:`LONG_EVENTS` events (more than any training report) with unseen names.

Three models, the same transformer underneath (:func:`copy_model_config`), trained the same
way (:func:`train_variant`: 400 AdamW steps, every name outside the output vocabulary read
by the encoder as one shared untrained vector, as See et al. read it as ``<unk>``) and
decoded greedily:

==================  ========================================================================
variant             what it is
==================  ========================================================================
``plain``           the :class:`~minitf.models.EncoderDecoder`, cross-entropy over the
                    output vocabulary (a rare or unseen name is ``<unk>`` to it)
``copy``            the :class:`~minitf.models.PointerGenerator` without coverage,
                    :func:`~minitf.models.pointer_generator.copy_nll`
``copy+coverage``   the pointer-generator with coverage in its copy attention and
                    See et al.'s coverage loss (weight :data:`COVERAGE_WEIGHT`)
==================  ========================================================================

The metrics (:func:`repetition_rate`, :func:`omission_rate`, :func:`unseen_token_accuracy`)
take token lists, so they read any model's output; :func:`decode_tokens` maps a
pointer-generator's copied ids (extended vocabulary) back to the source tokens, and
:func:`score_outputs` computes every number of one decoding.  A repetition is counted against
the target *as the model was trained to write it* (:attr:`Outputs.writable`): the plain
model's target has ``<unk>`` for every name outside its vocabulary, so its one ``<unk>`` per
such name is no repetition; :func:`score_outputs` reports the share of ``<unk>`` among the
tokens written apart (``"unk"``).

:func:`measure` trains every variant for every seed of :data:`SEEDS`, decodes the long reports
with beam search too (with and without GNMT's coverage penalty), stores the numbers in
:data:`RESULTS_PATH` and the weights of the pointer-generators' seed-0 runs beside it
(:func:`checkpoint_path`) (``OPENBLAS_NUM_THREADS=1 python -m minitf.course.l09_inference
copy_coverage``, minutes).  The notebook loads both (:func:`load_results`, :func:`seed_summary`,
:func:`stored_copy_run`) and evaluates the stored models again, which must give the stored
numbers; ``tests/course/l09/test_copy_coverage.py`` trains them again (:func:`copy_run`), which
must give the stored weights and numbers (:func:`compare_with_stored`).  :func:`copy_example`
reads p_gen, the copy attention and the coverage of one decoding.
"""
from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...checks import check_choice, check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX
from ...data.copy_task import TARGET_JOIN, CopyTask
from ...decoding import beam_search, greedy_search
from ...loss import cross_entropy
from ...models import EncoderDecoder
from ...models.pointer_generator import PointerGenerator, copy_nll, coverage_loss
from ...optim import clip_grad_norm
from ...training import TrainConfig, make_optimizer, make_schedule
from ..kit import stored

__all__ = [
    "VARIANTS", "SEEDS", "COVERAGE_WEIGHT", "EVAL_SIZE", "RESULTS_PATH", "copy_task", "copy_model_config",
    "copy_train_config", "build_model", "train_variant", "repetition_rate", "omission_rate",
    "unseen_token_accuracy", "decode_tokens", "Outputs", "decode_outputs", "score_outputs", "evaluate_variant",
    "measure", "load_results", "seed_summary", "compare_with_stored", "CopyRun", "copy_run", "CopyExample",
    "copy_example", "format_tokens", "figure_pair", "LONG_EVENTS", "eval_sets", "run_numbers", "CHECKPOINT_SEED",
    "checkpoint_path", "stored_copy_run", "weight_difference",
]

VARIANTS = ("plain", "copy", "copy+coverage")
SEEDS = (0, 1, 2, 3, 4)
COVERAGE_WEIGHT = 1.0  # lambda of the coverage loss (See et al. use 1)
EVAL_SIZE = 200  # held-out reports of each kind (seen names, unseen names)
EVAL_SEED = 50_000  # the evaluation sets' seeds: EVAL_SEED (seen names), + 1 (unseen), + 2 (long)
LONG_EVENTS = 8  # the long reports: more events than any training report (at most 6)
RESULTS_PATH = Path(__file__).resolve().with_name("results") / "copy_coverage.json"
CHECKPOINT_SEED = 0  # the seed whose pointer-generators' weights are stored beside RESULTS_PATH
COMMAND = "OPENBLAS_NUM_THREADS=1 python -m minitf.course.l09_inference copy_coverage"  # writes RESULTS_PATH again


# ---- set-up ------------------------------------------------------------------------------------
def copy_task() -> CopyTask:
    """The section's task with its defaults: 50 names in the output vocabulary, 150 rare
    (in training, source-only), 100 unseen (source-only, never in training), 3 to 6 events."""
    return CopyTask()


def copy_model_config(task: CopyTask, seed: int = 0, **overrides) -> ModelConfig:
    """D = 32, H = 2, F = 64, one encoder and one decoder block, float64 (as every lesson
    model: the same numbers on any machine).  The source vocabulary holds every name, the
    output vocabulary only the seen ones, so the embeddings are not shared; the output layer
    is tied to the target embedding."""
    tok = task.tokenizer
    fields = dict(src_vocab_size=task.src_vocab_size, tgt_vocab_size=task.tgt_vocab_size, d_model=32, n_heads=2,
                  d_ff=64, n_encoder_layers=1, n_decoder_layers=1,
                  max_len=LONG_EVENTS * 7 + 2, pad_id=tok.pad_id, bos_id=tok.bos_id,
                  eos_id=tok.eos_id, share_embeddings=False, tie_output=True, dtype="float64", seed=seed)
    return ModelConfig(**{**fields, **overrides})


def copy_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """AdamW, 400 steps of 32 reports, warm-up then cosine decay from 5e-3, clipping at 1."""
    return TrainConfig(**{**dict(steps=400, batch_size=32, lr=5e-3, warmup=30, eval_every=0, progress=False),
                          **overrides, "seed": seed})


def build_model(variant: str, config: ModelConfig):
    """A fresh model of ``variant`` (:data:`VARIANTS`)."""
    variant = check_choice("variant", variant, VARIANTS)
    if variant == "plain":
        return EncoderDecoder(config)
    return PointerGenerator(config, coverage=variant == "copy+coverage")


def _loss(model, task: CopyTask, batch, coverage_weight: float):
    """(loss, a function running the backward) for one teacher-forced batch."""
    if isinstance(model, PointerGenerator):
        P, cache = model.forward(batch.input_ids, task.output_ids(batch.decoder_input_ids))  # (B, T, V_ext): rare names read as <unk>
        labels = model.to_extended(batch.labels, model.extend_source(batch.input_ids))  # (B, T)
        loss, dP = copy_nll(P, labels)
        da = None
        if model.coverage is not None and coverage_weight:
            cov, da = coverage_loss(PointerGenerator.copy_attention(cache), labels, coverage_weight)
            loss += cov
        return loss, lambda: model.backward(dP, cache, da)
    logits, cache = model.forward(batch.input_ids, task.output_ids(batch.decoder_input_ids))  # (B, T, V)
    loss, dlogits = cross_entropy(logits, task.output_ids(batch.labels))
    return loss, lambda: model.backward(dlogits, cache)


def train_variant(variant: str, seed: int = 0, task: CopyTask | None = None, *, steps: int | None = None,
                  coverage_weight: float = COVERAGE_WEIGHT, oov_as_one: bool = True):
    """Train a fresh model of ``variant`` on reports with *seen* names only; returns
    ``(model in eval mode, losses (steps,))``.  ``seed`` sets the initialisation and the
    data order; every variant of a seed sees the same batches.

    ``oov_as_one``: the source embedding reads every name outside the output vocabulary
    (rare or unseen) as one and the same vector, never trained: the ``<unk>`` row's initial
    value.  See et al.'s encoder reads an out-of-vocabulary word as ``<unk>`` for the same
    reason: a name never seen in training has an embedding nothing has trained, unlike any
    input the model has learnt from; read as the one shared vector, an unseen name is
    exactly what a rare name was in training.  The ids stay distinct, so the copy still
    knows which name sits where.  (False: each name its own trained row.)"""
    task = copy_task() if task is None else task
    cfg = copy_train_config(seed, **({} if steps is None else {"steps": steps}))
    model = build_model(variant, copy_model_config(task, seed))
    oov = task.source_only_ids  # (n_rare + n_unseen,) rows of the source embedding
    if oov_as_one:
        W_E = model.parameters()["src_embed.W_E"]  # (V_src, D), the array itself
        W_E[oov] = W_E[task.tokenizer.unk_id]
    optimizer = make_optimizer(model.parameters(), cfg)
    schedule = make_schedule(cfg, model.config.d_model)
    rng = np.random.default_rng([seed, 7])
    losses = np.empty(cfg.steps)
    model.train()
    for step in range(1, cfg.steps + 1):
        batch = task.batch(task.sample(cfg.batch_size, rng))
        loss, backward = _loss(model, task, batch, coverage_weight)
        if not math.isfinite(loss):
            raise FloatingPointError(f"variant {variant!r}, seed {seed}: loss {loss} at step {step}")
        model.zero_grad()
        backward()
        grads = model.gradients()
        if oov_as_one:
            grads["src_embed.W_E"][oov] = 0.0  # no gradient, no Adam step: the rows stay equal
        clip_grad_norm(grads, cfg.clip_norm)
        optimizer.lr = schedule(step)
        optimizer.step(grads)
        losses[step - 1] = loss
    return model.eval(), losses


# ---- the metrics: token lists in, one number out --------------------------------------------
def _ngrams(tokens, n: int) -> Counter:
    tokens = list(tokens)
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _check_pairs(name: str, a, b) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name}: expected one per output, got {len(b)} for {len(a)} outputs")


def repetition_rate(outputs, references, n: int = 2) -> float:
    """The share of the outputs' n-grams that are repeats the reference does not have.

    For each output and each n-gram g: excess(g) = max(0, count_out(g) - max(1, count_ref(g))),
    the occurrences beyond the first that the reference does not justify.  The rate is the
    sum of the excesses over the number of n-grams in the outputs (0 if there are none).
    ``outputs``, ``references``: lists of token sequences (ids or strings), one reference per
    output."""
    n = check_int("n", n, low=1)
    _check_pairs("references", outputs, references)
    excess = total = 0
    for out, ref in zip(outputs, references):
        got, want = _ngrams(out, n), _ngrams(ref, n)
        excess += sum(max(0, k - max(1, want[g])) for g, k in got.items())
        total += sum(got.values())
    return excess / total if total else 0.0


def omission_rate(outputs, contents) -> float:
    """The share of the source content tokens missing from the outputs.

    ``contents``: per output, the source's content tokens (here the names), each to appear in
    the output as often as in the source.  missing = sum_w max(0, count_content(w) -
    count_out(w)); the rate is the sum of the missing over the number of content tokens."""
    _check_pairs("contents", outputs, contents)
    missing = total = 0
    for out, content in zip(outputs, contents):
        got, want = Counter(out), Counter(content)
        missing += sum(max(0, k - got[w]) for w, k in want.items())
        total += sum(want.values())
    if total == 0:
        raise ValueError("contents: expected at least one content token, got none")
    return missing / total


def unseen_token_accuracy(outputs, references, unseen) -> float:
    """The share of the references' unseen tokens the outputs get right.

    ``unseen(token) -> bool`` says which tokens were never seen in training.  A reference's
    unseen token w counts as right as often as the output holds it, at most as often as the
    reference does: right = sum_w min(count_out(w), count_ref(w)) over unseen w, divided by
    their number in the references.  No alignment by position: one early slip does not make
    every later token wrong (the omission rate is the same count for all content tokens;
    exact match is the strict, positional measure)."""
    _check_pairs("references", outputs, references)
    right = total = 0
    for out, ref in zip(outputs, references):
        want = Counter(w for w in ref if unseen(w))
        got = Counter(out)
        right += sum(min(got[w], k) for w, k in want.items())
        total += sum(want.values())
    if total == 0:
        raise ValueError("references: expected at least one unseen token, got none")
    return right / total


# ---- decoding and scoring ---------------------------------------------------------------------
def _cut(ids, eos_id: int) -> list:
    ids = [int(i) for i in ids]
    return ids[:ids.index(eos_id)] if eos_id in ids else ids


def decode_tokens(model, src_ids, sequences) -> list:
    """A decoder's ``sequences`` (B, T) -> B lists of *source-vocabulary* ids, cut before
    ``<eos>``.  A pointer-generator's copied ids (>= V, the extended vocabulary) become the
    source tokens they stand for (``model.from_extended``); a plain model's output ids are
    already source ids (the output vocabulary is the first V of them)."""
    seq = np.asarray(sequences)
    if isinstance(model, PointerGenerator):
        seq = model.from_extended(seq, model.extend_source(src_ids))
    return [_cut(row, model.config.eos_id) for row in seq]


def format_tokens(task: CopyTask, ids) -> str:
    """Source-vocabulary ids -> text (an unseen name is written as itself)."""
    return task.tokenizer.decode([int(i) for i in ids])


class Outputs(NamedTuple):
    """One decoding of an evaluation set."""
    tokens: list  # B lists of source-vocabulary ids, <eos> cut
    references: list  # B lists: the targets' ids
    contents: list  # B lists: the sources' names
    writable: list  # B lists: the targets as the model was trained to write them (plain: <unk> for a name outside V)
    unk_id: int  # what a plain model writes for a name outside its vocabulary


def decode_outputs(model, task: CopyTask, pairs, *, num_beams: int = 1, coverage_penalty: float = 0.0) -> Outputs:
    """Decode the sources of ``pairs`` greedily (``num_beams`` 1) or with beam search
    (length penalty 1, GNMT's coverage penalty ``coverage_penalty``)."""
    batch = task.batch(pairs)
    T_max = max(len(t.split()) for _, t in pairs) + 5
    if num_beams == 1 and not coverage_penalty:
        out = greedy_search(model, batch.input_ids, max_new_tokens=T_max)
    else:
        out = beam_search(model, batch.input_ids, num_beams=num_beams, max_new_tokens=T_max, length_penalty=1.0,
                          coverage_penalty_weight=coverage_penalty)
    eos = model.config.eos_id
    refs = [_cut(row[row != IGNORE_INDEX], eos) for row in batch.labels]
    contents = [[int(i) for i in row if task.is_name(i)] for row in batch.input_ids]
    # the plain model was trained on task.output_ids(labels): <unk> wherever a name is outside V
    writable = refs if isinstance(model, PointerGenerator) else [task.output_ids(r).tolist() for r in refs]
    return Outputs(decode_tokens(model, batch.input_ids, out.sequences), refs, contents, writable,
                   task.tokenizer.unk_id)


def score_outputs(task: CopyTask, outputs: Outputs) -> dict:
    """The section's numbers for one decoding: exact match, repetition (unigrams and bigrams,
    against the target as the model was trained to write it: ``outputs.writable``), the share
    of ``<unk>`` among the tokens written (``"unk"``), omission, and the accuracy on the rare
    and on the unseen names, where the references hold any (:func:`unseen_token_accuracy` with
    either group as "unseen")."""
    toks, refs, writable = outputs.tokens, outputs.references, outputs.writable
    n_tokens = sum(len(t) for t in toks)
    out = {"exact_match": float(np.mean([t == r for t, r in zip(toks, refs)])),
           "repetition_1": repetition_rate(toks, writable, 1), "repetition_2": repetition_rate(toks, writable, 2),
           "unk": sum(t.count(outputs.unk_id) for t in toks) / n_tokens if n_tokens else 0.0,
           "omission": omission_rate(toks, outputs.contents)}
    for key, group in (("rare_accuracy", task.is_rare), ("unseen_accuracy", task.is_unseen)):
        if any(group(w) for r in refs for w in r):
            out[key] = unseen_token_accuracy(toks, refs, lambda w: bool(group(w)))
    return out


def eval_sets(task: CopyTask, size: int = EVAL_SIZE) -> dict:
    """The three held-out sets: reports (3 to 6 events) whose names are all seen in
    training, all unseen; and ``long`` reports of :data:`LONG_EVENTS` events, longer than
    any in training, with unseen names."""
    return {"seen": task.dataset(size, EVAL_SEED, "seen"), "unseen": task.dataset(size, EVAL_SEED + 1, "unseen"),
            "long": task.dataset(size, EVAL_SEED + 2, "unseen", events=LONG_EVENTS)}


def evaluate_variant(model, task: CopyTask, size: int = EVAL_SIZE, beam: bool = False) -> dict:
    """``{"seen": numbers, "unseen": numbers, "long": numbers}`` of greedy decoding (and,
    with ``beam``, of beam search on the long reports, 4 beams, with and without GNMT's
    coverage penalty 0.2: keys ``"beam4/long"``, ``"beam4+cp/long"``)."""
    res = {}
    for name, pairs in eval_sets(task, size).items():
        res[name] = _round(score_outputs(task, decode_outputs(model, task, pairs)))
        if beam and name == "long":
            for label, beta in (("beam4", 0.0), ("beam4+cp", 0.2)):
                res[f"{label}/{name}"] = _round(score_outputs(
                    task, decode_outputs(model, task, pairs, num_beams=4, coverage_penalty=beta)))
    return res


def _round(d: dict, digits: int = 6) -> dict:
    return {k: round(float(v), digits) for k, v in d.items()}


# ---- the stored sweep -------------------------------------------------------------------------
def _settings(task: CopyTask) -> dict:
    cfg = copy_model_config(task)
    return {"task": task.config, "model": {k: getattr(cfg, k) for k in ("d_model", "n_heads", "d_ff",
                                                                         "n_encoder_layers", "n_decoder_layers")},
            "train": {k: v for k, v in copy_train_config().to_dict().items() if k not in ("seed", "progress")},
            "coverage_weight": COVERAGE_WEIGHT, "eval_size": EVAL_SIZE, "eval_seed": EVAL_SEED}


def _numbers(model, losses, task: CopyTask, beam: bool) -> dict:
    return {"final_loss": round(float(losses[-20:].mean()), 6), **evaluate_variant(model, task, beam=beam)}


def run_numbers(variant: str, seed: int, task: CopyTask | None = None, beam: bool = False) -> dict:
    """Train ``variant`` with ``seed`` and evaluate it: what the results file keeps of a run."""
    task = copy_task() if task is None else task
    model, losses = train_variant(variant, seed, task)
    return _numbers(model, losses, task, beam)


def checkpoint_path(variant: str, seed: int = CHECKPOINT_SEED) -> Path:
    """Where :func:`measure` stores the weights of a pointer-generator run (``copy``,
    ``copy+coverage``; the seed :data:`CHECKPOINT_SEED`), beside :data:`RESULTS_PATH`."""
    variant = check_choice("variant", variant, VARIANTS[1:])
    return RESULTS_PATH.with_name(f"copy_coverage_{variant.replace('+', '_')}_seed{seed}.npz")


def measure(path=RESULTS_PATH, seeds=SEEDS, variants=VARIANTS, log=sys.stderr) -> dict:
    """Train and evaluate every variant for every seed (beam search too, with and without
    the coverage penalty, for the pointer-generators) and write the results to ``path``
    (None: do not write).  Minutes, not seconds: the notebook loads the file instead."""
    import minitf
    import os

    from ...checkpoint import save_model

    task = copy_task()
    start = time.perf_counter()
    runs = {}
    for variant in variants:
        runs[variant] = {}
        for seed in seeds:
            t0 = time.perf_counter()
            model, losses = train_variant(variant, seed, task)
            runs[variant][str(seed)] = _numbers(model, losses, task, beam=variant != "plain")
            if path is not None and variant != "plain" and seed == CHECKPOINT_SEED:
                save_model(checkpoint_path(variant, seed), model, task.tokenizer,
                           extra={"variant": variant, "seed": seed, "command": COMMAND,
                                  "final_loss": runs[variant][str(seed)]["final_loss"]})
            print(f"{variant} seed {seed}: {time.perf_counter() - t0:.1f} s  {runs[variant][str(seed)]}",
                  file=log, flush=True)
    results = {"settings": _settings(task), "seeds": list(seeds), "runs": runs,
               "minitf_version": minitf.__version__, "wall_seconds": round(time.perf_counter() - start, 1),
               "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    if path is not None:
        Path(path).write_text(json.dumps(results, indent=1) + "\n")
    return results


def load_results(path=RESULTS_PATH) -> dict:
    """The stored sweep (:func:`measure`)."""
    return stored.load_results(path, COMMAND)


def seed_summary(results: dict, variant: str, key: str, metric: str) -> tuple:
    """(mean, min, max) over the stored seeds of ``runs[variant][seed][key][metric]``, e.g.
    ``seed_summary(results, "copy", "unseen", "unseen_accuracy")``."""
    check_choice("variant", variant, tuple(results["runs"]))
    values = np.array([r[key][metric] for r in results["runs"][variant].values()])
    return float(values.mean()), float(values.min()), float(values.max())


def compare_with_stored(variant: str, seed: int, numbers: dict, results: dict, atol: float = 1e-6) -> stored.Match:
    """A live :func:`evaluate_variant` (``numbers``: ``{"seen": {metric: ..}, "unseen": ..}``)
    against the stored run of the same variant and seed (:func:`minitf.course.kit.stored.compare_run`):
    every metric within ``atol`` of the file."""
    def flat(run: dict) -> dict:  # {"seen unseen_accuracy": ...}: one field per (set, metric)
        return {f"{key} {m}": v for key in numbers for m, v in run[key].items()}

    live, kept = flat(numbers), flat(results["runs"][variant][str(seed)])
    return stored.compare_run(variant, seed, live, kept, {"metrics": (tuple(live), atol)})


# ---- one trained pointer-generator, looked at closely -------------------------------------------
class CopyRun(NamedTuple):
    """A trained model of the section (:func:`copy_run`, :func:`stored_copy_run`)."""
    task: CopyTask
    variant: str
    seed: int
    model: object  # in eval mode; shared by the notebook and the figures: do not modify
    losses: np.ndarray | None  # (steps,) of a run trained here; None for a stored model
    numbers: dict  # evaluate_variant's greedy numbers: {"seen": .., "unseen": ..}


_RUNS: dict = {}  # (variant, seed, stored) -> CopyRun: the cache of copy_run and stored_copy_run, one per process


def copy_run(variant: str = "copy+coverage", seed: int = 0) -> CopyRun:
    """Train ``variant`` with ``seed`` once per process (the stored sweep's run of that
    variant and seed, so :func:`compare_with_stored` checks it) and evaluate it.  Training
    takes a processor-minute or so for the two pointer-generators: the notebook and the
    figures read :func:`stored_copy_run` instead, and the tests check that this gives it."""
    key = (check_choice("variant", variant, VARIANTS), check_int("seed", seed, low=0), False)
    if key not in _RUNS:
        task = copy_task()
        model, losses = train_variant(variant, seed, task)
        _RUNS[key] = CopyRun(task, variant, seed, model, losses, evaluate_variant(model, task))
    return _RUNS[key]


def stored_copy_run(variant: str = "copy+coverage") -> CopyRun:
    """The stored weights of ``variant``'s seed-:data:`CHECKPOINT_SEED` run (:func:`checkpoint_path`,
    written by :func:`measure`), loaded once per process and evaluated here (``numbers``: what
    :func:`compare_with_stored` checks against the results file)."""
    from ...checkpoint import load_model

    key = (check_choice("variant", variant, VARIANTS[1:]), CHECKPOINT_SEED, True)
    if key not in _RUNS:
        path = checkpoint_path(variant)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no stored weights; run {COMMAND}")
        task = copy_task()
        model, _ = load_model(path)
        _RUNS[key] = CopyRun(task, variant, CHECKPOINT_SEED, model.eval(), None, evaluate_variant(model, task))
    return _RUNS[key]


def weight_difference(a, b) -> float:
    """max |a - b| over every parameter of two models with the same parameter names."""
    pa, pb = a.parameters(), b.parameters()
    if set(pa) != set(pb):
        raise ValueError(f"the models' parameters differ: {sorted(set(pa) ^ set(pb))}")
    return max(float(np.max(np.abs(pa[n] - pb[n]))) for n in pa)


class CopyExample(NamedTuple):
    """One greedy decoding of a pointer-generator, position by position (:func:`copy_example`)."""
    source: list  # S source tokens (str)
    target: str
    output: list  # T generated tokens (str), <eos> included; a copied unseen name as itself
    copied_id: np.ndarray  # (T,) bool: the token's extended id is a source-only one (only copying writes it)
    p_gen: np.ndarray  # (T,) the generation probability at each output position
    attention: np.ndarray  # (T, S) a_t, the copy attention
    coverage: np.ndarray  # (T + 1, S) c_t = sum of a before t, and the total after the last step
    p_token: np.ndarray  # (T,) P(w_t) of the emitted token under the mixture
    p_token_copy: np.ndarray  # (T,) its copy part, (1 - p_gen) sum_{i: x_i = w_t} a_t,i


def copy_example(run: CopyRun, pair) -> CopyExample:
    """Greedy-decode ``pair``'s source with ``run.model`` and re-run the decoder on its own
    output (teacher-forced, which gives the cached steps' numbers exactly) to read p_gen,
    the copy attention and the coverage at every position."""
    model, task = run.model, run.task
    if not isinstance(model, PointerGenerator):
        raise TypeError(f"run.model: expected a PointerGenerator (variant 'copy' or 'copy+coverage'), "
                        f"got {type(model).__name__} (variant {run.variant!r})")
    src = task.batch([pair]).input_ids  # (1, S)
    out = greedy_search(model, src, max_new_tokens=len(pair[1].split()) + 5)
    ext = out.sequences[:1, :int(out.lengths[0])]  # (1, T) extended ids
    dec_in = np.concatenate([[[model.config.bos_id]], ext[:, :-1]], axis=1)  # (1, T)
    P, cache = model.forward(src, dec_in)  # (1, T, V_ext)
    copy = cache.decoder.copy
    T = ext.shape[1]
    p_token = P[0, np.arange(T), ext[0]]  # (T,)
    a = copy.a[0]  # (T, S)
    hit = copy.src_ext[0][None, :] == ext[0][:, None]  # (T, S) source positions holding the emitted token
    p_copy = copy.p_copy[0] * (a * hit).sum(axis=1)  # (T,)
    coverage = np.concatenate([np.zeros((1, a.shape[1])), np.cumsum(a, axis=0)])  # (T + 1, S)
    tok = task.tokenizer
    words = [tok.id_to_token(int(i)) for i in src[0]]
    output = [tok.id_to_token(int(i)) for i in model.from_extended(ext, model.extend_source(src))[0]]
    return CopyExample(words, pair[1], output, ext[0] >= model.config.tgt_vocab_size, copy.p_gen[0].copy(),
                       a.copy(), coverage, p_token, p_copy)


def figure_pair(task: CopyTask | None = None) -> tuple[int, tuple]:
    """The report the section's heat map looks at: the first held-out report with unseen
    names and three events (the fewest: short enough to draw word by word).  Returns (index
    into the unseen evaluation set, pair)."""
    task = copy_task() if task is None else task
    pairs = eval_sets(task)["unseen"]
    i = next(i for i, (_, t) in enumerate(pairs) if t.count(TARGET_JOIN) == task.min_events - 1)
    return i, pairs[i]

