"""Lesson 1 (*The sequence-to-sequence problem: the RNN encoder-decoder*): the runs and the measurements.

The lesson's task is ``copy`` on strings of 3 to 12 letters (12 symbols): the simplest case
of a target that depends on the whole source, with a known alignment (target t is source t),
and one where the fixed vector's trouble with length shows within a few hundred updates.  Its
models are :class:`~minitf.models.RNNSeq2Seq` LSTM encoder-decoders (E = 32, hidden width d),
trained in float64 (:mod:`minitf.course.kit.runs` says why) by :func:`minitf.training.train`.
A model is named by a :class:`Variant` (width, conditioning, reversal, attention, scheduled
sampling, steps) and a seed; :func:`run_variant` trains it once per process.

**Stored sweeps.**  Accuracy against source length for several widths, conditionings,
reversal, attention scores and teacher-forcing schedules, over :data:`SEEDS`, is far more
training than a notebook can do live (60 runs).  :func:`measure` runs the whole sweep and
writes :data:`RESULTS_PATH` (``minitf/course/l01_seq2seq/results/sweep.json``: the settings, seeds,
minitf and NumPy versions, the time it took, every run's numbers).  Reproduce it with::

    OPENBLAS_NUM_THREADS=1 python -m minitf.course.l01_seq2seq --measure

The notebook and the figures (:mod:`minitf.course.l01_seq2seq.figures`) read that file
(:func:`load_results`); the notebook re-runs the reference and the reversed run live and checks
them against the file (:func:`compare_with_stored`), and reads the scheduled-sampling and attention
runs of seed 0 from it (training them took half of the notebook's time);
``tests/course/l01/test_experiments.py`` re-runs all four and checks them.
In float64 on one BLAS thread a run is deterministic: the same seed gives the same numbers.

======================================  ===================================================
section of Lesson 1                     what is measured here
======================================  ===================================================
set-up                                  :mod:`minitf.course.l01_seq2seq.sweep` (re-exported
                                        here): :func:`lesson1_task`, :func:`eval_pairs`,
                                        :class:`Variant`, :func:`run_variant`,
                                        :func:`evaluate_by_length`, :func:`load_results`,
                                        :func:`compare_with_stored`; here :func:`measure`
1  two networks for two lengths         :func:`length_coupling` (one recurrent layer: one
                                        output per input; the encoder-decoder: any length)
2  the conditioning vector and its      :func:`cell_parameter_counts`, :func:`memory_sizes`;
   width                                the width and init/concat sweep (:data:`SWEEP`)
3  reversing the source                 :func:`gradient_profile` (BPTT: the gradient that
                                        reaches each source position); the reversal sweep
4  generating in a loop                 :mod:`minitf.course.l01_seq2seq.generation`
                                        (re-exported here): :func:`decode_latency` (per
                                        sequence, against T_tgt, encoder and decoder depth,
                                        batch size); :func:`exhaustive_search`,
                                        :func:`search_case` (greedy against the most
                                        probable output)
5  teacher forcing and the gap          :func:`exposure_gap`, :func:`independence_check`
                                        (are the teacher-forced errors of one output
                                        independent?), :func:`masked_loss_check`,
                                        :func:`sampled_gradient_check`; the scheduled
                                        sampling sweep (:data:`SCHEDULES`)
6  removing the middle                  the attention sweep; :func:`alignment` (weights of
                                        a trained model against the copy alignment)
======================================  ===================================================

Shapes: B batch, S source length, T target length, d the hidden width (the RNN modules
call it H), E the embedding width, V vocabulary.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...data import IGNORE_INDEX
from ...decoding import greedy_search
from ...layers.softmax import log_softmax
from ...loss import cross_entropy
from ...models import RNNSeq2Seq
from ...rnn import Recurrent
from ..kit import stored
from .sweep import (  # the sweep's task, models and stored results, re-exported
                    MIN_LEN, MAX_LEN, N_SYMBOLS, EVAL_PER_LENGTH, EVAL_SEED, EMBEDDING, REFERENCE_WIDTH, STEPS, LONG_STEPS,
                    BATCH_SIZE, LR, WARMUP, WIDTHS, SEEDS, ATTENTIONS, ATTENTION_FEEDS, RESULTS_PATH, COMMAND,
                    CURVE_WINDOW, lesson1_task, eval_pairs, Variant, REFERENCE, REVERSED, ATTENTION, SCHEDULED, SWEEP,
                    LengthMetrics, evaluate_by_length, Run, run_variant, _round, _significant, run_numbers, load_results,
                    stored_runs, seed_mean, Match, compare_with_stored)
from .generation import Latency, decode_latency, SearchResult, exhaustive_search, SearchCase, search_case  # section 4
from ..kit.schedules import FINAL_EPS, SCHEDULES, schedule_for
from ..kit.stored import Stopwatch, one_blas_thread, provenance, write_results

__all__ = [
    "MIN_LEN", "MAX_LEN", "N_SYMBOLS", "EVAL_PER_LENGTH", "EMBEDDING", "REFERENCE_WIDTH", "STEPS", "LONG_STEPS",
    "WIDTHS", "SEEDS", "ATTENTIONS", "ATTENTION_FEEDS", "SCHEDULES", "FINAL_EPS", "RESULTS_PATH", "CURVE_WINDOW",
    "BATCH_SIZE", "LR", "WARMUP", "EVAL_SEED",
    "lesson1_task", "eval_pairs", "Variant", "REFERENCE", "REVERSED", "ATTENTION", "SCHEDULED", "SWEEP",
    "schedule_for", "Run", "run_variant", "LengthMetrics", "evaluate_by_length", "run_numbers", "measure",
    "load_results", "stored_runs", "seed_mean", "Match", "compare_with_stored",
    "length_coupling", "cell_parameter_counts", "memory_sizes",
    "GRADIENT_PAIRS", "GradientProfile", "gradient_profile",
    "one_blas_thread", "Latency", "decode_latency", "SearchResult", "exhaustive_search", "SearchCase", "search_case",
    "ExposureGap", "exposure_gap", "FRESH_PAIRS", "fresh_pairs", "Independence", "independence_check",
    "masked_loss_check", "sampled_gradient_check",
    "Alignment", "alignment",
]

# ---- the results file ----------------------------------------------------------------------------
def _settings() -> dict:
    return {"task": {"name": "copy", "min_len": MIN_LEN, "max_len": MAX_LEN, "n_symbols": N_SYMBOLS},
            "eval": {"per_length": EVAL_PER_LENGTH, "seed": f"{EVAL_SEED} + n"},
            "model": {"cell": "lstm", "embedding_size": EMBEDDING, "layers": "1 + 1", "dtype": "float64",
                      "attention_feed": ATTENTION_FEEDS},
            "train": {"steps": STEPS, "long_steps": LONG_STEPS, "batch_size": BATCH_SIZE, "optimizer": "adamw",
                      "lr": LR, "schedule": "warmup_cosine", "warmup": WARMUP, "clip_norm": 1.0,
                      "weight_decay": 0.01},
            "scheduled_sampling": {"final_eps": FINAL_EPS, "choice": "argmax",
                                   "schedules": {s: schedule_for(s, STEPS).to_dict() for s in SCHEDULES},
                                   "schedules_long": {s: schedule_for(s, LONG_STEPS).to_dict() for s in SCHEDULES}},
            "gradient_pairs": {"n": GRADIENT_PAIRS[0], "length": MAX_LEN, "seed": GRADIENT_PAIRS[1]},
            "widths": list(WIDTHS), "seeds": list(SEEDS), "curve_window": CURVE_WINDOW}


@one_blas_thread
def measure(path: Path | str | None = RESULTS_PATH, seeds=SEEDS, variants=SWEEP, log=sys.stderr) -> dict:
    """Train every variant with every seed, and measure what the lesson stores: each run's
    :func:`run_numbers`, the :func:`gradient_profile` of the reference model forwards and
    reversed (at initialisation and after training, seed 0), the :func:`independence_check` of
    the reference model (every seed, held-out and fresh pairs) and the :func:`alignment` of the
    attention model (seed 0).  Writes ``path`` (None: nothing written) and returns the dict.
    Takes about 4 minutes of processor time (the file records it, and the wall time)."""
    clock = Stopwatch()
    runs: dict = {}
    for variant in variants:
        for seed in seeds:
            run = run_variant(variant, seed)
            runs.setdefault(variant.name, {})[str(seed)] = run_numbers(run)
            if log is not None:
                print(f"{variant.name} seed {seed}: free-running token accuracy "
                      f"{run.metrics.free_running_token.mean():.3f} ({run.cpu_seconds:.1f} s)", file=log, flush=True)
    gradients = {}
    for variant in (REFERENCE, REVERSED):
        gradients[variant.name] = {
            "init": gradient_profile(RNNSeq2Seq(variant.model_config(lesson1_task(), 0)))._asdict(),
            "trained": gradient_profile(run_variant(variant, 0).model)._asdict()}
    gradients = {k: {when: {f: _significant(p[f]) for f in ("total", "own")} for when, p in g.items()}
                 for k, g in gradients.items()}
    independence = {str(seed): {name: independence_check(run_variant(REFERENCE, seed), pairs).stored()
                                for name, pairs in (("held_out", eval_pairs()), ("fresh", fresh_pairs()))}
                    for seed in seeds}
    al = alignment(run_variant(ATTENTION, 0))
    results = {
        "about": ("Lesson 1's stored sweep: copy task, LSTM encoder-decoders trained from scratch, every variant "
                  "with every seed; accuracies on 40 held-out pairs of each source length 3..12.  Written by "
                  "minitf.course.l01_seq2seq.measure."),
        **provenance(COMMAND), **clock.seconds(),
        "settings": _settings(),
        "lengths": list(range(MIN_LEN, MAX_LEN + 1)),
        "runs": runs,
        "gradients": gradients,
        "independence": {"variant": REFERENCE.name, "fresh_pairs": {"per_length": FRESH_PAIRS[0],
                                                                    "seed": f"{FRESH_PAIRS[1]} + n"},
                         "measured_on": provenance(COMMAND)["measured_on"], "seeds": independence},
        "alignment": {"variant": ATTENTION.name, "seed": 0, "source": al.source,
                      "weights": [_round(r, 6) for r in al.weights],
                      "argmax_match": round(al.argmax_match, 6),
                      "weight_on_source_t": round(al.weight_on_source_t, 6), "positions": al.positions},
    }
    if path is not None:
        write_results(path, results)
    return results


# ---- section 1: two networks for two lengths ------------------------------------------------------
def length_coupling(seed: int = 0) -> dict:
    """One recurrent layer, and an (untrained) encoder-decoder, on the same 7-token sources:
    ``{"layer_in": (B, S, E), "layer_out": (B, S, d), "seq2seq_src": (B, S), "seq2seq_out": [(B, T) ...]}``:
    the layer gives one output per input step; the encoder-decoder's output length is the
    decoder's to choose (here forced to 3 and to 11 tokens)."""
    rng = np.random.default_rng(seed)
    B, S = 2, 7
    layer = Recurrent("lstm", EMBEDDING, REFERENCE_WIDTH, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, S, EMBEDDING))  # (B, S, E)
    (outputs, _), _ = layer.forward(x)  # (B, S, d)
    model = RNNSeq2Seq(REFERENCE.model_config(lesson1_task(), seed))
    src = rng.integers(4, model.config.src_vocab_size, size=(B, S))  # (B, S) letters, no padding
    outs = [greedy_search(model, src, max_new_tokens=T, eos_id=None).sequences.shape for T in (3, 11)]
    return {"layer_in": x.shape, "layer_out": outputs.shape, "seq2seq_src": src.shape, "seq2seq_out": outs}


