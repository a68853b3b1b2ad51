"""Teacher-forced training, and evaluation that always reports both sides of the gap.

One training step (Lesson 8):

    logits, cache = model.forward(input_ids, decoder_input_ids)   # all T positions at once
    loss, dlogits = cross_entropy(logits, labels)                  # dlogits = (p_hat - y) / n_real
    model.zero_grad(); model.backward(dlogits, cache)              # the gradient's journey
    clip_grad_norm(grads, max_norm); optimizer.step(grads)

Evaluation runs the same model two ways:

* teacher-forced: the true prefix is fed (exactly as in training); we report the loss
  and the per-token accuracy of argmax predictions;
* free-running: the model feeds itself with greedy decoding; we report exact match
  (the whole output right) and token accuracy (position by position against the target).

The gap between the two is exposure bias made visible.  Scheduled sampling
(:mod:`minitf.scheduled_sampling`, ``train(..., scheduled_sampling=policy)``) is a
training-side mitigation for the encoder-decoder: a forward-only first pass supplies the
model's own tokens, mixed into the decoder inputs of the ordinary step above.

Data-parallel training (``train(..., workers=N)``, :mod:`minitf.data_parallel`) runs the step's
forward and backward shard by shard in N threads and combines the gradients weighted by each
shard's real target tokens -- the batch's own gradient -- before the one update.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from tqdm import tqdm

from .checks import check_choice, check_int, check_number
from .config import ModelConfig
from .data import IGNORE_INDEX, Batch, shift_right
from .data_parallel import DataParallel, default_workers, shard_generators
from .decoding import greedy_search
from .loss import cross_entropy
from .models import DecoderOnly, EncoderDecoder, EncoderOnly, RNNSeq2Seq
from .data.noise import mask_tokens
from .optim import SGD, Adam, AdamW, clip_grad_norm, global_grad_norm
from .process import keep_freed_memory, one_blas_thread_per_worker
from .schedules import SCHEDULES, get_schedule
from .scheduled_sampling import ScheduledSampling, scheduled_sampling_batch

OPTIMIZERS = ("sgd", "adam", "adamw")
"""The optimizers :func:`make_optimizer` builds (``TrainConfig.optimizer``)."""


class TrainingDiverged(FloatingPointError):
    """The loss became NaN or infinite: training stops rather than corrupt the weights."""


# ---- the loss for either kind of model -----------------------------------------------------
def decoder_only_batch(batch: Batch, start_id: int, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Recast a seq2seq batch for a decoder-only model: one sequence ``source <bos> target``.

    Returns ``(input_ids, labels)``, both (B, S + T):

        input_ids  s_1 .. s_S  <bos>  y_1 .. y_{T-1}
        labels     -100 .. -100  y_1  y_2 .. y_T

    Only the target part is scored.  The labels are aligned with the logits (position t
    is scored on ``labels[t]``), built outside the model as the encoder-decoder's
    ``labels`` and ``decoder_input_ids`` are; compare :func:`causal_lm_batch`.  Sources are
    right-padded, so their padding sits inside the sequence: :func:`forward_loss` hides it
    with :func:`decoder_only_attention_mask` (blocked as a key, skipped by the positions),
    so each example is scored as if it were alone.
    """
    B, S = batch.input_ids.shape
    tgt_in = shift_right(batch.labels, start_id, pad_id)  # (B, T)  <bos> y_1 .. y_{T-1}
    input_ids = np.concatenate([batch.input_ids, tgt_in], axis=1)  # (B, S + T)
    src_labels = np.full((B, S), IGNORE_INDEX, dtype=np.int64)  # (B, S) never scored
    labels = np.concatenate([src_labels, batch.labels], axis=1)  # (B, S + T)
    return input_ids.astype(np.int64), labels


def decoder_only_attention_mask(batch: Batch, pad_id: int) -> np.ndarray:
    """(B, S + T) bool, the ``attention_mask`` of :func:`decoder_only_batch`'s sequences: False on
    the source's padding, True elsewhere (the target part is fed <bos> and real tokens; what
    follows a short target needs no mask, nothing real comes after it)."""
    return np.concatenate([batch.input_ids != pad_id, np.ones(batch.labels.shape, dtype=bool)], axis=1)


