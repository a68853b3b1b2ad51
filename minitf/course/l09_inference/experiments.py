"""Lesson 9 (*Inference*), sections 1-4: the run and the measurements.

The lesson's specimen is a small encoder-decoder trained for a few hundred steps on the
``dates`` task (``2024-03-07 -> 7 march 2024``): long enough to read dates, short enough to
stay unsure about some month names, which is where greedy decoding and beam search part
ways.  :func:`lesson9_run` trains it once per process and seed (cached, however the seed is
passed), so the notebook and the figures (:mod:`minitf.course.l09_inference.figures`) decode with the
same weights; every output the lesson reports is decoded from :attr:`Lesson9Run.eval_pairs`,
200 held-out dates.

======================================  ===================================================
section of Lesson 9                     what is measured here
======================================  ===================================================
set-up                                  :func:`lesson9_task`, :func:`lesson9_model_config`,
                                        :func:`lesson9_train_config`, :func:`lesson9_run`,
                                        :func:`exact_match`
2  two KV caches                        :func:`kv_cache_snapshots` (a real cache, step by
                                        step), :func:`first_right_example`;
                                        :func:`decoder_step_macs`,
                                        :func:`once_per_example_macs` (work counted from
                                        the shapes), :func:`step_latency` (work timed)
3  greedy decoding and sampling         :func:`lesson9_showcase` (the input where greedy
                                        loses most clearly to beam search)
4  beam search, length normalization    :func:`sequence_log_probs`, :func:`token_log_probs`
                                        (the model's log-probability of any output)
======================================  ===================================================

Section 1 needs nothing beyond :mod:`minitf.decoding`; the decoders themselves live there.
Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...bench.decode import time_step
from ...checks import check_int
from ...config import ModelConfig
from ...data import IGNORE_INDEX
from ...decoding import Hypothesis, beam_search, decode_step, greedy_search, start_decoding
from ...layers.softmax import log_softmax
from ...models import EncoderDecoder
from ...data.tasks import Task, get_task
from ...training import History, TrainConfig
from ..kit.runs import check_model, lesson_model_config, lesson_train_config, once_per_process, train_fresh

__all__ = [
    "SHOWCASE_BEAMS", "EVAL_SIZE", "lesson9_task", "lesson9_model_config", "lesson9_train_config", "Lesson9Run",
    "lesson9_run", "exact_match", "sign_test", "sequence_log_probs", "token_log_probs", "Showcase", "lesson9_showcase",
    "first_right_example", "CacheSnapshot", "kv_cache_snapshots",
    "decoder_step_macs", "once_per_example_macs", "StepLatency", "step_latency",
]

SHOWCASE_BEAMS = 2  # beams of the showcase search and of the tree figure (K = 2 keeps the tree legible)
EVAL_SIZE = 200  # fixed held-out inputs the lesson decodes


# ---- the lesson's run ------------------------------------------------------------------------
def lesson9_task() -> Task:
    """ISO dates written out in words: sources of 10 characters, targets of 11 to 18 tokens
    (``<eos>`` included), so the decoder itself decides when to stop."""
    return get_task("dates")


def lesson9_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """A small encoder-decoder for :func:`lesson9_task`: D = 32, H = 2 (Dh = 16), F = 64,
    one encoder block and one decoder block, shared and tied embeddings, in float64
    (:mod:`minitf.course.kit.runs` says why).  ``overrides`` replace any field."""
    task = lesson9_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                                     n_decoder_layers=1), **overrides})


def lesson9_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """300 AdamW steps of 32 examples, warm-up then cosine decay from 3e-3; one evaluation
    (64 examples) at the end.  Brief on purpose: the model should still hesitate."""
    return lesson_train_config(seed, **{**dict(steps=300, batch_size=32, lr=3e-3, warmup=20, eval_every=0,
                                               eval_size=64), **overrides})


class Lesson9Run(NamedTuple):
    """The lesson's trained model and what it is evaluated on (:func:`lesson9_run`)."""

    task: Task
    model_config: ModelConfig
    train_config: TrainConfig
    model: EncoderDecoder  # trained, in eval mode; shared by the notebook and the figures: do not modify
    history: History  # its evals: the training loop's own check, on train_config.eval_size other dates
    eval_pairs: list  # EVAL_SIZE fixed (source, target) text pairs, held out: never trained on
    max_new_tokens: int  # the decoders' limit: the longest target (with <eos>) plus 2