# ---- section 2: the conditioning vector and its width -----------------------------------------------
def cell_parameter_counts(d: int = REFERENCE_WIDTH) -> dict:
    """The decoder's LSTM cell under "init" and "concat", and the whole model's count:
    ``{conditioning: {"cell_input": D_in, "cell": params, "formula": 4d(D_in + d) + 8d, "model": params}}``."""
    out = {}
    for conditioning in ("init", "concat"):
        model = RNNSeq2Seq(Variant(hidden_size=d, conditioning=conditioning).model_config(lesson1_task(), 0))
        cell = model.decoder_cells[0]
        D_in = cell.input_size
        out[conditioning] = {"cell_input": D_in, "cell": cell.num_parameters(), "formula": 4 * d * (D_in + d) + 8 * d,
                             "model": model.num_parameters()}
    return out


def memory_sizes(source_lengths=(3, 12, 100), d: int = REFERENCE_WIDTH, seed: int = 0) -> dict:
    """What an (untrained) encoder hands over for sources of each length:
    ``{S: {"h": (1, d), "c": (1, d), "states": (1, S, d)}}``: the vector (the LSTM's final h and
    c) has the same size whatever S; the states attention reads grow with S."""
    task = lesson1_task()
    model = RNNSeq2Seq(REFERENCE.model_config(task, seed).replace(hidden_size=d, max_len=max(source_lengths)))
    rng = np.random.default_rng(seed)
    out = {}
    for S in source_lengths:
        memory, _ = model.encode(rng.integers(4, task.tokenizer.vocab_size, size=(1, S)))
        out[S] = {"h": memory.conditioning.h.shape, "c": memory.conditioning.c.shape, "states": memory.states.shape}
    return out