class CausalLMBatch(NamedTuple):
    """A seq2seq batch in Hugging Face's causal-LM layout (:func:`causal_lm_batch`)."""
    input_ids: np.ndarray  # (B, L) s_1 .. s_S <bos> y_1 .. y_T, right-padded with pad_id
    attention_mask: np.ndarray  # (B, L) bool, True on real tokens
    labels: np.ndarray  # (B, L) input_ids, with -100 on the prompt and the padding; NOT shifted


def causal_lm_batch(batch: Batch, start_id: int, pad_id: int) -> CausalLMBatch:
    """Recast a seq2seq batch as Hugging Face trains a decoder-only model: ``labels`` are the
    input ids themselves, with -100 on the prompt, and the loss shifts them
    (:func:`causal_lm_loss`).

    Each row is its prompt and its answer, one after the other, right-padded to the
    longest, L = max(S_b + 1 + T_b)::

        input_ids       s_1 .. s_S  <bos>  y_1 .. y_T      <pad> ..
        attention_mask  1   .. 1    1      1   .. 1        0     ..
        labels          -100 ..     -100   y_1 .. y_T      -100  ..

    How it differs from the encoder-decoder's ``decoder_input_ids`` (and from
    :func:`decoder_only_batch`): there the inputs are the targets shifted right outside the
    model (``shift_right``: <bos> y_1 .. y_{T-1}) and the labels line up with the logits.
    Here nothing is shifted outside: the target's last token y_T (``<eos>``) is fed too,
    its logits predict nothing, and position t is scored on ``labels[t + 1]``.
    """
    src_len = (batch.input_ids != pad_id).sum(axis=1)  # (B,) sources are right-padded
    tgt_len = (batch.labels != IGNORE_INDEX).sum(axis=1)  # (B,) targets too
    B, L = len(src_len), int((src_len + 1 + tgt_len).max())
    pos = np.arange(L)[None, :]  # (1, L)
    in_src = pos < src_len[:, None]  # (B, L)
    is_start = pos == src_len[:, None]
    in_tgt = (pos > src_len[:, None]) & (pos <= (src_len + tgt_len)[:, None])
    input_ids = np.full((B, L), pad_id, dtype=np.int64)
    # boolean indexing runs row by row, left to right, on both sides: each row's tokens keep their order
    input_ids[in_src] = batch.input_ids[np.arange(batch.input_ids.shape[1])[None, :] < src_len[:, None]]
    input_ids[is_start] = start_id
    input_ids[in_tgt] = batch.labels[batch.labels != IGNORE_INDEX]
    labels = np.where(in_tgt, input_ids, IGNORE_INDEX)  # (B, L) only the answer is scored
    return CausalLMBatch(input_ids, in_src | is_start | in_tgt, labels)


def shift_labels(labels: np.ndarray) -> np.ndarray:
    """labels (B, L) -> (B, L): position t gets ``labels[t + 1]``, the last position -100
    (Hugging Face's causal-LM loss pads the labels with -100 and drops the first)."""
    shifted = np.full_like(labels, IGNORE_INDEX)  # (B, L)
    shifted[:, :-1] = labels[:, 1:]  # (B, L-1) what position t must predict is the token at t + 1
    return shifted


def causal_lm_loss(logits: np.ndarray, labels: np.ndarray, label_smoothing: float = 0.0):
    """Hugging Face's causal-LM loss: the labels are shifted inside, ``logits[:, t]`` scored
    on ``labels[:, t + 1]``.  logits (B, L, V), labels (B, L) unshifted -> (loss, dlogits (B, L, V));
    the last position gets zero gradient."""
    return cross_entropy(logits, shift_labels(labels), label_smoothing=label_smoothing)


DECODER_ONLY_FORMATS = ("concat", "causal_lm")
"""How a decoder-only model reads a seq2seq batch (``TrainConfig.decoder_only_format``):
``"concat"`` = :func:`decoder_only_batch`, ``"causal_lm"`` = :func:`causal_lm_batch`."""