@once_per_process
def lesson9_run(seed: int = 0) -> Lesson9Run:
    """Train the lesson's model once per process and seed; ``lesson9_run()``,
    ``lesson9_run(0)`` and ``lesson9_run(seed=0)`` are one cached run.  The training
    batches never contain a source of :attr:`Lesson9Run.eval_pairs` (nor of the training
    loop's own evaluation set)."""
    task = lesson9_task()
    model_config = lesson9_model_config(task, seed)
    train_config = lesson9_train_config(seed)
    held_out = task.dataset(EVAL_SIZE, seed=seed + 20_000)
    model, _, history = train_fresh(task, model_config, train_config, held_out=[s for s, _ in held_out])
    model.eval()
    return Lesson9Run(task, model_config, train_config, model, history, held_out, task.max_target_len + 2)


def exact_match(run: Lesson9Run, sequences: np.ndarray) -> np.ndarray:
    """Which outputs are exactly right: ``sequences`` (len(run.eval_pairs), T_out), one
    decoder output per held-out pair, decoded to text and compared with the targets ->
    (B,) bool."""
    texts = run.task.tokenizer.decode_batch(sequences)
    return np.array([x == t for x, (_, t) in zip(texts, run.eval_pairs)])


def sign_test(fixed: int, broken: int) -> float:
    """Two-sided sign test of ``fixed`` against ``broken`` (the dates one rule gets right and the
    other wrong, each way; the dates both agree on carry no evidence): the probability, if
    either way were a fair coin, of a split at least this uneven, 2 * P(X <= min) for
    X ~ Binomial(fixed + broken, 1/2), at most 1."""
    fixed, broken = check_int("fixed", fixed, low=0), check_int("broken", broken, low=0)
    n = fixed + broken
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(fixed, broken) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


# ---- the model's probability of an output ----------------------------------------------------------
def sequence_log_probs(model: EncoderDecoder, batch) -> np.ndarray:
    """The model's log-probability of each example's target, ``<eos>`` included.

    One teacher-forced pass over a :class:`~minitf.data.Batch`: logits (B, T, V) ->
    log-softmax -> the label's entry, summed over the real (not -100) positions -> (B,)
    float64.  Comparable with the ``log_probs`` a decoder reports for its own output.
    """
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    logp = log_softmax(logits.astype(np.float64))  # (B, T, V)
    real = batch.labels != IGNORE_INDEX  # (B, T)
    picked = np.take_along_axis(logp, np.where(real, batch.labels, 0)[..., None], axis=-1)[..., 0]  # (B, T)
    return np.where(real, picked, 0.0).sum(axis=1)  # (B,)


def token_log_probs(model: EncoderDecoder, src_ids, tokens) -> np.ndarray:
    """The model's log-probability of each token of ``tokens`` given the ones before it.

    src_ids (1, S), tokens (T,) generated ids (``<eos>`` included) -> (T,) float64; their
    sum is the sequence's log-probability, the quantity greedy and beam search rank by.
    One teacher-forced pass over ``<bos> tokens[:-1]`` (the model's own start token).
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    decoder_input_ids = np.concatenate([[model.config.bos_id], tokens[:-1]])[None, :]  # (1, T)
    logits, _ = model.forward(np.asarray(src_ids), decoder_input_ids)  # (1, T, V)
    logp = log_softmax(logits[0].astype(np.float64))  # (T, V)
    return logp[np.arange(len(tokens)), tokens]  # (T,)


# ---- the showcase: greedy's clearest loss to beam search ----------------------------------------------
class Showcase(NamedTuple):
    """One input on which greedy decoding's locally best choices lose to beam search."""

    index: int  # position in run.eval_pairs
    source: str
    target: str
    greedy: Hypothesis  # greedy search's output
    beam: Hypothesis  # beam search's best (length_penalty 0: ranked by the sum of log-probs)
    greedy_token_log_probs: np.ndarray  # (len(greedy),) one log-prob per token
    beam_token_log_probs: np.ndarray  # (len(beam),)
    trace: list  # beam_search's TraceStep list for this input
    num_beams: int
    n_gain: int  # evaluation inputs on which beam search found a different, more probable output
    n_right_instead: int  # ... and of those, inputs where beam is right and greedy wrong


