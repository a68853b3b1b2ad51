"""Lesson 8, section 5 (*training vs. inference: the gap that matters*) and the lesson's
learned / config / state table.

======================================  ===================================================
section of Lesson 8                     what is measured here
======================================  ===================================================
5  training vs inference                :func:`predict_both_ways` (the argmax given the true
                                        prefix, and greedy decoding fed its own),
                                        :func:`error_compounding` (1 - (1 - eps)^T against
                                        the model), :func:`exposure_example` (the example
                                        free running hurts most)
table  learned / config / state         :func:`learned_config_state`, :func:`format_rows`
======================================  ===================================================

The free-running side is :func:`minitf.decoding.greedy_search`, the decoder ``minitf
generate`` and the training loop's evaluation use: its output is padded with ``<pad>`` after
each row's ``<eos>``.  A position after the model's ``<eos>`` is "nothing generated": it
never matches a target token.  The reference run that calls these over training is
:func:`minitf.course.l08_teacher_forcing.lesson8_run`, which re-exports every name here.

Shapes in the course's letters (:mod:`minitf`), and T' for a generated length.
"""
from __future__ import annotations

import textwrap
from typing import NamedTuple

import numpy as np

from ...data import IGNORE_INDEX, Batch, shift_right
from ...models import EncoderDecoder
from ...training import forward_loss, make_schedule, sequence_metrics
from ..kit.predictions import generated, predict_both_ways
from ..kit.runs import check_batch

__all__ = ["predict_both_ways", "Compounding", "error_compounding", "edit_distance", "exposure_example", "Row",
           "learned_config_state", "format_rows"]


# ---- section 5: training vs inference ----------------------------------------------------------------
class Compounding(NamedTuple):
    """Sequence errors by target length, measured and predicted (:func:`error_compounding`)."""

    lengths: np.ndarray  # (K,) target lengths T in tokens (<eos> included) present in the set
    counts: np.ndarray  # (K,) examples of each length
    free_running_error: np.ndarray  # (K,) share of free-running outputs that are not exactly right
    teacher_forced_error: np.ndarray  # (K,) share of examples with a wrong teacher-forced argmax somewhere
    epsilon: float  # per-token teacher-forced error, pooled over every length
    epsilon_by_length: np.ndarray  # (K,) per-token teacher-forced error among examples of length T
    predicted: np.ndarray  # (K,) 1 - (1 - epsilon)^T
    predicted_by_length: np.ndarray  # (K,) 1 - (1 - epsilon_T)^T
    teacher_forced_token_accuracy: float
    free_running_token_accuracy: float
    free_running_exact_match: float


def error_compounding(model: EncoderDecoder, batch: Batch, *, predictions=None) -> Compounding:
    """How often a whole output is wrong, by target length, against 1 - (1 - eps)^T.

    eps is the per-token error of the teacher-forced argmax (pooled over ``batch``); if
    every token went wrong independently with probability eps, a T-token output would be
    wrong with probability 1 - (1 - eps)^T.  The measured side is the free-running
    (greedy) output's exact match, grouped by T.  ``predicted_by_length`` uses the eps
    measured among the examples of each length instead.  ``predictions``: the output of
    :func:`predict_both_ways` for this model and batch, if already computed.
    """
    check_batch(batch)
    tf_pred, fr_pred = predict_both_ways(model, batch) if predictions is None else predictions
    eos_id = model.config.eos_id
    labels = batch.labels
    real = labels != IGNORE_INDEX  # (B, T)
    tf_right = (tf_pred == labels) & real  # (B, T)
    lengths_all = real.sum(axis=1)  # (B,)
    epsilon = 1.0 - float(tf_right.sum() / real.sum())
    lengths = np.unique(lengths_all)
    counts, fr_err, tf_err, eps_T = [], [], [], []
    for T in lengths:
        rows = lengths_all == T
        m = sequence_metrics(fr_pred[rows], labels[rows], eos_id)
        counts.append(int(rows.sum()))
        fr_err.append(1.0 - m["exact_match"])
        tf_err.append(float(np.mean(tf_right[rows].sum(axis=1) < T)))
        eps_T.append(1.0 - float(tf_right[rows].sum() / real[rows].sum()))
    eps_T = np.array(eps_T)
    overall = sequence_metrics(fr_pred, labels, eos_id)
    return Compounding(lengths, np.array(counts), np.array(fr_err), np.array(tf_err), epsilon, eps_T,
                       1.0 - (1.0 - epsilon) ** lengths, 1.0 - (1.0 - eps_T) ** lengths,
                       1.0 - epsilon, overall["token_accuracy"], overall["exact_match"])