# ---- section 3: reversing the source --------------------------------------------------------------
GRADIENT_PAIRS = (64, 7)  # 64 sources of MAX_LEN letters, drawn with seed 7
"""The batch :func:`gradient_profile` measures on: every source of the same length, so that
position j means the same distance for every row."""


class GradientProfile(NamedTuple):
    """How much gradient reaches each source position (mean over the batch of |dL/dx_j|, x_j
    the embedding of source token j, in source order)."""

    total: np.ndarray  # (S,) from the whole loss (mean over all target positions)
    own: np.ndarray  # (S,) from the loss at target position j alone: the token that copies x_j
    per_target: np.ndarray  # (T, S) from the loss at target position t alone, to source position j


@one_blas_thread
def gradient_profile(model: RNNSeq2Seq) -> GradientProfile:
    """Backpropagate through time from the teacher-forced loss of :data:`GRADIENT_PAIRS` and
    measure what reaches each source embedding: once from the whole loss, then once from
    each target position's loss alone (its mean over the batch).  The model's parameter
    gradients are zeroed afterwards."""
    n, seed = GRADIENT_PAIRS
    pairs = lesson1_task(MAX_LEN, MAX_LEN).dataset(n, seed=seed)
    batch = lesson1_task().batch(pairs)
    with model.evaluating():
        logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    _, dlogits = cross_entropy(logits, batch.labels)  # (B, T, V): (p_hat - y) / (B T), no padding here
    B, T, _ = dlogits.shape

    def reaching(dl) -> np.ndarray:
        model.zero_grad()
        g = model.backward(dl, cache)
        return np.linalg.norm(g.dsrc_embeddings, axis=-1).mean(0)  # (B, S, E) -> (S,)

    total = reaching(dlogits)
    per_target = np.zeros((T, MAX_LEN))
    for t in range(T):
        one = np.zeros_like(dlogits)
        one[:, t] = dlogits[:, t] * T  # the gradient of mean_b loss_t alone
        per_target[t] = reaching(one)
    model.zero_grad()
    return GradientProfile(total, np.diag(per_target[:MAX_LEN]).copy(), per_target)