@once_per_process
def lesson9_showcase(seed: int = 0, num_beams: int = SHOWCASE_BEAMS) -> Showcase:
    """Search the evaluation set for greedy's clearest loss to beam search (cached).

    Greedy and beam search (``num_beams``, ``length_penalty=0``: the most probable sequence
    wins) decode all of ``run.eval_pairs``.  Among the inputs where beam search's best
    sequence differs from greedy's output and has a higher sum of log-probs, take those
    where beam is right and greedy wrong if there are any, then the one with the largest
    gain.  (Identical outputs can differ in the last digits of their sums, as the two
    searches multiply differently shaped matrices; comparing outputs, not sums, ignores that.)
    """
    run = lesson9_run(seed)
    task, model, T_max = run.task, run.model, run.max_new_tokens
    tok = task.tokenizer
    src = task.batch(run.eval_pairs).input_ids  # (B, S)
    greedy = greedy_search(model, src, max_new_tokens=T_max)
    beam = beam_search(model, src, num_beams=num_beams, max_new_tokens=T_max, length_penalty=0.0)
    gain = beam.log_probs - greedy.log_probs  # (B,)
    g_right, b_right = exact_match(run, greedy.sequences), exact_match(run, beam.sequences)
    better = np.array([g != b for g, b in zip(tok.decode_batch(greedy.sequences),
                                              tok.decode_batch(beam.sequences))]) & (gain > 0)
    if not better.any():
        raise RuntimeError(f"seed {seed}: beam search never beat greedy decoding on the evaluation set")
    preferred = better & b_right & ~g_right
    pool = preferred if preferred.any() else better
    i = int(np.argmax(np.where(pool, gain, -np.inf)))
    one = src[i:i + 1]  # (1, S)
    g = greedy_search(model, one, max_new_tokens=T_max).hypotheses(0)[0]
    out = beam_search(model, one, num_beams=num_beams, max_new_tokens=T_max, length_penalty=0.0, trace=True)
    b = out.hypotheses(0)[0]
    return Showcase(i, run.eval_pairs[i][0], run.eval_pairs[i][1], g, b,
                    token_log_probs(model, one, g.tokens), token_log_probs(model, one, b.tokens),
                    out.trace, num_beams, int(better.sum()), int(preferred.sum()))


# ---- section 2: the caches, watched ---------------------------------------------------------------------
def first_right_example(run: Lesson9Run) -> int:
    """The first evaluation input greedy decoding gets right (index into run.eval_pairs;
    0 if there is none)."""
    src = run.task.batch(run.eval_pairs).input_ids
    right = exact_match(run, greedy_search(run.model, src, max_new_tokens=run.max_new_tokens).sequences)
    return int(np.argmax(right)) if right.any() else 0


class CacheSnapshot(NamedTuple):
    """Layer 1, head 1 of a :class:`~minitf.decoding.KVCache` after a decoding step."""

    step: int  # steps taken (= positions written to the self-attention cache)
    K_self: np.ndarray  # (step, Dh) the self-attention keys written so far
    K_cross: np.ndarray  # (S, Dh) the cross-attention keys of H_enc
    self_shape: tuple  # K_self[:, :, :step].shape of the whole cache: (N, H, step, Dh)
    cross_shape: tuple  # K_cross.shape: (N, H, S, Dh)
    nbytes: dict  # KVCache.nbytes() at this step


def kv_cache_snapshots(run: Lesson9Run, index: int, steps=(1, 2, 3), last: bool = True) -> tuple:
    """Greedy-decode ``run.eval_pairs[index]`` step by step through a real KV cache whose
    capacity is exactly the steps this output takes, and snapshot layer 1, head 1 after
    each step in ``steps`` and, with ``last``, after the final step.

    Returns ``(output, fed, capacity, snapshots)``: the greedy :class:`Hypothesis`, the
    token fed at each step (``<bos>``, then the output), the cache's capacity T_max, and
    ``{step: CacheSnapshot}`` in step order (steps past the output's length are skipped).
    """
    model = run.model
    src = run.task.batch([run.eval_pairs[index]]).input_ids  # (1, S)
    out = greedy_search(model, src, max_new_tokens=run.max_new_tokens).hypotheses(0)[0]
    fed = [model.config.bos_id, *out.tokens[:-1]]  # the decoder inputs, step by step
    n_steps = len(out.tokens)
    wanted = set(steps) | ({n_steps} if last else set())
    cache = start_decoding(model, src, max_len=n_steps)  # capacity: exactly the steps this output takes
    snaps = {}
    for step in range(1, n_steps + 1):
        _, cache = decode_step(model, np.array([[fed[step - 1]]]), cache)  # (1, 1) -> (1, 1, V)
        if step in wanted:
            kv = cache.layers[0]
            snaps[step] = CacheSnapshot(step, kv.K_self[0, 0, :cache.length].copy(), kv.K_cross[0, 0].copy(),
                                        kv.K_self[:, :, :cache.length].shape, kv.K_cross.shape, cache.nbytes())
    return out, fed, cache.capacity, snaps


