"""Measurements behind Lesson 8 (*Training: teacher forcing & the loss*) and its figures.

Each function here runs minitf's own model, loss and training loop and returns what
it measured; the lesson notebook prints these numbers and the figures draw them, so
neither holds model code of its own.

======================================  ===================================================
section of Lesson 8                     what is measured here
======================================  ===================================================
1  autoregression vs parallel training  :func:`parallel_vs_sequential`: one teacher-forced
                                        pass against T sequential steps, logits and time
2  shift and causal mask                :func:`train_variant` with a leak --
                                        :func:`without_causal_mask` or
                                        :func:`labels_as_inputs` -- loss vs free-running
3  the loss                             :func:`logit_gradient_check` (p_hat - y against
                                        finite differences), :func:`padding_invariance`
4  the gradient's journey               :func:`gradient_journey` (norms stage by stage, each
                                        decoder block's share of dL/dH_enc),
                                        :func:`cross_attention_off`, :func:`activation_memory`
5  training vs inference                :func:`lesson8_run` (teacher-forced and free-running
                                        accuracy over training), :func:`error_compounding`
                                        (1 - (1 - eps)^T against the model),
                                        :func:`exposure_example`
table  learned / config / state         :func:`learned_config_state`
======================================  ===================================================

The lesson's reference run (:func:`lesson8_run`) is a small encoder-decoder trained on
the ``reverse`` task for a few hundred steps: a few seconds on two cores.  It is cached
by seed, so the notebook and both figures share one trained model; treat the cached
model as read-only (the context managers here restore what they change).

Shapes: B batch, S source length, T target length, D d_model, V vocabulary.
"""
from __future__ import annotations

import contextlib
import functools
import math
import time
from typing import Iterator, NamedTuple

import numpy as np

from .blocks import DecoderBlock
from .checks import check_positive_int
from .config import ModelConfig
from .data import IGNORE_INDEX, Batch, shift_right
from .gradcheck import check_gradients, rel_error
from .layers.softmax import softmax
from .loss import cross_entropy
from .models import DecoderOnly, EncoderDecoder
from .tasks import Task, get_task
from .training import (History, TrainConfig, default_model_config, forward_loss, greedy_decode,
                       make_optimizer, make_schedule, sequence_metrics, train)

__all__ = [
    "lesson8_task", "lesson8_model_config", "lesson8_train_config", "lesson8_batch", "to_float64",
    "sequential_logits", "ParallelCheck", "parallel_vs_sequential",
    "VARIANTS", "without_causal_mask", "labels_as_inputs", "LabelsAsInputs", "Run", "free_running_samples",
    "train_variant",
    "leakage_runs",
    "logit_gradient_check", "PaddingCheck", "padding_invariance",
    "Stage", "GradientJourney", "gradient_journey", "cross_attention_off", "encoder_parameter_names",
    "activation_memory",
    "predict_both_ways", "Compounding", "error_compounding", "exposure_example", "Lesson8Run", "lesson8_run",
    "Row", "learned_config_state", "format_rows",
]


# ---- the lesson's experiment ----------------------------------------------------------------
def lesson8_task() -> Task:
    """The task every experiment of the lesson trains on: reverse strings of 2..12 letters
    over an 8-letter alphabet (targets of 3..13 tokens with ``<eos>``)."""
    return get_task("reverse", min_len=2, max_len=12, n_symbols=8)


def lesson8_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """A small encoder-decoder for :func:`lesson8_task`: D = 32, H = 2, F = 64, two encoder
    blocks and three decoder blocks (three shares of dL/dH_enc to look at).

    Embeddings are neither shared nor tied, so every parameter belongs to exactly one
    stage of the gradient's journey: the source embedding to the encoder, ``W_U`` to the
    head.  ``overrides`` replace any field.

    float64, unlike ordinary training: the lesson's numbers and figures must come out the
    same on every machine.  In float32 the last-bit differences between BLAS builds and
    thread counts grow over 400 training steps into visibly different curves; in float64
    they stay far below anything printed or drawn.  At this size it costs little time.
    """
    task = lesson8_task() if task is None else task
    base = dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=2, n_decoder_layers=3,
                share_embeddings=False, tie_output=False, seed=seed, dtype="float64")
    base.update(overrides)
    return default_model_config(task, **base)


def lesson8_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """400 AdamW steps of 32 examples, warm-up then cosine decay from 3e-3, evaluated on
    128 fixed examples every 25 steps.  ``overrides`` replace any field."""
    base = dict(steps=400, batch_size=32, lr=3e-3, warmup=20, eval_every=25, eval_size=128, seed=seed,
                progress=False)
    base.update(overrides)
    return TrainConfig(**base)