# ---- section 4: generating in a loop (generation.py, re-exported above) ----------------------------


# ---- section 5: teacher forcing and the gap it leaves ------------------------------------------------
class ExposureGap(NamedTuple):
    """Teacher-forced against free-running accuracy of one run, by source length."""

    lengths: np.ndarray  # (10,) n; the target has n + 1 positions (<eos>)
    teacher_forced_token: np.ndarray  # (10,)
    free_running_token: np.ndarray  # (10,)
    eps: np.ndarray  # (10,) per-token error rate fed the gold prefix, over all n + 1 positions: 1 - teacher_forced_token
    independent_exact: np.ndarray  # (10,) (1 - eps)^(n+1): all n + 1 right if every position erred at the rate eps
    #                                independently
    independent_by_position: np.ndarray  # (10,) prod_t (1 - eps_t), eps_t the error rate at position t: all right
    #                                      if the positions erred independently, each at its own rate
    free_running_exact: np.ndarray  # (10,) measured
    teacher_forced_sequence: np.ndarray  # (10,) every argmax right when fed the gold prefix


def exposure_gap(run: Run) -> ExposureGap:
    """The gap on the held-out pairs, from :func:`evaluate_by_length` and, for the error rate of
    each target position, :func:`independence_check`."""
    m = run.metrics
    eps = 1.0 - m.teacher_forced_token
    by_position = independence_check(run).by_position
    return ExposureGap(m.lengths, m.teacher_forced_token, m.free_running_token, eps, (1.0 - eps) ** (m.lengths + 1),
                       by_position, m.free_running_exact, m.teacher_forced_sequence)


FRESH_PAIRS = (400, 900)
"""Pairs per source length of :func:`fresh_pairs`, and the seed of length n's (900 + n): ten
times the held-out pairs, for a test that 40 pairs per length cannot resolve."""


def fresh_pairs(per_length: int = FRESH_PAIRS[0], seed: int = FRESH_PAIRS[1]) -> list:
    """``per_length`` pairs of every length 3..12, length n drawn with ``seed + n``: apart from
    :func:`eval_pairs` (other seeds), though not held out of training (a training batch may
    have drawn some of them: with 12 symbols, short strings recur)."""
    pairs = []
    for n in range(MIN_LEN, MAX_LEN + 1):
        pairs += lesson1_task(n, n).dataset(per_length, seed=seed + n)
    return pairs