# ---- section 2: what a step costs, counted and timed ------------------------------------------------------
def decoder_step_macs(config: ModelConfig, t: int, source_length: int, use_cache: bool) -> dict:
    """Multiply-adds of the matrix products of one decoding step at position ``t``.

    Position t is being fed (t tokens before it), so the prefix is n = t + 1 positions
    long.  Counted per decoder layer and summed; LayerNorm, softmax and additions are
    left out (they are O(n D), small next to these).

    * with the cache (``decode_step``): one new position.  Self-attention projects it
      (4 D^2) and scores it against n cached keys (2 n D); cross-attention projects it
      (2 D^2) against the S cached keys and values of H_enc (2 S D); feed-forward 2 D F;
      the head D V.
    * without (``model.decode`` on the whole prefix): every position again.  Self-attention
      4 n D^2 + 2 n^2 D (the full n x n score matrix, masked half included); cross-attention
      recomputes K, V from H_enc (2 S D^2) and attends from n queries (2 n D^2 + 2 n S D);
      feed-forward 2 n D F; the head n D V.

    Returns ``{"self_attention", "cross_attention", "feed_forward", "head", "total"}``.
    """
    D, F, V, L = config.d_model, config.d_ff, config.tgt_vocab_size, config.n_decoder_layers
    S, n = int(source_length), int(t) + 1
    if use_cache:
        self_attn = 4 * D * D + 2 * n * D
        cross = 2 * D * D + 2 * S * D
        ff = 2 * D * F
        head = D * V
    else:
        self_attn = 4 * n * D * D + 2 * n * n * D
        cross = 2 * S * D * D + 2 * n * D * D + 2 * n * S * D
        ff = 2 * n * D * F
        head = n * D * V
    out = {"self_attention": L * self_attn, "cross_attention": L * cross, "feed_forward": L * ff, "head": head}
    out["total"] = sum(out.values())
    return out


def once_per_example_macs(config: ModelConfig, source_length: int) -> dict:
    """Multiply-adds paid once per example however long the output: the encoder
    (L_enc x (4 S D^2 + 2 S^2 D + 2 S D F)) and, with the cache, every decoder layer's
    cross-attention K, V of H_enc (L_dec x 2 S D^2)."""
    D, F, S = config.d_model, config.d_ff, int(source_length)
    return {"encoder": config.n_encoder_layers * (4 * S * D * D + 2 * S * S * D + 2 * S * D * F),
            "cross_kv": config.n_decoder_layers * 2 * S * D * D}


class StepLatency(NamedTuple):
    """One decoder step at each position, timed and counted (:func:`step_latency`)."""

    positions: np.ndarray  # (K,) t: tokens already generated when the step runs
    cached_seconds: np.ndarray  # (K,) median seconds of one cached step at t
    uncached_seconds: np.ndarray  # (K,) median seconds of model.decode on the t + 1 positions
    cached_macs: np.ndarray  # (K,) multiply-adds counted from the shapes (decoder_step_macs)
    uncached_macs: np.ndarray  # (K,)
    repeats: int  # timed calls per median


def step_latency(model: EncoderDecoder, src_ids, positions, repeats: int = 50) -> StepLatency:
    """Time one decoder step at each position t, with the KV cache and without, and count
    its multiply-adds.

    Each time is the median of ``repeats`` calls after a warm-up
    (:func:`minitf.bench.decode.time_step`); for each t the cached and the uncached step are
    timed one after the other, so a change in machine load falls on both.  The medians still
    move with the load: on a busy machine a cached step (a fraction of a millisecond) has come
    out several times slower at one position than at another whose count is nearly the same,
    so compare times only where they differ by much more than that; the counts are exact and
    the same on every machine.  src_ids (B, S).
    """
    check_model(model)
    S = np.asarray(src_ids).shape[1]
    ts = np.array([int(t) for t in positions])
    cached, uncached = [], []
    for t in ts:
        cached.append(time_step(model, src_ids, int(t), use_cache=True, repeats=repeats))
        uncached.append(time_step(model, src_ids, int(t), use_cache=False, repeats=repeats))
    count = [[decoder_step_macs(model.config, int(t), S, use_cache)["total"] for t in ts] for use_cache in (True, False)]
    return StepLatency(ts, np.array(cached), np.array(uncached), np.array(count[0]), np.array(count[1]), repeats)