MASKED_LM_EVAL_SEED = 0
"""The masking seed of :func:`evaluate` for an encoder-only model: the same blanks at every evaluation."""


def forward_loss(model, batch: Batch, label_smoothing: float = 0.0, *, decoder_only_format: str = "concat",
                 rng=None):
    """Teacher-forced forward and loss.  Returns ``(loss, dlogits, cache, logits, labels)``,
    ``labels`` aligned with ``logits`` (position t scored on ``labels[t]``).

    A :class:`DecoderOnly` model reads ``source <bos> target`` as one sequence, laid out as
    ``decoder_only_format`` says (:data:`DECODER_ONLY_FORMATS`; the source's padding hidden by
    an attention mask either way).  An :class:`EncoderOnly` model learns to fill in the blanks
    :func:`~minitf.data.noise.mask_tokens` makes in the sources, drawn with ``rng``.
    """
    c = model.config
    if isinstance(model, DecoderOnly):
        check_choice("decoder_only_format", decoder_only_format, DECODER_ONLY_FORMATS)
        if decoder_only_format == "causal_lm":
            b = causal_lm_batch(batch, c.bos_id, c.pad_id)
            logits, cache = model.forward(b.input_ids, b.attention_mask)
            loss, dlogits = causal_lm_loss(logits, b.labels, label_smoothing)  # the shift happens in here
            return loss, dlogits, cache, logits, shift_labels(b.labels)
        input_ids, labels = decoder_only_batch(batch, c.bos_id, c.pad_id)
        logits, cache = model.forward(input_ids, decoder_only_attention_mask(batch, c.pad_id))
    elif isinstance(model, EncoderOnly):
        if rng is None:
            raise ValueError("rng: expected a np.random.Generator or a seed for an EncoderOnly model's masking, "
                             "got None")
        input_ids, labels = mask_tokens(batch.input_ids, rng, mask_id=model.mask_id, vocab_size=c.src_vocab_size,
                                        special_ids=(c.pad_id, c.bos_id, c.eos_id))
        logits, cache = model.forward(input_ids)
    else:
        labels = batch.labels
        logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, labels, label_smoothing=label_smoothing)
    return loss, dlogits, cache, logits, labels


# ---- free-running metrics ----------------------------------------------------------------------------
def sequence_metrics(pred: np.ndarray, labels: np.ndarray, eos_id: int) -> dict:
    """Free-running metrics of generated ``pred`` (B, T') against ``labels`` (B, T), -100 padded.

    exact match: the output up to and including ``<eos>`` equals the target (a target
    without ``<eos>`` must be followed by ``<eos>``: the output has to stop);
    token accuracy: share of target positions whose generated token is right.
    """
    B, T = labels.shape
    P = np.full((B, T), -1, dtype=np.int64)  # (B, T) pred cut or padded to the target length
    n = min(T, pred.shape[1])
    P[:, :n] = pred[:, :n]
    real = labels != IGNORE_INDEX
    correct = (P == labels) & real
    n_real = real.sum(axis=1)  # (B,)
    # a target that ends in <eos> says where to stop; one without must be followed by <eos>
    ends_with_eos = labels[np.arange(B), np.maximum(n_real - 1, 0)] == eos_id  # (B,)
    is_eos = pred == eos_id  # (B, T')
    first_eos = np.where(is_eos.any(axis=1), is_eos.argmax(axis=1), -1)  # (B,) -1: never stopped
    exact = (correct.sum(axis=1) == n_real) & (ends_with_eos | (first_eos == n_real))
    return {"exact_match": float(exact.mean()),
            "token_accuracy": float(correct.sum() / real.sum())}