def edit_distance(a, b) -> int:
    """Levenshtein distance between the sequences ``a`` and ``b``: the fewest insertions, deletions
    and substitutions of one token that turn ``a`` into ``b``.  Unlike a position-by-position count,
    one dropped or repeated token costs 1, not one for every position after it."""
    d = np.arange(len(b) + 1)  # distances from a[:0] to every prefix of b
    for i, x in enumerate(a, start=1):
        prev, d = d, np.empty_like(d)
        d[0] = i
        for j, y in enumerate(b, start=1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (x != y))  # delete x, insert y, keep or swap
    return int(d[-1])


def exposure_example(model: EncoderDecoder, batch: Batch, tokenizer, *, predictions=None) -> dict:
    """The example of ``batch`` where feeding the model its own output hurts most.

    For each example, counts the wrong tokens of the teacher-forced argmax and of the
    free-running output (position by position against the target; a position after the
    output's ``<eos>`` is wrong: nothing was generated there); picks the largest difference
    (ties: the shorter target, then the first).  Returns ``index``, ``source`` (text), and
    token lists ``target``, ``teacher_forced``, ``free_running`` (cut to the target length,
    "" where nothing was generated) with boolean lists ``teacher_forced_right`` and
    ``free_running_right``, and ``free_running_edits``: the :func:`edit_distance` from the target
    to what was generated (up to its ``<eos>``), which does not charge a token that is right one
    place over as wrong.  ``predictions``: as for :func:`error_compounding`.
    """
    check_batch(batch)
    tf_pred, fr_pred = predict_both_ways(model, batch) if predictions is None else predictions
    labels = batch.labels
    B, T = labels.shape
    real = labels != IGNORE_INDEX  # (B, T)
    fr = generated(fr_pred, model.config.eos_id, T)  # (B, T)
    tf_wrong = ((tf_pred != labels) & real).sum(axis=1)  # (B,)
    fr_wrong = ((fr != labels) & real).sum(axis=1)  # (B,)
    lengths = real.sum(axis=1)
    i = int(np.lexsort((np.arange(B), lengths, -(fr_wrong - tf_wrong)))[0])
    L = int(lengths[i])

    def tokens(ids):
        return [tokenizer.id_to_token(int(t)) if t >= 0 else "" for t in ids[:L]]

    return {"index": i, "source": tokenizer.decode(batch.input_ids[i]),
            "target": tokens(labels[i]), "teacher_forced": tokens(tf_pred[i]), "free_running": tokens(fr[i]),
            "teacher_forced_right": (tf_pred[i, :L] == labels[i, :L]).tolist(),
            "free_running_right": (fr[i, :L] == labels[i, :L]).tolist(),
            "free_running_edits": edit_distance(labels[i, :L].tolist(), [int(t) for t in fr[i] if t >= 0])}


# ---- the table: learned / config / state --------------------------------------------------------------
class Row(NamedTuple):
    """One line of the learned / config / state table."""

    kind: str  # "LEARNED", "CONFIG", "CONFIG/STATE" or "STATE"
    item: str
    value: str  # read from the live object


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.1f} kB"