class Independence(NamedTuple):
    """Whether an output's teacher-forced errors are independent of each other (:func:`independence_check`).

    A greedy output is right in full exactly when every teacher-forced argmax is right, so
    if the n + 1 positions erred independently, at position t with rate eps_t, it would be
    right in full with probability prod_t (1 - eps_t).  Errors that cluster in the same
    outputs leave more outputs right in full than that; errors that avoid each other, fewer.
    (Since the eps_t vary with t, prod_t (1 - eps_t) <= (1 - mean eps)^(n+1): the mean rate
    overstates what independence predicts.)"""

    lengths: np.ndarray  # (L,) source lengths n
    pairs: np.ndarray  # (L,) pairs of each length
    eps_by_position: list  # L arrays (n + 1,): teacher-forced error rate at each target position, <eos> last
    mean_rate: np.ndarray  # (L,) (1 - mean eps)^(n+1)
    by_position: np.ndarray  # (L,) prod_t (1 - eps_t)
    measured: np.ndarray  # (L,) share of the outputs with every teacher-forced argmax right

    @property
    def predicted_count(self) -> float:
        """Outputs right in full, over every length, if the positions erred independently."""
        return float((self.pairs * self.by_position).sum())

    @property
    def mean_rate_count(self) -> float:
        return float((self.pairs * self.mean_rate).sum())

    @property
    def measured_count(self) -> int:
        return int(round(float((self.pairs * self.measured).sum())))

    @property
    def z(self) -> float:
        """(measured - predicted) in binomial standard errors, sqrt(sum_n N p (1 - p)) (ignoring
        that the eps_t are estimated from the same outputs)."""
        p = self.by_position
        return (self.measured_count - self.predicted_count) / float(np.sqrt((self.pairs * p * (1 - p)).sum()))

    def stored(self) -> dict:
        """What the stored sweep keeps of it (:func:`measure`)."""
        return {"pairs": int(self.pairs.sum()), "predicted": round(self.predicted_count, 2),
                "mean_rate": round(self.mean_rate_count, 2), "measured": self.measured_count, "z": round(self.z, 3)}


def independence_check(run: Run, pairs: list | None = None) -> Independence:
    """The teacher-forced argmax of ``run``'s model at every target position of ``pairs``
    (default :func:`eval_pairs`), one forward: by source length, the error rate at each
    position, what independent errors at those rates predict, and what happened."""
    pairs = eval_pairs() if pairs is None else pairs
    batch = lesson1_task().batch(pairs)
    with run.model.evaluating():
        logits, _ = run.model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V) teacher-forced
    right = logits.argmax(-1) == batch.labels  # (B, T); the labels of a length-n source: n letters, <eos>
    n_of = np.array([len(s) for s, _ in pairs])
    lengths = np.unique(n_of)
    eps_t, count, mean_rate, by_position, measured = [], [], [], [], []
    for n in lengths:
        r = right[n_of == n][:, :n + 1]  # (N, n + 1), the real positions only
        e = 1.0 - r.mean(0)  # (n + 1,)
        eps_t.append(e)
        count.append(len(r))
        mean_rate.append((1.0 - e.mean()) ** (n + 1))
        by_position.append(float(np.prod(1.0 - e)))
        measured.append(float(r.all(1).mean()))
    return Independence(lengths, np.array(count), eps_t, np.array(mean_rate), np.array(by_position),
                        np.array(measured))


def masked_loss_check(run: Run) -> dict:
    """The loss of a padded batch of two held-out pairs (3 and 12 letters) as minitf computes it,
    against the two ways of averaging by hand, and the gradient on the padded positions:
    ``{"loss", "sum_over_real", "n_real", "B_times_T", "mean_over_real", "mean_over_padded",
    "max_grad_on_padding", "alone": [each pair's own loss], "token_weighted": ...}``."""
    pairs = [p for p in eval_pairs() if len(p[0]) in (MIN_LEN, MAX_LEN)]
    pairs = [pairs[0], pairs[-1]]
    batch = lesson1_task().batch(pairs)
    model = run.model
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (2, T, V)
    loss, dlogits = cross_entropy(logits, batch.labels)
    real = batch.labels != IGNORE_INDEX  # (2, T)
    logp = log_softmax(logits)
    per_position = -np.take_along_axis(logp, np.where(real, batch.labels, 0)[..., None], -1)[..., 0] * real  # (2, T)
    alone = [cross_entropy(model.forward(batch.input_ids[b:b + 1, :len(pairs[b][0])],
                                         batch.decoder_input_ids[b:b + 1, :real[b].sum()])[0],
                           batch.labels[b:b + 1, :real[b].sum()])[0] for b in range(2)]
    n = real.sum(1)
    return {"loss": loss, "sum_over_real": float(per_position.sum()), "n_real": int(real.sum()),
            "B_times_T": int(real.size), "mean_over_real": float(per_position.sum() / real.sum()),
            "mean_over_padded": float(per_position.sum() / real.size),
            "max_grad_on_padding": float(np.abs(dlogits[~real]).max()), "alone": alone,
            "token_weighted": float((alone[0] * n[0] + alone[1] * n[1]) / n.sum()), "lengths": n.tolist()}