# ---- evaluation -------------------------------------------------------------------------------------
def token_accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Share of the real (not ``IGNORE_INDEX``) positions whose argmax is the label: logits
    (B, T, V), labels (B, T).  On teacher-forced logits, the teacher-forced token accuracy."""
    real = labels != IGNORE_INDEX  # (B, T)
    return float(((logits.argmax(-1) == labels) & real).sum() / real.sum())


def evaluate(model, batch: Batch, *, max_len: int | None = None) -> dict:
    """Both sides of the gap on one batch (the model is put in eval mode, then restored).

    Returns ``teacher_forced_loss``, ``teacher_forced_token_accuracy``,
    ``free_running_exact_match``, ``free_running_token_accuracy`` and, for inspection,
    ``predictions`` (B, T') of the free-running run: greedy decoding by
    :func:`minitf.decoding.greedy_search` (the decoder ``minitf generate`` uses), at most
    ``max_len`` tokens (default: the target length + 2, within the model's ``max_len``),
    ``<pad>`` after a row's ``<eos>``.
    The start and end tokens are the model's (``config.bos_id``, ``config.eos_id``).  A
    decoder-only model's prompt takes S of its ``max_len`` positions, so it gets at most
    ``max_len - S`` tokens.

    An encoder-only model has nothing to generate: it returns ``masked_lm_loss`` and
    ``masked_token_accuracy`` on the batch's sources, masked with the fixed seed
    :data:`MASKED_LM_EVAL_SEED`.
    """
    with model.evaluating():
        if isinstance(model, EncoderOnly):
            loss, _, _, logits, labels = forward_loss(model, batch, rng=MASKED_LM_EVAL_SEED)
            return {"masked_lm_loss": loss, "masked_token_accuracy": token_accuracy(logits, labels)}
        loss, _, _, logits, labels = forward_loss(model, batch)
        out = {"teacher_forced_loss": loss, "teacher_forced_token_accuracy": token_accuracy(logits, labels)}
        if isinstance(model, (EncoderDecoder, DecoderOnly, RNNSeq2Seq)):
            T = batch.labels.shape[1]
            room = model.config.max_len - (batch.input_ids.shape[1] if isinstance(model, DecoderOnly) else 0)
            limit = min(T + 2, room) if max_len is None else check_int(
                "max_len", max_len, 1, room, hint="its upper end is the model's max_len (minus the source's "
                                                  "length for a decoder-only model)")
            pred = greedy_search(model, batch.input_ids, max_new_tokens=limit).sequences  # (B, <= limit)
            m = sequence_metrics(pred, batch.labels, model.config.eos_id)
            out.update(free_running_exact_match=m["exact_match"], free_running_token_accuracy=m["token_accuracy"],
                       predictions=pred)
        return out


# ---- the loop ------------------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """How to train (the model's shape lives in ``ModelConfig``)."""

    steps: int = 1500  # optimizer updates
    batch_size: int = 64  # examples per step
    optimizer: str = "adamw"  # "sgd", "adam" or "adamw"
    lr: float = 2e-3  # peak learning rate
    schedule: str = "warmup_cosine"  # "constant", "noam" or "warmup_cosine"
    warmup: int = 100  # warm-up steps for "noam" and "warmup_cosine"
    weight_decay: float = 0.01  # AdamW's decoupled decay (L2 for sgd/adam)
    clip_norm: float | None = 1.0  # global gradient-norm clipping, None = off
    label_smoothing: float = 0.0
    eval_every: int = 250  # steps between evaluations (0 = only at the end)
    eval_size: int = 256  # examples in the fixed evaluation set
    seed: int = 0  # data order (and an encoder-only model's masking)
    decoder_only_format: str = "concat"  # a DecoderOnly model's layout: "concat" or "causal_lm" (Hugging Face's)
    progress: bool = True  # show a tqdm bar (on a terminal only: tqdm turns it off for logs and pipes)

    def __post_init__(self):
        for name, low in (("steps", 1), ("batch_size", 1), ("eval_size", 1), ("warmup", 0), ("eval_every", 0),
                          ("seed", 0)):
            check_int(name, getattr(self, name), low=low)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_number("lr", self.lr, 0, None, low_open=True)
        check_choice("schedule", self.schedule, tuple(SCHEDULES))
        check_number("weight_decay", self.weight_decay, 0, None)
        if self.clip_norm is not None:
            check_number("clip_norm", self.clip_norm, 0, None, low_open=True)
        check_number("label_smoothing", self.label_smoothing, 0, 1)
        check_choice("decoder_only_format", self.decoder_only_format, DECODER_ONLY_FORMATS)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class History:
    """What happened during training, step by step and at each evaluation."""

    step: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    lr: list = field(default_factory=list)
    grad_norm: list = field(default_factory=list)
    evals: list = field(default_factory=list)  # dicts with "step" and the evaluate() metrics
    seconds: float = 0.0
    tokens: int = 0


def make_optimizer(params: dict, cfg: TrainConfig):
    """The optimizer ``cfg.optimizer`` names, over ``params``."""
    if cfg.optimizer == "sgd":
        return SGD(params, lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay)
    return {"adam": Adam, "adamw": AdamW}[cfg.optimizer](params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def make_schedule(cfg: TrainConfig, d_model: int):
    """The learning-rate schedule ``cfg.schedule`` names, peaking at ``cfg.lr``."""
    if cfg.schedule == "constant":
        return get_schedule("constant", lr=cfg.lr)
    if cfg.schedule == "noam":  # factor chosen so the peak (at step max(warmup, 1)) is cfg.lr
        return get_schedule("noam", d_model=d_model, warmup=cfg.warmup,
                            factor=cfg.lr * math.sqrt(d_model * max(cfg.warmup, 1)))
    # "warmup_cosine": the decay reaches 0 one step after the last update, so every update
    # (steps = 1 too) moves the weights
    return get_schedule("warmup_cosine", lr=cfg.lr, warmup=min(cfg.warmup, cfg.steps), total=cfg.steps + 1)


def eval_pairs(task, cfg: TrainConfig) -> list:
    """The fixed evaluation set :func:`train` reports on and holds out: ``cfg.eval_size``
    pairs drawn with seed ``cfg.seed + 10_000``."""
    return task.dataset(cfg.eval_size, seed=cfg.seed + 10_000)


def train_step(model, batch: Batch, optimizer, lr: float, clip_norm: float | None = None,
               label_smoothing: float = 0.0, *, decoder_only_format: str = "concat", rng=None,
               scheduled_sampling: ScheduledSampling | None = None, parallel: DataParallel | None = None) -> dict:
    """One teacher-forced update.  Returns ``loss``, ``grad_norm``, ``n_tokens`` (the scored
    positions).  ``decoder_only_format`` and ``rng`` as in :func:`forward_loss`.

    With a ``scheduled_sampling`` policy (an :class:`EncoderDecoder` only) the step takes two
    decoder passes: pass 1, forward only, supplies the model's own tokens, mixed into the
    decoder inputs (:func:`minitf.scheduled_sampling.scheduled_sampling_batch`); pass 2 is the
    update below on the mixed inputs against the gold labels -- no gradient through pass 1.
    The result then also holds ``eps`` and ``gold_fraction`` (the share of real target
    positions fed the gold token).

    With ``parallel`` (a :class:`minitf.data_parallel.DataParallel` of ``model``) the forward and
    backward run shard by shard in its threads and the gradients are combined weighted by each
    shard's real tokens: the batch's gradient, as one pass computes it.  ``rng`` is then one
    generator per shard (:func:`minitf.data_parallel.shard_generators`), or None; pass 1 of
    scheduled sampling runs on the whole batch, in this thread.
    """
    extra = {}
    if scheduled_sampling is not None:
        batch, mix = scheduled_sampling_batch(model, batch, scheduled_sampling)
        real = batch.labels != IGNORE_INDEX  # (B, T)
        extra = {"eps": mix.eps, "gold_fraction": float(mix.gold[real].mean())}
    if parallel is None:
        loss, dlogits, cache, _, labels = forward_loss(model, batch, label_smoothing,
                                                       decoder_only_format=decoder_only_format, rng=rng)
        _check_loss(loss, lr, clip_norm)
        model.zero_grad()
        model.backward(dlogits, cache)
        n_tokens = int((labels != IGNORE_INDEX).sum())
    else:
        rngs = _shard_rngs(rng, parallel.workers)

        def shard_loss(replica, shard, k):
            loss, dlogits, cache, _, labels = forward_loss(replica, shard, label_smoothing,
                                                           decoder_only_format=decoder_only_format, rng=rngs[k])
            return loss, dlogits, cache, labels

        out = parallel.forward_backward(batch, shard_loss)  # g = sum_k (n_k / n) g_k, in the model's grads
        loss, n_tokens = out.loss, out.n_tokens
        _check_loss(loss, lr, clip_norm)
    grads = model.gradients()
    if len(optimizer.params) < len(grads):  # parameters left out of the optimizer are frozen (a frozen
        grads = {name: grads[name] for name in optimizer.params}  # encoder): not clipped, not updated
    norm = clip_grad_norm(grads, clip_norm) if clip_norm else global_grad_norm(grads)
    if not math.isfinite(norm):
        raise TrainingDiverged(f"gradient norm is {norm}: training stopped before the update")
    optimizer.lr = lr
    if parallel is None:
        optimizer.step(grads)
    else:
        parallel.step(optimizer, grads)  # each thread updates its group of parameters: the same bits
    return {"loss": loss, "grad_norm": norm, "n_tokens": n_tokens, **extra}


def _check_loss(loss: float, lr: float, clip_norm: float | None) -> None:
    if not math.isfinite(loss):
        advice = f"try a lower lr than {lr:g}" + (" or gradient clipping" if not clip_norm else "")
        raise TrainingDiverged(f"loss is {loss}: training stopped before the update ({advice})")


def _shard_rngs(rng, workers: int) -> list:
    """``rng`` of a data-parallel :func:`train_step`: one generator per shard (a thread must not
    share one), or None for each."""
    if rng is None:
        return [None] * workers
    if not isinstance(rng, (list, tuple)) or len(rng) != workers:
        raise TypeError(f"rng: with parallel, expected a list of {workers} generators, one per shard "
                        f"(minitf.data_parallel.shard_generators), got {type(rng).__name__}")
    return list(rng)


def train(model, task, cfg: TrainConfig | None = None, optimizer=None, callback=None, held_out=(),
          scheduled_sampling: ScheduledSampling | None = None, workers: int | None = 1) -> History:
    """Train ``model`` on batches from ``task``; evaluate every ``cfg.eval_every`` steps on
    a fixed set (:func:`eval_pairs`).  ``callback(step, history)`` is called after each
    evaluation.

    The evaluation set is held out: no training batch contains one of its sources.  So are
    the source texts in ``held_out`` (another evaluation set of the caller's).  ``task``
    needs ``batches(batch_size, rng, exclude=...)``, ``batch``, ``dataset`` and
    ``tokenizer`` (:class:`minitf.data.tasks.Task` has them).

    A decoder-only model reads its batches as ``cfg.decoder_only_format`` says; an
    encoder-only model is trained to fill in masked tokens of the sources
    (:func:`forward_loss`), its masking drawn from its own generator (seeded by ``cfg.seed``),
    so the data order is the same whatever the model.

    ``scheduled_sampling``: an encoder-decoder's teacher-forcing policy, one schedule step
    per update (:func:`train_step`); evaluation stays teacher-forced and free-running as
    always.  (An RNN's policy lives in its model: ``RNNSeq2Seq(config, scheduled_sampling=...)``.)

    ``workers``: data-parallel training (:mod:`minitf.data_parallel`) -- each batch is split into
    that many shards, each shard's forward and backward runs in its own thread, and the gradients
    are combined weighted by each shard's real target tokens (the batch's gradient); one optimizer
    step follows.  None: :func:`minitf.data_parallel.default_workers` (one per CPU, at least 16 rows
    a shard), what ``minitf train`` uses.  The default, 1, is the ordinary loop; it is what the
    lessons and figures run, bit for bit as before.  More workers than 1 take a different float32
    trajectory (a sum of shard gradients rounds differently) and, with dropout or an encoder-only
    model's masking, draw other random masks (each shard its own stream: the module's docstring);
    the same seed and the same workers give the same trajectory.

    With more than one worker NumPy's BLAS runs on one thread per worker throughout
    (:func:`minitf.process.one_blas_thread_per_worker`: the process's count is every thread's, and
    one per worker is also what keeps a busy machine from stalling training); an
    ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``) set in the environment
    is left as it is.  One worker leaves the count as the caller set it: in float64 a dot product
    longer than 10,000 entries (the gradient norm's) rounds differently on one thread than on
    two, and the lessons' stored runs and figures were made with the caller's setting.  ``minitf
    train`` and ``minitf finetune`` put every run, one worker or more, on one thread per worker.
    """
    cfg = cfg or TrainConfig()
    workers = default_workers(cfg.batch_size) if workers is None else check_int("workers", workers, low=1)
    if scheduled_sampling is not None and not isinstance(model, EncoderDecoder):
        raise TypeError(f"scheduled_sampling: only for an EncoderDecoder here, got a {type(model).__name__}"
                        + (" (give the policy to RNNSeq2Seq itself)" if isinstance(model, RNNSeq2Seq) else ""))
    rng = np.random.default_rng(cfg.seed)
    masking_rng = np.random.default_rng([cfg.seed, 1])  # an encoder-only model's blanks, apart from the data order
    evaluation = eval_pairs(task, cfg)
    if isinstance(held_out, str):  # list("ab") would hold out "a" and "b", not "ab"
        raise TypeError(f"held_out: expected a collection of source texts, got a single str {held_out!r}")
    # (Task.batches checks the items: pairs instead of source texts are refused there)
    batches = task.batches(cfg.batch_size, rng, exclude=[s for s, _ in evaluation] + list(held_out))
    eval_batch = task.batch(evaluation)
    mismatch = model.config.special_id_mismatch(task.tokenizer)  # batches use the tokenizer's ids, decoding the model's
    if mismatch:
        raise ValueError(f"model: expected the special ids of the task's tokenizer; {mismatch}")
    optimizer = optimizer or make_optimizer(model.parameters(), cfg)
    schedule = make_schedule(cfg, model.config.d_model)
    hist = History()
    keep_freed_memory()  # reuse freed arrays' memory instead of page-faulting it back (see minitf.process)
    model.train()
    with contextlib.ExitStack() as stack:
        parallel = None
        if workers > 1:
            stack.enter_context(one_blas_thread_per_worker())
            parallel = stack.enter_context(DataParallel(model, workers))
        step_rng = masking_rng if parallel is None else shard_generators(masking_rng, workers)
        t0 = time.perf_counter()
        bar = tqdm(range(1, cfg.steps + 1), disable=None if cfg.progress else True,  # None: off when not a terminal
                   desc="train", unit="step", leave=False)
        for step in bar:
            try:
                out = train_step(model, next(batches), optimizer, schedule(step), cfg.clip_norm, cfg.label_smoothing,
                                 decoder_only_format=cfg.decoder_only_format, rng=step_rng,
                                 scheduled_sampling=scheduled_sampling, parallel=parallel)
            except TrainingDiverged as e:
                raise TrainingDiverged(f"step {step}: {e}") from None
            hist.step.append(step)
            hist.loss.append(out["loss"])
            hist.lr.append(optimizer.lr)
            hist.grad_norm.append(out["grad_norm"])
            hist.tokens += out["n_tokens"]
            elapsed = time.perf_counter() - t0
            if step % 10 == 0 or step == cfg.steps:
                bar.set_postfix(loss=f"{out['loss']:.3f}", lr=f"{optimizer.lr:.2e}",
                                tok_s=f"{hist.tokens / elapsed:,.0f}")
            if (cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps:
                metrics = evaluate(model, eval_batch)
                metrics.pop("predictions", None)
                hist.evals.append({"step": step, **metrics})
                if callback:
                    callback(step, hist)
        hist.seconds = time.perf_counter() - t0
    model.train()
    return hist


def default_model_config(task, **overrides) -> ModelConfig:
    """A small model sized for the toy tasks: it learns ``reverse`` in about a minute on 2 cores."""
    tok = task.tokenizer
    base = dict(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=64, n_heads=4,
                d_ff=256, n_encoder_layers=2, n_decoder_layers=2,
                max_len=task.max_source_len + task.max_target_len + 1,  # room for a decoder-only model's source + target
                pad_id=tok.pad_id, bos_id=tok.bos_id, eos_id=tok.eos_id,
                share_embeddings=True, tie_output=True)
    base.update(overrides)
    return ModelConfig(**base)