def lesson8_batch(seed: int = 0, size: int = 32) -> Batch:
    """A fixed batch of ``size`` examples of :func:`lesson8_task` (the one section 4 and
    Figure 2 measure the gradient on)."""
    task = lesson8_task()
    return task.batch(task.dataset(check_positive_int("size", size), seed=seed + 30_000))


def to_float64(model: EncoderDecoder) -> EncoderDecoder:
    """A float64 copy of ``model`` with the same weights (for finite differences)."""
    _check_model(model)
    twin = EncoderDecoder(model.config.replace(dtype="float64"))
    source = model.parameters()
    for name, p in twin.parameters().items():
        p[...] = source[name]
    return twin


def _check_model(model) -> None:
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model: expected an EncoderDecoder, got {type(model).__name__}")


def _check_batch(batch) -> None:
    if not isinstance(batch, Batch):
        raise TypeError(f"batch: expected a minitf.data.Batch, got {type(batch).__name__}")




def _norm(arrays) -> float:
    """Frobenius norm of several arrays taken together, as one vector (summed in float64)."""
    return float(math.sqrt(sum(float(np.vdot(a, a)) for a in (np.asarray(x, dtype=np.float64) for x in arrays))))


def _module_grad_norm(module) -> float:
    return _norm(module.gradients().values())


# ---- section 1: one parallel pass = T sequential steps -----------------------------------------
def sequential_logits(model: EncoderDecoder, src_ids: np.ndarray, decoder_input_ids: np.ndarray) -> np.ndarray:
    """Teacher-forced logits computed one position at a time, as generation would.

    The encoder runs once; then for t = 0 .. T-1 the decoder is run on the true prefix
    ``decoder_input_ids[:, :t+1]`` and only its last position is kept.  T dependent
    passes, against :meth:`EncoderDecoder.forward`'s one.

    src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V)
    """
    _check_model(model)
    src_ids, decoder_input_ids = np.asarray(src_ids), np.asarray(decoder_input_ids)
    H_enc, _ = model.encode(src_ids)  # (B, S, D), once
    src_mask = model.source_mask(src_ids)  # (B, 1, 1, S)
    steps = []
    for t in range(decoder_input_ids.shape[1]):
        logits_t, _ = model.decode(decoder_input_ids[:, :t + 1], H_enc, src_mask)  # (B, t+1, V)
        steps.append(logits_t[:, -1])  # (B, V) the newest position only
    return np.stack(steps, axis=1)  # (B, T, V)


class ParallelCheck(NamedTuple):
    """One teacher-forced pass against T sequential steps (:func:`parallel_vs_sequential`)."""

    parallel: np.ndarray  # (B, T, V) logits of model.forward
    sequential: np.ndarray  # (B, T, V) logits of sequential_logits
    max_abs_diff: float  # max |parallel - sequential|
    parallel_seconds: float  # best of `repeats` timings
    sequential_seconds: float
    n_positions: int  # T