def learned_config_state(run, batch: Batch | None = None) -> list:
    """The learned / config / state table of Lesson 8, read from live objects.

    ``run``: a :class:`~minitf.course.l08_teacher_forcing.Lesson8Run` (its model, configs, task and
    optimizer are read).  LEARNED: ``run.model.parameters()``, grouped by the module that
    owns them.  CONFIG: the teacher-forcing policy, shift and start token as seen in
    ``batch`` (a training batch of the run's task if None), the learning-rate schedule, the
    batch size, then every remaining field of the ModelConfig and TrainConfig.
    CONFIG/STATE: the target padding mask of ``batch``.  STATE: logits, the cached
    activations of both stacks, gradients and the optimizer's moments, from one
    forward/backward on ``batch`` and ``run.optimizer.state_dict()``.
    """
    model, mc, tc = run.model, run.model_config, run.train_config
    tok = run.task.tokenizer
    if batch is None:
        batch = next(run.task.batches(tc.batch_size, np.random.default_rng(tc.seed)))
    check_batch(batch)
    rows = []
    # LEARNED: every weight, by owning module
    groups: dict = {}
    for name, p in model.parameters().items():
        parts = name.split(".")
        owner = ".".join(parts[:2]) if parts[0].endswith("_layers") else parts[0]
        n_arrays, n_scalars = groups.get(owner, (0, 0))
        groups[owner] = (n_arrays + 1, n_scalars + p.size)
    for owner, (n_arrays, n_scalars) in groups.items():
        rows.append(Row("LEARNED", owner, f"{n_arrays} array{'s' * (n_arrays != 1)}, {n_scalars:,} weights"))
    # a score shift shared by every key leaves each softmax row unchanged, so the key biases' exact
    # gradient is zero: what backward gives them is rounding, and they stay where they started (0)
    params = model.parameters()
    key_biases = [name for name in params if name.rsplit(".", 1)[-1] == "b_k"]
    n_key = sum(params[name].size for name in key_biases)
    with model.evaluating():
        model.zero_grad()
        _, dlogits, cache, logits, _ = forward_loss(model, batch)
        model.backward(dlogits, cache)
        grads = model.gradients()
        largest = max((float(np.abs(grads[name]).max()) for name in key_biases), default=0.0)
        others = min((float(np.abs(g).max()) for name, g in grads.items() if name not in key_biases), default=0.0)
        model.zero_grad()  # the table leaves no gradients behind
    moved = max((float(np.abs(params[name]).max()) for name in key_biases), default=0.0)
    rows.append(Row("LEARNED", "total",
                    f"{model.num_parameters():,} weights, every one given a gradient by each step's backward except "
                    f"the {n_key:,} of the {len(key_biases)} key biases b_k, whose exact gradient is zero (a score "
                    f"shift shared by every key leaves the softmax unchanged): on this batch theirs is rounding, "
                    f"at most {largest:.1e} (every other array's largest entry is at least {others:.1e}), and "
                    f"after {run.train_config.steps} steps they are at most {moved:.1e} from their initial 0"))
    # CONFIG
    shifted = shift_right(batch.labels, mc.bos_id, mc.pad_id)
    starts = sorted({tok.id_to_token(int(i)) for i in batch.decoder_input_ids[:, 0]})
    schedule = make_schedule(tc, mc.d_model)
    rows += [
        Row("CONFIG", "teacher-forcing policy",
            f"always: every step feeds decoder_input_ids built from the labels "
            f"(= shift_right(labels) on this batch: {bool(np.array_equal(batch.decoder_input_ids, shifted))})"),
        Row("CONFIG", "shift convention", "right by one, start token in front: position t is fed y_{t-1}"),
        Row("CONFIG", "start token", f"{' '.join(starts)} (id {mc.bos_id}) at position 0 of every decoder input"),
        Row("CONFIG", "LR schedule", f"{schedule!r}, optimizer {tc.optimizer}"
            + (f"; total = steps + 1 = {schedule.total}: the cosine reaches 0 one step after the last of the "
               f"{tc.steps} updates, so every update moves the weights" if tc.schedule == "warmup_cosine" else "")),
        Row("CONFIG", "batch size", f"{tc.batch_size} examples ({batch.n_tokens} real target tokens here)"),
    ]
    shown = {"batch_size", "lr", "schedule", "warmup", "optimizer", "steps", "progress"}
    rows.append(Row("CONFIG", "ModelConfig", ", ".join(f"{k}={v}" for k, v in mc.to_dict().items())))
    rows.append(Row("CONFIG", "TrainConfig", ", ".join(f"{k}={v}" for k, v in vars(tc).items() if k not in shown)
                    + f", steps={tc.steps}"))
    # CONFIG/STATE: the target padding mask, fixed by the data, recomputed per batch
    mask = batch.target_mask
    rows.append(Row("CONFIG/STATE", "target padding mask",
                    f"{mask.shape} bool, {int(mask.sum())} real of {mask.size} positions (labels == {IGNORE_INDEX})"))
    # STATE: what one step creates and throws away (or, for the optimizer, keeps)
    act = model.activation_bytes(cache)  # of the forward/backward above
    rows.append(Row("STATE", "logits", f"{logits.shape} {logits.dtype}, {_mb(logits.nbytes)}"))
    rows.append(Row("STATE", "cached activations",
                    f"encoder {_mb(act['encoder'])} + decoder {_mb(act['decoder'])} + head {_mb(act['head'])} "
                    f"= {_mb(act['total'])}"))
    rows.append(Row("STATE", "gradients", f"{len(grads)} arrays, {_mb(sum(g.nbytes for g in grads.values()))} "
                                          "(zeroed before every backward)"))
    state = run.optimizer.state_dict()
    buffers = sorted({k.split("/")[0] for k in state if "/" in k})
    for b in buffers:
        arrays = [v for k, v in state.items() if k.startswith(b + "/")]
        nbytes = sum(a.nbytes for a in arrays)
        rows.append(Row("STATE", f"optimizer moment {b}", f"{len(arrays)} arrays, {_mb(nbytes)}"))
    rows.append(Row("STATE", "optimizer step", f"{int(state['step'])} updates so far"))
    return rows


def format_rows(rows: list, width: int = 100) -> str:
    """The table as aligned plain text, long values wrapped to ``width`` characters."""
    k = max(len(r.kind) for r in rows)
    i = max(len(r.item) for r in rows)
    indent = " " * (k + i + 4)
    lines = []
    for r in rows:
        wrapped = textwrap.wrap(r.value, width=max(20, width - len(indent))) or [""]
        lines.append(f"{r.kind:<{k}}  {r.item:<{i}}  {wrapped[0]}")
        lines += [indent + w for w in wrapped[1:]]
    return "\n".join(lines)