def sampled_gradient_check(run: Run, p: float = 0.5, seed: int = 0) -> dict:
    """Scheduled sampling's gradient is the teacher-forced gradient of the tokens it happened to
    feed: a training forward with gold probability ``p`` (scheduled sampling's p, which
    Bengio et al. call epsilon; the lesson keeps epsilon for error rates), then a plain teacher-forced forward
    fed the very tokens the first one chose; both backward.  ``{"own_tokens_fed": share of
    steps t > 0 fed the model's own token, "loss_difference", "max_gradient_difference"}``
    (both 0: no gradient flows through the choice of a token).  The run's gradients are zeroed."""
    model = run.model
    pairs = eval_pairs()[-8:]
    batch = lesson1_task().batch(pairs)
    grads = []
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids, teacher_forcing=p, rng=seed)
    fed = cache.decoder.fed
    for lg, ch in ((logits, cache), model.forward(batch.input_ids, fed)):
        loss, dl = cross_entropy(lg, batch.labels)
        model.zero_grad()
        model.backward(dl, ch)
        grads.append((loss, {k: g.copy() for k, g in model.gradients().items()}))
    model.zero_grad()
    real = batch.labels[:, 1:] != IGNORE_INDEX
    return {"own_tokens_fed": float((~cache.decoder.gold[:, 1:])[real].mean()),
            "loss_difference": abs(grads[0][0] - grads[1][0]),
            "max_gradient_difference": max(float(np.abs(grads[0][1][k] - grads[1][1][k]).max()) for k in grads[0][1])}


# ---- section 6: removing the middle ----------------------------------------------------------------
class Alignment(NamedTuple):
    """The attention weights of a trained model against the copy alignment (target t reads source t)."""

    source: str  # the example: the first held-out pair of MAX_LEN letters
    weights: np.ndarray  # (n + 1, n) its weights: row t is the decoder step that predicts target t (<eos> last)
    argmax_match: float  # over every held-out pair: share of target positions t < n whose largest weight is on t
    weight_on_source_t: float  # mean weight on source position t, same positions
    positions: int  # target positions scored


def alignment(run: Run) -> Alignment:
    """Teacher-forced attention weights (``RNNSeq2Seq.attention_weights``) of an attention
    run on :func:`eval_pairs`."""
    if run.variant.attention == "none":
        raise ValueError(f"run: expected a run with attention, got {run.variant.name!r}")
    pairs = eval_pairs()
    batch = lesson1_task().batch(pairs)
    with run.model.evaluating():
        _, cache = run.model.forward(batch.input_ids, batch.decoder_input_ids)
    A = RNNSeq2Seq.attention_weights(cache)  # (B, T, S)
    hits = mass = total = 0
    for b, (src, _) in enumerate(pairs):
        n = len(src)
        rows = A[b, np.arange(n), :n]  # (n, n) target t < n
        hits += int((rows.argmax(-1) == np.arange(n)).sum())
        mass += float(rows[np.arange(n), np.arange(n)].sum())
        total += n
    index = next(i for i, (s, _) in enumerate(pairs) if len(s) == MAX_LEN)
    source = pairs[index][0]
    return Alignment(source, A[index, :MAX_LEN + 1, :MAX_LEN].copy(), hits / total, mass / total, total)


# ---- the command -------------------------------------------------------------------------------------
def main(argv=None) -> int:
    return stored.measure_main(argv, module="minitf.course.l01_seq2seq", measure=measure, default_out=RESULTS_PATH,
                               description="Lesson 1's stored sweep (minitf/course/l01_seq2seq/results/sweep.json).")