def parallel_vs_sequential(model: EncoderDecoder, batch: Batch, repeats: int = 3) -> ParallelCheck:
    """Score every target position of ``batch`` in one pass and in T sequential passes,
    in eval mode; time each (the best of ``repeats`` runs, ``time.perf_counter``)."""
    _check_model(model)
    _check_batch(batch)
    repeats = check_positive_int("repeats", repeats)

    def best_time(fn):
        times, out = [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        return out, min(times)

    with model.evaluating():
        parallel, t_par = best_time(lambda: model.forward(batch.input_ids, batch.decoder_input_ids)[0])
        sequential, t_seq = best_time(lambda: sequential_logits(model, batch.input_ids, batch.decoder_input_ids))
    return ParallelCheck(parallel, sequential, float(np.max(np.abs(parallel - sequential))), t_par, t_seq,
                         batch.decoder_input_ids.shape[1])


# ---- section 2: label leakage ----------------------------------------------------------------------
VARIANTS = ("teacher_forced", "no_causal_mask", "labels_as_inputs")
"""How :func:`train_variant` feeds the decoder: the right way, and the two leaks of section 2.

* ``"teacher_forced"``: decoder inputs = labels shifted right (position t sees y_{t-1});
* ``"no_causal_mask"``: the same inputs, but decoder self-attention is unmasked, so
  position t can read the input at t + 1, which *is* y_t;
* ``"labels_as_inputs"``: the decoder is fed y_t itself instead of y_{t-1} (no shift).
"""


@contextlib.contextmanager
def without_causal_mask(model: EncoderDecoder) -> Iterator[EncoderDecoder]:
    """Inside the block, ``model``'s decoder self-attention runs with no causal mask.

    The mechanism: each of the model's decoder blocks gets an instance-level ``forward``
    that calls :meth:`DecoderBlock.forward` with ``self_mask=None`` (cross-attention keeps
    its source-padding mask).  Only this model is affected, its weights and caches are
    untouched, and the blocks' own ``forward`` comes back on exit, even after an error.
    Training and evaluating inside the block shows what label leakage does.
    """
    _check_model(model)
    blocks = list(model.decoder_layers)
    if any("forward" in vars(block) for block in blocks):
        raise RuntimeError("model: its decoder blocks are already unmasked (without_causal_mask does not nest)")

    def unmasked(block):
        def forward(x, h_enc=None, self_mask=None, cross_mask=None):
            return DecoderBlock.forward(block, x, h_enc, None, cross_mask)  # the causal mask dropped
        return forward

    for block in blocks:
        block.forward = unmasked(block)
    try:
        yield model
    finally:
        for block in blocks:
            vars(block).pop("forward", None)


def labels_as_inputs(batch: Batch, pad_id: int) -> Batch:
    """The leaky batch: ``decoder_input_ids`` = the labels themselves (y_t at position t,
    no shift), ignored labels turned into ``pad_id``.  Labels are unchanged."""
    _check_batch(batch)
    decoder_input_ids = np.where(batch.labels == IGNORE_INDEX, pad_id, batch.labels)  # (B, T)
    return Batch(batch.input_ids, decoder_input_ids.astype(np.int64), batch.labels)


class LabelsAsInputs:
    """A task whose batches feed the decoder y_t instead of y_{t-1} (:func:`labels_as_inputs`).

    Wraps a :class:`~minitf.tasks.Task` for :func:`minitf.training.train`: same pairs,
    same tokenizer, same labels; only ``decoder_input_ids`` change.
    """

    def __init__(self, task: Task):
        if not isinstance(task, Task):
            raise TypeError(f"task: expected a minitf.tasks.Task, got {type(task).__name__}")
        self.task = task
        self.tokenizer = task.tokenizer
        self.name = f"{task.name} (labels as inputs)"

    def batch(self, pairs) -> Batch:
        return labels_as_inputs(self.task.batch(pairs), self.tokenizer.pad_id)

    def batches(self, batch_size: int, rng, exclude=()) -> Iterator[Batch]:
        for b in self.task.batches(batch_size, rng, exclude):
            yield labels_as_inputs(b, self.tokenizer.pad_id)

    def dataset(self, n: int, seed: int):
        return self.task.dataset(n, seed)


class Run(NamedTuple):
    """A model trained by :func:`train_variant`."""

    variant: str
    model: EncoderDecoder
    optimizer: object
    history: History
    samples: list  # [(source, target, free-running output)] for three evaluation examples


def free_running_samples(model: EncoderDecoder, task: Task, n: int = 3, seed: int = 7) -> list:
    """``[(source, target, output)]`` for ``n`` fixed examples of ``task``: the model's greedy,
    free-running output as text (eval mode)."""
    _check_model(model)
    pairs = task.dataset(check_positive_int("n", n), seed=seed)
    batch = task.batch(pairs)
    tok = task.tokenizer
    with model.evaluating():
        pred = greedy_decode(model, batch.input_ids, batch.labels.shape[1] + 2, tok.bos_id, tok.eos_id)
    return [(src, tgt, tok.decode(row)) for (src, tgt), row in zip(pairs, pred)]


def train_variant(variant: str, task: Task | None = None, model_config: ModelConfig | None = None,
                  train_config: TrainConfig | None = None, callback=None) -> Run:
    """Train a fresh model with :func:`minitf.training.train`, feeding the decoder as
    ``variant`` says (one of :data:`VARIANTS`).

    The leaky variants are trained *and evaluated* under their leak (the free-running
    evaluation always feeds the model its own output: there is nothing to leak from
    at the last position).  Defaults: the lesson's task, model and training set-up.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {', '.join(map(repr, VARIANTS))}, got {variant!r}")
    task = lesson8_task() if task is None else task
    model_config = lesson8_model_config(task) if model_config is None else model_config
    train_config = lesson8_train_config() if train_config is None else train_config
    model = EncoderDecoder(model_config)
    optimizer = make_optimizer(model.parameters(), train_config)
    leak = without_causal_mask(model) if variant == "no_causal_mask" else contextlib.nullcontext()
    fed = LabelsAsInputs(task) if variant == "labels_as_inputs" else task
    with leak:
        history = train(model, fed, train_config, optimizer=optimizer, callback=callback)
        samples = free_running_samples(model, task)
    return Run(variant, model, optimizer, history, samples)


@functools.lru_cache(maxsize=2)
def leakage_runs(seed: int = 0) -> dict:
    """The two leaky variants trained with the lesson's set-up (cached by seed):
    ``{"no_causal_mask": Run, "labels_as_inputs": Run}``.  The honest run to compare them
    with is :func:`lesson8_run` (same task, model and training config)."""
    task = lesson8_task()
    return {v: train_variant(v, task, lesson8_model_config(task, seed), lesson8_train_config(seed))
            for v in VARIANTS[1:]}


# ---- section 3: the loss -------------------------------------------------------------------------
def logit_gradient_check(logits: np.ndarray, labels: np.ndarray, *, max_entries: int | None = None,
                         seed: int = 0) -> dict:
    """Check :func:`minitf.loss.cross_entropy`'s ``dlogits`` two ways, in float64.

    Returns a dict:

    ``p_hat_minus_y``
        rel_error between ``dlogits`` and (softmax(z) - onehot(y)) / n_real written out
        (0 on ignored positions);
    ``finite_differences``
        rel_error between ``dlogits`` and the fourth-order centred differences of the
        loss (:func:`minitf.gradcheck.check_gradients`) on ``max_entries`` sampled entries
        (all if None);
    ``ignored_max_abs``
        the largest |dlogits| on an ignored (padding) position: exactly 0;
    ``loss``, ``n_real``.

    logits (B, T, V) float, labels (B, T) with ``IGNORE_INDEX`` on padding.
    """
    z = np.array(logits, dtype=np.float64)  # (B, T, V) a float64 copy we may perturb
    labels = np.asarray(labels)
    loss, dlogits = cross_entropy(z, labels)
    real = labels != IGNORE_INDEX  # (B, T)
    n_real = int(real.sum())
    onehot = np.zeros_like(z)  # (B, T, V)
    np.put_along_axis(onehot, np.where(real, labels, 0)[..., None], 1.0, axis=-1)
    expected = (softmax(z) - onehot) * real[..., None] / n_real  # (B, T, V)
    fd = check_gradients(lambda: cross_entropy(z, labels)[0], {"logits": dlogits}, {"logits": z},
                         max_entries=max_entries, seed=seed)
    return {"p_hat_minus_y": rel_error(dlogits, expected), "finite_differences": fd["logits"],
            "ignored_max_abs": float(np.abs(dlogits[~real]).max()) if (~real).any() else 0.0,
            "loss": loss, "n_real": n_real}


class PaddingCheck(NamedTuple):
    """A padded batch against its examples run one by one (:func:`padding_invariance`)."""

    loss_padded: float  # the batch's loss: sum over real tokens / n_real
    loss_unpadded: float  # the examples alone, combined as sum_i n_i L_i / sum_i n_i
    loss_over_padded_length: float  # what dividing by B*T instead of n_real would give (wrong)
    grad_rel_error: float  # ||g_padded - g_unpadded|| / ||g_unpadded||, every parameter as one vector
    n_real: int  # real target tokens
    n_positions: int  # B * T target positions, padding included
    n_source_pad: int  # padded source positions


def padding_invariance(model: EncoderDecoder, batch: Batch) -> PaddingCheck:
    """Loss and gradients of the padded ``batch`` against the same examples without padding.

    Each example is cut to its real source and target length and run alone; its mean loss
    L_i over n_i tokens and gradients g_i are combined as the batch's loss is defined:
    sum_i n_i L_i / sum_i n_i (the gradients likewise).  Use a float64 model
    (:func:`to_float64`) to see agreement to rounding.
    """
    _check_model(model)
    _check_batch(batch)
    pad = model.config.pad_id
    with model.evaluating():
        model.zero_grad()
        loss, dlogits, cache, _, _ = forward_loss(model, batch)
        model.backward(dlogits, cache)
        padded = {k: g.copy() for k, g in model.gradients().items()}

        n_i = (batch.labels != IGNORE_INDEX).sum(axis=1)  # (B,) real target tokens per example
        s_i = (batch.input_ids != pad).sum(axis=1)  # (B,) real source tokens per example
        total_loss, summed = 0.0, {k: np.zeros_like(g) for k, g in padded.items()}
        for i in range(batch.batch_size):
            one = Batch(batch.input_ids[i:i + 1, :s_i[i]], batch.decoder_input_ids[i:i + 1, :n_i[i]],
                        batch.labels[i:i + 1, :n_i[i]])  # (1, s_i), (1, n_i), (1, n_i): no padding at all
            model.zero_grad()
            loss_i, dlogits_i, cache_i, _, _ = forward_loss(model, one)
            model.backward(dlogits_i, cache_i)
            total_loss += n_i[i] * loss_i
            for k, g in model.gradients().items():
                summed[k] += n_i[i] * g
        model.zero_grad()
    n_real = int(n_i.sum())
    # one vector of every gradient: per-parameter ratios would be noise over noise for the
    # gradients that are exactly zero in exact arithmetic (the key biases b_k, say)
    diff = _norm([padded[k] - summed[k] / n_real for k in padded])
    grad_rel_error = diff / max(_norm([summed[k] / n_real for k in padded]), 1e-300)
    return PaddingCheck(loss, float(total_loss / n_real), loss * n_real / batch.labels.size, grad_rel_error, n_real,
                        int(batch.labels.size), int((batch.input_ids == pad).sum()))


# ---- section 4: the gradient's journey ----------------------------------------------------------
class Stage(NamedTuple):
    """One stop of the gradient on its way from the loss to the source embedding."""

    key: str  # stable identifier, e.g. "decoder.2.cross_kv"
    label: str  # what it is, for a figure or a printout
    part: str  # figure-key meaning: "loss", "decoder", "cross_attention" or "encoder"
    norm: float  # the Frobenius norm of the gradient measured there
    what: str  # which gradient, e.g. "dL/dH_dec" or "params"


class GradientJourney(NamedTuple):
    """One backward pass, measured (:func:`gradient_journey`)."""

    loss: float
    stages: list  # [Stage], from the loss down to the source embedding
    dH_enc: np.ndarray  # (B, S, D) the encoder's whole learning signal
    shares: list  # L_dec arrays (B, S, D), decoder block l's cross-attention share
    share_norms: np.ndarray  # (L_dec,) ||share_l||
    share_fractions: np.ndarray  # (L_dec,) <share_l, dH_enc> / ||dH_enc||^2: they sum to 1
    sum_max_abs_diff: float  # max |sum_l share_l - dH_enc| (summed in the backward's order: 0)


def gradient_journey(model: EncoderDecoder, batch: Batch) -> GradientJourney:
    """Run one teacher-forced forward and backward on ``batch`` (eval mode) and measure
    the gradient at every stage of its journey.

    Stages, in the order the backward visits them: dL/dz = (p_hat - y)/n at the head;
    W_U's gradient and dL/dH_dec; for each decoder block, last first, its parameters'
    gradient and the gradient of its cross-attention's W_k, W_v together with the share of
    dL/dH_enc it hands back; dL/dH_enc, the sum of the shares; each encoder block's
    parameters, last first; the source embedding.  ``model``'s gradients hold this
    batch's afterwards.
    """
    _check_model(model)
    _check_batch(batch)
    with model.evaluating():
        model.zero_grad()
        loss, dlogits, cache, _, _ = forward_loss(model, batch)
        out = model.backward(dlogits, cache)
    # dW_U = H_dec^T dlogits, computed here: with a tied W_U the parameter's gradient also
    # holds the input embedding's share, which is not the head's
    D, V = model.config.d_model, dlogits.shape[-1]
    dW_U = cache.decoder.H_dec.reshape(-1, D).T @ dlogits.reshape(-1, V)  # (D, B*T) @ (B*T, V) -> (D, V)
    stages = [Stage("loss", "p\u0302 \u2212 y at the head", "loss", _norm([dlogits]), "dL/dz"),
              Stage("head", "W_U", "decoder", _norm([dW_U]), "params"),
              Stage("H_dec", "H_dec", "decoder", _norm([out.dH_dec]), "dL/dH_dec")]
    for l in reversed(range(len(model.decoder_layers))):
        block = model.decoder_layers[l]
        ca = block.cross_attn.grads
        stages += [Stage(f"decoder.{l}", f"decoder block {l + 1}", "decoder", _module_grad_norm(block), "params"),
                   Stage(f"decoder.{l}.cross_kv", f"cross-attention K, V of block {l + 1}", "cross_attention",
                         _norm([ca["W_k"], ca["b_k"], ca["W_v"], ca["b_v"]]), "params"),
                   Stage(f"decoder.{l}.share", f"share of block {l + 1}", "cross_attention",
                         _norm([out.dH_enc_shares[l]]), "dL/dH_enc")]
    stages.append(Stage("H_enc", "H_enc", "encoder", _norm([out.dH_enc]), "dL/dH_enc"))
    for l in reversed(range(len(model.encoder_layers))):
        stages.append(Stage(f"encoder.{l}", f"encoder block {l + 1}", "encoder",
                            _module_grad_norm(model.encoder_layers[l]), "params"))
    stages.append(Stage("src_embed", "source embedding", "encoder", _norm([model.src_embed.grads["W_E"]]), "params"))

    shares = list(out.dH_enc_shares)
    total = np.zeros_like(out.dH_enc)  # (B, S, D) summed last block first, as the backward does
    for l in reversed(range(len(shares))):
        total += shares[l]
    g64 = out.dH_enc.astype(np.float64)  # projections in float64: they must add up to 1
    gg = float(np.vdot(g64, g64))
    fractions = np.array([float(np.vdot(s.astype(np.float64), g64)) / gg if gg else 0.0 for s in shares])
    return GradientJourney(loss, stages, out.dH_enc, shares, np.array([_norm([s]) for s in shares]), fractions,
                           float(np.max(np.abs(total - out.dH_enc))))


def encoder_parameter_names(model: EncoderDecoder) -> list:
    """Names (as in ``model.parameters()``) of the parameters only the encoder uses:
    ``src_embed.*`` (unless shared with the target side), ``src_pos.*``,
    ``encoder_layers.*``, ``encoder_norm.*``."""
    _check_model(model)
    prefixes = ["src_pos.", "encoder_layers.", "encoder_norm."]
    if not model.config.share_embeddings:
        prefixes.append("src_embed.")
    return [n for n in model.parameters() if n.startswith(tuple(prefixes))]


@contextlib.contextmanager
def cross_attention_off(model: EncoderDecoder) -> Iterator[EncoderDecoder]:
    """Inside the block, every cross-attention's output projection ``W_o``, ``b_o`` is zero:
    the decoder reads nothing from the encoder, and the encoder gets no gradient.  The
    weights are restored on exit."""
    _check_model(model)
    saved = [(block.cross_attn, block.cross_attn.params["W_o"].copy(), block.cross_attn.params["b_o"].copy())
             for block in model.decoder_layers]
    try:
        for attn, _, _ in saved:
            attn.params["W_o"][...] = 0.0
            attn.params["b_o"][...] = 0.0
        yield model
    finally:
        for attn, W_o, b_o in saved:
            attn.params["W_o"][...] = W_o
            attn.params["b_o"][...] = b_o


def activation_memory(model_config: ModelConfig, batch: Batch, start_id: int = 1) -> dict:
    """Bytes one teacher-forced forward keeps for its backward (``activation_bytes``).

    Returns ``{name: {"encoder": .., "decoder": .., "head": .., "total": ..,
    "blocks": n, "positions": tokens per example}}`` for

    * ``"encoder-decoder"``: the model of ``model_config`` on ``batch``;
    * ``"decoder-only, same decoder"``: a :class:`DecoderOnly` with the same width and
      ``n_decoder_layers`` blocks, reading ``source <bos> target`` as one sequence;
    * ``"decoder-only, same depth"``: the same with ``n_encoder_layers + n_decoder_layers``
      blocks.
    """
    _check_batch(batch)
    if not isinstance(model_config, ModelConfig):
        raise TypeError(f"model_config: expected a ModelConfig, got {type(model_config).__name__}")
    c = model_config
    B, S = batch.input_ids.shape
    T = batch.labels.shape[1]
    if S + T > c.max_len:
        raise ValueError(f"model_config: expected max_len >= S + T = {S + T} for the decoder-only models, "
                         f"got {c.max_len}")
    out = {}
    enc_dec = EncoderDecoder(c)
    _, _, cache, _, _ = forward_loss(enc_dec, batch, start_id=start_id)
    out["encoder-decoder"] = {"encoder": 0, **enc_dec.activation_bytes(cache),
                              "blocks": c.n_encoder_layers + c.n_decoder_layers, "positions": f"S + T = {S} + {T}"}
    for name, n_layers in (("decoder-only, same decoder", c.n_decoder_layers),
                           ("decoder-only, same depth", c.n_encoder_layers + c.n_decoder_layers)):
        model = DecoderOnly(c.replace(n_decoder_layers=n_layers))
        _, _, cache, _, _ = forward_loss(model, batch, start_id=start_id)
        out[name] = {"encoder": 0, **model.activation_bytes(cache), "blocks": n_layers,
                     "positions": f"S + T = {S + T}"}
    return out


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


def predict_both_ways(model: EncoderDecoder, batch: Batch, start_id: int = 1, eos_id: int = 2):
    """The model's predictions for ``batch`` both ways, in eval mode.

    Returns ``(teacher_forced, free_running)``: the argmax at every position given the true
    prefix (B, T), and the greedy output fed its own prefix (B, <= T + 2), ``eos_id`` after
    it has finished.
    """
    _check_model(model)
    _check_batch(batch)
    with model.evaluating():
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
        pred = greedy_decode(model, batch.input_ids, batch.labels.shape[1] + 2, start_id, eos_id)
    return logits.argmax(axis=-1), pred


def error_compounding(model: EncoderDecoder, batch: Batch, start_id: int = 1, eos_id: int = 2, *,
                      predictions=None) -> Compounding:
    """How often a whole output is wrong, by target length, against 1 - (1 - eps)^T.

    eps is the per-token error of the teacher-forced argmax (pooled over ``batch``); if
    every token went wrong independently with probability eps, a T-token output would be
    wrong with probability 1 - (1 - eps)^T.  The measured side is the free-running
    (greedy) output's exact match, grouped by T.  ``predicted_by_length`` uses the eps
    measured among the examples of each length instead.  ``predictions``: the output of
    :func:`predict_both_ways` for this model and batch, if already computed.
    """
    _check_batch(batch)
    tf_pred, fr_pred = predict_both_ways(model, batch, start_id, eos_id) if predictions is None else predictions
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


def exposure_example(model: EncoderDecoder, batch: Batch, tokenizer, start_id: int = 1, eos_id: int = 2, *,
                     predictions=None) -> dict:
    """The example of ``batch`` where feeding the model its own output hurts most.

    For each example, counts the wrong tokens of the teacher-forced argmax and of the
    free-running output (position by position against the target); picks the largest
    difference (ties: the shorter target, then the first).  Returns ``index``, ``source``
    (text), and token lists ``target``, ``teacher_forced``, ``free_running`` (cut or padded
    with "" to the target length) with boolean lists ``teacher_forced_right`` and
    ``free_running_right``.  ``predictions``: as for :func:`error_compounding`.
    """
    _check_batch(batch)
    tf_pred, fr_pred = predict_both_ways(model, batch, start_id, eos_id) if predictions is None else predictions
    labels = batch.labels
    B, T = labels.shape
    real = labels != IGNORE_INDEX  # (B, T)
    fr = np.full((B, T), -1, dtype=np.int64)  # (B, T) free-running output cut or padded to T
    n = min(T, fr_pred.shape[1])
    fr[:, :n] = fr_pred[:, :n]
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
            "free_running_right": (fr[i, :L] == labels[i, :L]).tolist()}


class Lesson8Run(NamedTuple):
    """The lesson's reference run (:func:`lesson8_run`)."""

    task: Task
    model_config: ModelConfig
    train_config: TrainConfig
    model: EncoderDecoder  # trained; shared by the notebook and the figures: do not modify
    optimizer: object  # its AdamW, moments and all
    history: History  # losses per step; evals: teacher-forced and free-running metrics
    eval_batch: Batch  # 1000 fixed examples for the by-length measurements
    midpoint_step: int  # the step at which `midpoint` was measured
    midpoint: Compounding  # error compounding halfway through training
    final: Compounding  # and at the end
    midpoint_example: dict  # exposure_example halfway through training


@functools.lru_cache(maxsize=2)
def lesson8_run(seed: int = 0) -> Lesson8Run:
    """Train the lesson's model (:func:`lesson8_task`, :func:`lesson8_model_config`,
    :func:`lesson8_train_config`) once per seed, and measure error compounding on 1000
    fixed examples halfway through training and at the end.  Cached: a few seconds the
    first time, free afterwards."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed: expected an int, got {type(seed).__name__}")
    task = lesson8_task()
    model_config = lesson8_model_config(task, seed)
    train_config = lesson8_train_config(seed)
    tok = task.tokenizer
    eval_batch = task.batch(task.dataset(1000, seed=seed + 20_000))
    model = EncoderDecoder(model_config)
    optimizer = make_optimizer(model.parameters(), train_config)
    half = train_config.steps // 2
    at_half: dict = {}

    def callback(step, history):  # called after each evaluation; measure once, at the first one past half-way
        if step >= half and not at_half:
            both = predict_both_ways(model, eval_batch, tok.bos_id, tok.eos_id)
            at_half["step"] = step
            at_half["compounding"] = error_compounding(model, eval_batch, tok.bos_id, tok.eos_id, predictions=both)
            at_half["example"] = exposure_example(model, eval_batch, tok, tok.bos_id, tok.eos_id, predictions=both)

    history = train(model, task, train_config, optimizer=optimizer, callback=callback)
    final = error_compounding(model, eval_batch, tok.bos_id, tok.eos_id)
    return Lesson8Run(task, model_config, train_config, model, optimizer, history, eval_batch, at_half["step"],
                      at_half["compounding"], final, at_half["example"])


# ---- the table: learned / config / state --------------------------------------------------------------
class Row(NamedTuple):
    """One line of the learned / config / state table."""

    kind: str  # "LEARNED", "CONFIG", "CONFIG/STATE" or "STATE"
    item: str
    value: str  # read from the live object


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.1f} kB"


def learned_config_state(run: Lesson8Run, batch: Batch | None = None) -> list:
    """The learned / config / state table of Lesson 8, read from live objects.

    LEARNED: ``run.model.parameters()``, grouped by the module that owns them.
    CONFIG: the teacher-forcing policy, shift and start token as seen in ``batch`` (a
    training batch of the run's task if None), the learning-rate schedule, the batch size,
    then every remaining field of the ModelConfig and TrainConfig.
    CONFIG/STATE: the target padding mask of ``batch``.
    STATE: logits, the cached activations of both stacks, gradients and the optimizer's
    moments, from one forward/backward on ``batch`` and ``run.optimizer.state_dict()``.
    """
    model, mc, tc = run.model, run.model_config, run.train_config
    tok = run.task.tokenizer
    if batch is None:
        batch = next(run.task.batches(tc.batch_size, np.random.default_rng(tc.seed)))
    _check_batch(batch)
    rows = []
    # LEARNED: every weight backward updates, by owning module
    groups: dict = {}
    for name, p in model.parameters().items():
        parts = name.split(".")
        owner = ".".join(parts[:2]) if parts[0].endswith("_layers") else parts[0]
        n_arrays, n_scalars = groups.get(owner, (0, 0))
        groups[owner] = (n_arrays + 1, n_scalars + p.size)
    for owner, (n_arrays, n_scalars) in groups.items():
        rows.append(Row("LEARNED", owner, f"{n_arrays} array{'s' * (n_arrays != 1)}, {n_scalars:,} weights"))
    rows.append(Row("LEARNED", "total", f"{model.num_parameters():,} weights, all updated by every step"))
    # CONFIG
    shifted = shift_right(batch.labels, tok.bos_id, mc.pad_id)
    starts = sorted({tok.id_to_token(int(i)) for i in batch.decoder_input_ids[:, 0]})
    rows += [
        Row("CONFIG", "teacher-forcing policy",
            f"always: every step feeds decoder_input_ids built from the labels "
            f"(= shift_right(labels) on this batch: {bool(np.array_equal(batch.decoder_input_ids, shifted))})"),
        Row("CONFIG", "shift convention", "right by one, start token in front: position t is fed y_{t-1}"),
        Row("CONFIG", "start token", f"{' '.join(starts)} (id {tok.bos_id}) at position 0 of every decoder input"),
        Row("CONFIG", "LR schedule", repr(make_schedule(tc, mc.d_model)) + f", optimizer {tc.optimizer}"),
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
    with model.evaluating():
        model.zero_grad()
        _, dlogits, cache, logits, _ = forward_loss(model, batch, start_id=tok.bos_id)
        model.backward(dlogits, cache)
        act = model.activation_bytes(cache)
        grads = model.gradients()
        model.zero_grad()
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
    import textwrap

    k = max(len(r.kind) for r in rows)
    i = max(len(r.item) for r in rows)
    indent = " " * (k + i + 4)
    lines = []
    for r in rows:
        wrapped = textwrap.wrap(r.value, width=max(20, width - len(indent))) or [""]
        lines.append(f"{r.kind:<{k}}  {r.item:<{i}}  {wrapped[0]}")
        lines += [indent + w for w in wrapped[1:]]
    return "\n".join(lines)
