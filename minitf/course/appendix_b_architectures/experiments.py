"""Appendix B (*Architecture comparison*): the four models of minitf side by side, on one task.

The encoder-decoder (:class:`~minitf.models.EncoderDecoder`), the decoder-only
(:class:`~minitf.models.DecoderOnly`), the encoder-only (:class:`~minitf.models.EncoderOnly`)
and the RNN encoder-decoder (:class:`~minitf.models.RNNSeq2Seq`), each built small for the
``reverse`` task (``fbhad -> dahbf``) and measured live:

======================================  ===================================================
section of Appendix B                   what is measured here
======================================  ===================================================
set-up                                  :data:`ARCHITECTURES`, :func:`appendix_b_task`,
                                        :func:`model_config`, :func:`build_model`
1  what each computes                   :func:`parameter_counts` (``num_parameters()``
                                        against Lesson 6's formulas)
2  how each trains                      :func:`training_views` (one batch as each model
                                        reads it), :func:`format_training_view`
3  how each generates                   :func:`generation_caches` (what a decoding cache
                                        holds, read from a live one), :func:`step_latency`
4  the cost of a token                  :func:`forward_flops`, :func:`cost_row`
5  the same budget, the same task       :func:`quality_runs` (once per process),
                                        :func:`comparison_table`, :func:`format_table`
======================================  ===================================================

Sizes.  The transformers share D = 32, H = 4, F = 64 and two blocks each: the
encoder-decoder one encoder and one decoder block, the others two blocks of their own
kind.  The RNN is a one-layer LSTM encoder-decoder (E = Dr = 32) with Luong's dot attention
(``attention_feed="output"``): the ancestor the transformer replaced, not the fixed vector
it started from.  All four land within a few thousand parameters of each other
(:func:`parameter_counts`).  Float64, as every lesson (:mod:`minitf.course.kit.runs`).

Counting.  FLOPs as Lesson 6 counts them (:mod:`minitf.course.l06_encoder_decoder`): matrix products
only, 2 per multiply-add, the backward twice the forward, so a training step is 3 x the
forward.  The transformers' forward counts *are* Lesson 6's :func:`~minitf.course.kit.counts.forward_flops`
on a re-shaped config (see :func:`forward_flops`); the RNN's come from its weights' shapes.
Bytes are NumPy's ``nbytes``.  "Per token" means per *scored* token: a position whose label
is not -100, the positions a training step learns from.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ...checks import check_choice, check_int
from ...data import IGNORE_INDEX, Batch
from ...decoding import decode_step, start_decoding
from ...models import DecoderOnly, EncoderDecoder, EncoderOnly, RNNSeq2Seq
from ...models.common import cache_nbytes
from ...data.noise import mask_tokens
from ...models.rnn_seq2seq import default_rnn_config
from ...data.tasks import Task, get_task
from ...training import (TrainConfig, decoder_only_attention_mask, decoder_only_batch, forward_loss, make_optimizer,
                         train)
from ..kit import counts
from ..kit.runs import lesson_model_config, lesson_train_config, once_per_process

__all__ = [
    "ARCHITECTURES", "GENERATORS", "appendix_b_task", "model_config", "build_model", "parameter_counts",
    "COST_SHAPE", "cost_batch", "TrainingView", "training_views", "format_training_view",
    "GenerationCache", "generation_caches", "step_latency", "forward_flops", "scored_tokens",
    "CostRow", "cost_row", "QUALITY_STEPS", "QUALITY_BATCH", "QUALITY_SEEDS", "quality_train_config",
    "QualityRun", "quality_runs", "comparison_table", "format_table",
]

ARCHITECTURES = ("encoder-decoder", "decoder-only", "encoder-only", "RNN encoder-decoder")
"""The four models, in the order every table lists them."""

GENERATORS = ("encoder-decoder", "decoder-only", "RNN encoder-decoder")
"""The three that can write an output token by token (the encoder-only model fills blanks)."""

_TRANSFORMER = dict(d_model=32, n_heads=4, d_ff=64)


# ---- set-up -------------------------------------------------------------------------------------------
def appendix_b_task() -> Task:
    """``reverse``: 4 to 10 random letters of 12, written backwards."""
    return get_task("reverse")


def _check_arch(name: str) -> str:
    return check_choice("architecture", name, ARCHITECTURES)


def model_config(name: str, task: Task | None = None, seed: int = 0):
    """The config of architecture ``name`` (see the module docstring for the sizes).

    The encoder-only model gets one more token than the task's tokenizer, ``<mask>`` (id V,
    :func:`mask_id`): a character tokenizer has none (:func:`~minitf.models.mask_tokens`)."""
    task = appendix_b_task() if task is None else task
    name = _check_arch(name)
    V = task.tokenizer.vocab_size
    if name == "encoder-decoder":
        return lesson_model_config(task, seed, **_TRANSFORMER, n_encoder_layers=1, n_decoder_layers=1)
    if name == "decoder-only":
        return lesson_model_config(task, seed, **_TRANSFORMER, n_encoder_layers=0, n_decoder_layers=2)
    if name == "encoder-only":
        return lesson_model_config(task, seed, **_TRANSFORMER, n_encoder_layers=2, n_decoder_layers=0,
                                   src_vocab_size=V + 1, tgt_vocab_size=V + 1)
    return default_rnn_config(task, cell="lstm", embedding_size=32, hidden_size=32, attention="dot",
                              attention_feed="output", dtype="float64", seed=seed)


def mask_id(task: Task | None = None) -> int:
    """The encoder-only model's ``<mask>``: the first id past the tokenizer's vocabulary."""
    return (appendix_b_task() if task is None else task).tokenizer.vocab_size


def build_model(name: str, task: Task | None = None, seed: int = 0):
    """A fresh, untrained model of architecture ``name``."""
    task = appendix_b_task() if task is None else task
    config = model_config(name, task, seed)
    if name == "encoder-decoder":
        return EncoderDecoder(config)
    if name == "decoder-only":
        return DecoderOnly(config)
    if name == "encoder-only":
        return EncoderOnly(config, mask_id=mask_id(task))
    return RNNSeq2Seq(config)


# ---- section 1: parameters -------------------------------------------------------------------------------
def parameter_counts(seed: int = 0) -> dict:
    """``{architecture: {"parameters": num_parameters(), "formula": Lesson 6's count or None}}``.

    Lesson 6's :func:`~minitf.course.kit.counts.parameter_formula` counts an encoder-decoder;
    a decoder-only block has the same parts as an encoder block (one attention, a
    feed-forward, two norms), so the decoder-only model is counted as that formula's
    encoder side with the target's embedding (:func:`_decoder_only_parameters`).  The
    encoder-only head (a D x D transform, its norm, a bias per token) and the RNN have no
    Lesson 6 formula (None)."""
    out = {}
    for name in ARCHITECTURES:
        model = build_model(name, seed=seed)
        formula = None
        if name == "encoder-decoder":
            formula = counts.parameter_formula(model.config)["total"]
        elif name == "decoder-only":
            formula = _decoder_only_parameters(model.config)
        out[name] = {"parameters": model.num_parameters(), "formula": formula}
    return out


def _decoder_only_parameters(config) -> int:
    """Lesson 6's blocks, embedding, final norm and head, for a stack of causal blocks
    without cross-attention: ``L (4 D^2 + 2 D F + 9 D + F) + V D + 2 D (+ D V untied)
    (+ max_len D, learned positions: one table, not two)``."""
    f = counts.parameter_formula(config.replace(n_encoder_layers=config.n_decoder_layers, n_decoder_layers=0,
                                                  share_embeddings=True, positional="sinusoidal"))
    positions = config.max_len * config.d_model if config.positional == "learned" else 0
    return (f["encoder blocks"] + f["source embedding"] + f["decoder final norm"] + f["output head"] + positions)


# ---- the batch every cost is measured on -------------------------------------------------------------------
COST_SHAPE = (8, 10, 11)
"""(B, S, T) of :func:`cost_batch`: 8 reversals of the longest source, 10 letters, whose
targets are 10 letters and ``<eos>``: no padding, so every count is per token exactly."""


def cost_batch(seed: int = 0) -> Batch:
    """:data:`COST_SHAPE` random pairs with ordinary tokens only (Lesson 6's
    :func:`~minitf.course.kit.counts.random_batch`)."""
    B, S, T = COST_SHAPE
    return counts.random_batch(model_config("encoder-decoder"), B, S, T, seed)


# ---- section 2: how each trains --------------------------------------------------------------------------------
class TrainingView(NamedTuple):
    """One batch as one architecture's training step reads it (``forward_loss``'s own inputs)."""

    architecture: str
    inputs: dict  # name -> int array, what the model's forward takes
    labels: np.ndarray  # (B, *) aligned with the logits, -100 where nothing is scored


def training_views(batch: Batch | None = None, seed: int = 0) -> list:
    """For each architecture, the arrays :func:`minitf.training.forward_loss` feeds it for
    ``batch`` (by default two pairs of the task), and the labels it scores.

    * encoder-decoder and RNN: ``input_ids`` (the source), ``decoder_input_ids`` (the
      labels shifted right, ``<bos>`` first) and ``labels`` (the target, ``<eos>`` last);
    * decoder-only: one sequence ``source <bos> target``, and labels -100 on the source;
    * encoder-only: the source with 15 % of its tokens hidden (:func:`~minitf.models.mask_tokens`,
      drawn with ``seed``), labels only at the hidden positions.
    """
    task = appendix_b_task()
    batch = task.batch(task.dataset(2, seed=seed)) if batch is None else batch
    views = []
    for name in ARCHITECTURES:
        c = model_config(name, task)
        if name == "decoder-only":
            ids, labels = decoder_only_batch(batch, c.bos_id, c.pad_id)
            inputs = {"input_ids": ids, "attention_mask": decoder_only_attention_mask(batch, c.pad_id).astype(int)}
        elif name == "encoder-only":
            ids, labels = mask_tokens(batch.input_ids, np.random.default_rng(seed), mask_id=mask_id(task),
                                      vocab_size=c.src_vocab_size, special_ids=(c.pad_id, c.bos_id, c.eos_id))
            inputs = {"input_ids": ids}
        else:
            inputs, labels = {"input_ids": batch.input_ids, "decoder_input_ids": batch.decoder_input_ids}, batch.labels
        views.append(TrainingView(name, inputs, labels))
    return views


def _token(i: int, task: Task) -> str:
    if i == IGNORE_INDEX:
        return "-"
    if i == mask_id(task):
        return "<mask>"
    return task.tokenizer.id_to_token(int(i))


def format_training_view(view: TrainingView, row: int = 0) -> str:
    """Row ``row`` of each array of ``view``, one token per column (ids as tokens; ``-`` is
    -100, a position the loss skips)."""
    task = appendix_b_task()
    arrays = {**view.inputs, "labels": view.labels}
    width = max(len(k) for k in arrays)
    lines = [f"{view.architecture}:"]
    for key, a in arrays.items():
        cells = [str(int(v)) if key == "attention_mask" else _token(v, task) for v in a[row]]
        lines.append(f"  {key:<{width}}  " + " ".join(f"{c:>5}" for c in cells))
    return "\n".join(lines)


# ---- section 3: how each generates ---------------------------------------------------------------------------------
class GenerationCache(NamedTuple):
    """What a model keeps between decoding steps, for one example (B = 1), measured."""

    architecture: str
    fixed_bytes: int  # kept from the start, whatever the output's length (cross K/V, the prompt's K/V, memory)
    bytes_per_token: float  # what one more generated token adds
    parts: dict  # name -> shape, read from the live cache
    steps: int  # tokens fed


def _cache_bytes(cache) -> tuple:
    """(fixed, growing) bytes in use of a decoding cache: a KVCache's used self-attention slots
    grow, its cross-attention is fixed (a decoder-only prompt's slots are counted as growing;
    the caller subtracts them); an RNN state is all fixed."""
    if isinstance(cache, tuple) and hasattr(cache, "memory"):  # RNNDecodingState
        return cache_nbytes((cache.state, cache.memory)), 0
    n = cache.nbytes()
    return n["cross_attention"], n["self_attention_used"]


def generation_caches(seed: int = 0) -> list:
    """For each generating architecture (:data:`GENERATORS`), one source of
    :data:`COST_SHAPE`'s length decoded greedily for T steps from a fresh model, its cache
    measured after the start (encoder or prefill) and after each step."""
    batch = cost_batch(seed)
    src = batch.input_ids[:1]  # (1, S)
    T = batch.labels.shape[1]
    out = []
    for name in GENERATORS:
        model = build_model(name, seed=seed)
        with model.evaluating():
            cache = start_decoding(model, src, max_len=T)
            fixed0, grow0 = _cache_bytes(cache)
            ids = np.full((1, 1), model.config.bos_id)
            for _ in range(T):
                logits, cache = decode_step(model, ids, cache)
                ids = logits[:, -1].argmax(-1)[:, None]
            fixed, grow = _cache_bytes(cache)
        if name == "RNN encoder-decoder":
            m = cache.memory  # each field a copy per row (start_decoding repeats them for the G rows)
            parts = {"H_enc (the attention's values)": m.states.shape, "keys (dot: a copy of H_enc)": m.keys.shape,
                     "source mask": m.mask.shape, "conditioning h, c": tuple(a.shape for a in m.conditioning),
                     "decoder state h, c": tuple(a.shape for a in cache.state.layers[0])}
        else:
            kv = cache.layers[0]
            parts = {f"self K, V x {len(cache.layers)} layers (slots used / allocated)":
                     (cache.length, kv.K_self.shape)}
            if kv.K_cross is not None:
                parts[f"cross K, V x {len(cache.layers)} layers"] = kv.K_cross.shape
        # the decoder-only prompt's slots are in use before the first step: fixed, not growth
        out.append(GenerationCache(name, fixed + grow0, (grow - grow0) / T, parts, T))
    return out


def step_latency(name: str, seed: int = 0, repeats: int = 5) -> float:
    """Median seconds of one cached decoding step (B = 1, greedy) of a fresh model of
    ``name``, over ``repeats`` generations of T tokens (:data:`COST_SHAPE`); the encoder or
    prefill outside the clock."""
    name = check_choice("architecture", name, GENERATORS)
    repeats = check_int("repeats", repeats, low=1)
    batch = cost_batch(seed)
    src, T = batch.input_ids[:1], batch.labels.shape[1]
    model = build_model(name, seed=seed)
    times = []
    with model.evaluating():
        for _ in range(repeats + 1):  # the first round warms up
            cache = start_decoding(model, src, max_len=T)
            ids = np.full((1, 1), model.config.bos_id)
            lap = []
            for _ in range(T):
                t0 = time.perf_counter()
                logits, cache = decode_step(model, ids, cache)
                ids = logits[:, -1].argmax(-1)[:, None]
                lap.append(time.perf_counter() - t0)
            times.append(lap)
    return float(np.median(np.array(times[1:])))


# ---- section 4: the cost of a token --------------------------------------------------------------------------------
def forward_flops(name: str, B: int, S: int, T: int) -> int:
    """Forward FLOPs (matrix products, Lesson 6's convention) of one training batch of B
    pairs of S source and T target positions.

    * encoder-decoder: Lesson 6's :func:`~minitf.course.kit.counts.forward_flops`;
    * decoder-only: the same formula with the decoder's blocks counted as encoder blocks
      (self-attention and feed-forward, no cross-attention) over the one sequence of
      S + T positions, and the head over all S + T (minitf computes the whole masked
      (S+T)^2 score matrix, as it does for the encoder-decoder's T^2);
    * encoder-only: the formula's encoder over S and its head over S, plus the masked-LM
      head's D x D transform, 2 B S D^2;
    * RNN: every weight matrix once per position it reads (2 x its size): the encoder's
      LSTM per source token; the decoder's LSTM, W_c and W_U per target step; plus the dot
      attention's scores and weighted sum, 2 x 2 B T S K De (embeddings are lookups, biases
      additions: not counted).
    """
    name = _check_arch(name)
    c = model_config(name)
    if name == "encoder-decoder":
        return counts.forward_flops(c, B, S, T)["total"]
    if name == "decoder-only":
        return counts.forward_flops(c.replace(n_encoder_layers=c.n_decoder_layers, n_decoder_layers=0),
                                      B, S + T, S + T)["total"]
    if name == "encoder-only":
        return counts.forward_flops(c, B, S, S)["total"] + 2 * B * S * c.d_model ** 2
    model = build_model(name)
    enc = sum(p.size for k, p in model.parameters().items() if k.startswith("encoder.") and p.ndim == 2)
    dec = sum(p.size for k, p in model.parameters().items()
              if (k.startswith("decoder_cells.") or k in ("W_c", "W_U")) and p.ndim == 2)
    return 2 * B * S * enc + 2 * B * T * dec + 4 * B * T * S * c.state_size


def scored_tokens(name: str, batch: Batch, seed: int = 0) -> int:
    """Positions a training step on ``batch`` scores: B T (every target token) for the
    generators, the hidden tokens for the encoder-only model (its masking drawn with ``seed``)."""
    name = _check_arch(name)
    if name != "encoder-only":
        return int((batch.labels != IGNORE_INDEX).sum())
    c = model_config(name)
    _, labels = mask_tokens(batch.input_ids, np.random.default_rng(seed), mask_id=mask_id(),
                            vocab_size=c.src_vocab_size, special_ids=(c.pad_id, c.bos_id, c.eos_id))
    return int((labels != IGNORE_INDEX).sum())


def _activation_bytes(model, cache) -> int:
    if isinstance(model, RNNSeq2Seq):  # no activation_bytes of its own: the same count over its cache
        return cache_nbytes(cache)
    return model.activation_bytes(cache)["total"]


class CostRow(NamedTuple):
    """What one architecture costs on :func:`cost_batch`, measured."""

    architecture: str
    parameters: int
    positions: int  # positions one example makes the model process (S + T, S + T, S, or S and T)
    scored: int  # scored tokens in the batch
    train_flops_per_token: float  # 3 x forward FLOPs / scored tokens
    activation_bytes_per_token: float  # what a training forward keeps for its backward / scored tokens


def cost_row(name: str, seed: int = 0) -> CostRow:
    """Parameters, training FLOPs and activation bytes per scored token of a fresh model of
    ``name``, on :func:`cost_batch` (a live teacher-forced forward, as
    :func:`minitf.training.forward_loss` runs it)."""
    name = _check_arch(name)
    batch = cost_batch(seed)
    B, S, T = COST_SHAPE
    model = build_model(name, seed=seed)
    loss, _, cache, _, labels = forward_loss(model, batch, rng=seed)
    scored = int((labels != IGNORE_INDEX).sum())
    if scored != scored_tokens(name, batch, seed):
        raise AssertionError(f"{name}: forward_loss scored {scored} tokens, scored_tokens says otherwise")
    positions = S if name == "encoder-only" else S + T  # one sequence of S + T, or S source + T target
    return CostRow(name, model.num_parameters(), positions, scored, 3 * forward_flops(name, B, S, T) / scored,
                   _activation_bytes(model, cache) / scored)


# ---- section 5: the same budget, the same task ----------------------------------------------------------------------
QUALITY_STEPS = 200
"""Training steps of every run of :func:`quality_runs`."""
QUALITY_BATCH = 32
"""Examples per step."""
QUALITY_SEEDS = 2
"""Seeds per generating architecture (the encoder-only model is trained on one)."""


def quality_train_config(seed: int = 0) -> TrainConfig:
    """:data:`QUALITY_STEPS` AdamW steps of :data:`QUALITY_BATCH` examples, warm-up 20 then
    cosine decay from 5e-3, one evaluation at the end on 128 held-out reversals; the same
    for every architecture."""
    return lesson_train_config(seed, steps=QUALITY_STEPS, batch_size=QUALITY_BATCH, lr=5e-3, warmup=20,
                               eval_every=0, eval_size=128)


class QualityRun(NamedTuple):
    architecture: str
    seed: int
    final: dict  # train()'s evaluation after the last step
    seconds: float  # wall time of the training (evaluation included)


@once_per_process
def quality_runs(seeds: int = QUALITY_SEEDS) -> list:
    """Train every architecture on ``reverse`` with :func:`quality_train_config`, seeds 0 ..
    ``seeds`` - 1 (the encoder-only model on seed 0 only: its number is a check, not a
    contender).  Once per process."""
    seeds = check_int("seeds", seeds, low=1)
    task = appendix_b_task()
    runs = []
    for name in ARCHITECTURES:
        for seed in range(seeds if name in GENERATORS else 1):
            model = build_model(name, task, seed)
            tc = quality_train_config(seed)
            t0 = time.perf_counter()
            history = train(model, task, tc, optimizer=make_optimizer(model.parameters(), tc))
            runs.append(QualityRun(name, seed, history.evals[-1], time.perf_counter() - t0))
    return runs


def comparison_table(seeds: int = QUALITY_SEEDS, step_seconds: dict | None = None) -> list:
    """One dict per architecture: its :class:`CostRow` fields, the generation cache and
    step latency (None for the encoder-only model), and the quality runs' metrics, mean
    over seeds and per seed.

    ``step_seconds``: ``{generator: seconds}`` already measured by :func:`step_latency` (the
    notebook measures them once, in section 3, and the table shows those same numbers: two
    timings of one thing differ from run to run); None measures them here."""
    if step_seconds is None:
        step_seconds = {name: step_latency(name) for name in GENERATORS}
    missing = [name for name in GENERATORS if name not in step_seconds]
    if missing:
        raise ValueError(f"step_seconds: expected a time for each of {list(GENERATORS)}; missing {missing}")
    caches = {g.architecture: g for g in generation_caches()}
    runs = quality_runs(seeds)
    rows = []
    for name in ARCHITECTURES:
        row = cost_row(name)._asdict()
        g = caches.get(name)
        row["cache_fixed_bytes"] = None if g is None else g.fixed_bytes
        row["cache_bytes_per_token"] = None if g is None else g.bytes_per_token
        row["step_seconds"] = float(step_seconds[name]) if name in GENERATORS else None
        mine = [r for r in runs if r.architecture == name]
        key = "free_running_exact_match" if name in GENERATORS else "masked_token_accuracy"
        row["quality_metric"] = key
        row["quality_per_seed"] = [r.final[key] for r in mine]
        row["quality"] = float(np.mean(row["quality_per_seed"]))
        if name in GENERATORS:
            row["token_accuracy_per_seed"] = [r.final["free_running_token_accuracy"] for r in mine]
            row["token_accuracy"] = float(np.mean(row["token_accuracy_per_seed"]))
        rows.append(row)
    return rows


def format_table(rows: list) -> str:
    """The comparison as a text table; ``n/a`` where an architecture has no such number."""
    head = (f"{'architecture':<20}{'params':>8}{'train FLOPs':>13}{'act. bytes':>12}{'cache B/tok':>13}"
            f"{'fixed cache B':>15}{'step ms':>9}{'exact match':>13}{'token acc':>11}")
    sub = (f"{'':<20}{'':>8}{'/ token':>13}{'/ token':>12}{'(grows)':>13}{'(per example)':>15}{'(median)':>9}"
           f"{'(free-run)':>13}{'(free-run)':>11}")
    lines = [head, sub, "-" * len(head)]
    for r in rows:
        gen = r["cache_bytes_per_token"] is not None
        lines.append(
            f"{r['architecture']:<20}{r['parameters']:>8,}{r['train_flops_per_token']:>13,.0f}"
            f"{r['activation_bytes_per_token']:>12,.0f}"
            + (f"{r['cache_bytes_per_token']:>13,.0f}{r['cache_fixed_bytes']:>15,}{1e3 * r['step_seconds']:>9.2f}"
               f"{r['quality']:>13.3f}{r['token_accuracy']:>11.3f}" if gen else
               f"{'n/a':>13}{'n/a':>15}{'n/a':>9}{'n/a':>13}{'n/a':>11}"))
    return "\n".join(lines)
