"""Lesson 1, section 4 (*generating in a loop*): what a decode costs and what greedy search misses.

:func:`decode_latency` times a greedy decode against the target length, the encoder's and the
decoder's depth and the batch size; :func:`exhaustive_search` finds the most probable output by
enumerating every prefix, and :func:`search_case` trains a small model and compares greedy and
beam search with it.  Re-exported by :mod:`minitf.course.l01_seq2seq.experiments`, the lesson's
index of its measurements.

Shapes: B batch, S source length, T target length, V vocabulary.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ...checks import check_int
from ...decoding import beam_search, decode_step, greedy_search, reorder_cache, start_decoding
from ...layers.softmax import log_softmax
from ...models import RNNSeq2Seq
from ...models.rnn_seq2seq import default_rnn_config
from ...data.tasks import get_task
from ...training import History, TrainConfig, train
from ..kit.stored import one_blas_thread
from .sweep import LR, MAX_LEN, REFERENCE, lesson1_task

__all__ = ["Latency", "decode_latency", "SearchResult", "exhaustive_search", "SearchCase", "search_case"]


class Latency(NamedTuple):
    """Processor seconds of one greedy decode (encoder once, then T_tgt decoder steps), the
    fastest of the repeats."""

    configs: tuple  # (n_encoder_layers, n_decoder_layers) of each row
    target_lengths: tuple  # T_tgt of each column
    seconds: np.ndarray  # (configs, target lengths) fastest of the repeats
    repeats: int
    batch_sizes: tuple  # B of the batching comparison (reference depths, T_tgt = batch_target)
    batch_target: int
    batch_seconds: np.ndarray  # (batch sizes,) fastest decode of the whole batch

    def per_token(self) -> np.ndarray:
        """(configs,) seconds per emitted token: the slope of a straight line through each row."""
        return np.array([np.polyfit(self.target_lengths, row, 1)[0] for row in self.seconds])

    def fixed(self) -> np.ndarray:
        """(configs,) seconds paid once per source: the intercept of that line at T_tgt = 0."""
        return np.array([np.polyfit(self.target_lengths, row, 1)[1] for row in self.seconds])


@one_blas_thread
def decode_latency(configs=((1, 1), (4, 1), (1, 4)), target_lengths=(8, 16, 32, 64), repeats: int = 11,
                   batch_sizes=(1, 32), batch_target: int = 32, seed: int = 0) -> Latency:
    """Time :func:`~minitf.decoding.greedy_search` of one 12-token source with ``<eos>`` off
    (exactly T_tgt tokens), for encoders and decoders of several depths (untrained LSTMs,
    d = 64: the time does not depend on the weights).  Then one decode of a batch of B
    sources, for each B of ``batch_sizes``.

    The clock is the process's processor time (``time.process_time``; one BLAS thread, one
    Python thread): on a busy machine the wall clock also counts the waits for a core.
    Processor time is not immune either: a process that shares a core's caches and memory
    bandwidth with others runs slower per instruction (on the course's 2-core machine under
    load it rose severalfold).  So each time is the *fastest* of ``repeats`` after a warm-up,
    the least disturbed one, and the configurations take turns within each repeat, so that a
    change in the machine's speed hits all of them alike.  The absolute times still depend on
    the machine and its load; the ratios between rows (:meth:`Latency.per_token`) are what
    carries over: on the 2-core machine under loads of 4 to 10, three runs gave per-token
    ratios of 1.9 to 2.1 for the 1 + 4 decoder against 1 + 1, and 0.94 to 0.95 for 4 + 1 (with
    the median of 7 instead of the fastest, they had ranged from 1.5 to 3.2 and 0.8 to 1.8)."""
    task = lesson1_task()
    max_len = max(MAX_LEN, *target_lengths, batch_target)
    models = [RNNSeq2Seq(REFERENCE.model_config(task, seed).replace(n_encoder_layers=e, n_decoder_layers=l,
                                                                     max_len=max_len)) for e, l in configs]
    rng = np.random.default_rng(seed)
    src = rng.integers(4, task.tokenizer.vocab_size, size=(max(batch_sizes), MAX_LEN))  # (B, S)

    def once(model, B, T) -> float:
        t0 = time.process_time()
        greedy_search(model, src[:B], max_new_tokens=T, eos_id=None)
        return time.process_time() - t0

    times = np.zeros((len(configs), len(target_lengths), repeats))
    batch_times = np.zeros((len(batch_sizes), repeats))
    for model in models:
        once(model, 1, 4)  # warm-up
    for r in range(repeats):
        for i, model in enumerate(models):
            for j, T in enumerate(target_lengths):
                times[i, j, r] = once(model, 1, T)
        for k, B in enumerate(batch_sizes):
            batch_times[k, r] = once(models[0], B, batch_target)
    return Latency(tuple(configs), tuple(target_lengths), times.min(-1), repeats, tuple(batch_sizes),
                   batch_target, batch_times.min(-1))


class SearchResult(NamedTuple):
    """The most probable output of at most ``max_tokens`` tokens (:func:`exhaustive_search`)."""

    tokens: tuple  # generated ids, ending with <eos>
    log_prob: float  # its log-probability under the model
    prefixes: int  # prefixes the search scored (each: one decoder step for all V continuations)


def exhaustive_search(model: RNNSeq2Seq, src_ids, max_tokens: int) -> SearchResult:
    """The output y (ending with ``<eos>``, at most ``max_tokens`` tokens with it) that
    maximises log p(y | x) = sum_t log p(y_t | y_<t, x): every output is considered, depth
    first, most likely continuation first, over the whole target vocabulary.

    A prefix is abandoned as soon as its log-probability is no better than the best complete
    output found so far: adding tokens only lowers it (each log p <= 0), so nothing below
    that prefix can win, and the answer is the one scoring every output one by one would
    give (``tests/course/l01/test_experiments.py`` checks that on a small case).  src_ids (1, S)."""
    c = model.config
    V, eos = c.tgt_vocab_size, c.eos_id
    src_ids = np.asarray(src_ids)
    if src_ids.ndim != 2 or src_ids.shape[0] != 1:
        raise ValueError(f"src_ids: expected one source, shape (1, S), got {src_ids.shape}")
    max_tokens = check_int("max_tokens", max_tokens, 1, c.max_len)
    best = {"log_prob": -np.inf, "tokens": ()}
    count = [0]
    with model.evaluating():
        root = start_decoding(model, src_ids, group_size=V)  # V rows, every one the empty prefix
        logits, root = decode_step(model, np.full((V, 1), c.bos_id), root)  # (V, 1, V), rows alike

        def visit(state, next_logits, prefix: tuple, log_prob: float) -> None:
            count[0] += 1
            lp = log_softmax(next_logits)  # (V,) log p(next | prefix, x)
            children = None
            for token in np.argsort(-lp, kind="stable"):
                score = log_prob + float(lp[token])
                if score <= best["log_prob"]:
                    return  # the rest are less likely still
                if token == eos:
                    best.update(log_prob=score, tokens=prefix + (eos,))
                elif len(prefix) + 2 <= max_tokens:  # room for this token and an <eos>
                    if children is None:  # row v continues the prefix with token v: all V at once
                        children_logits, children = decode_step(model, np.arange(V)[:, None], state)
                    child = reorder_cache(children, np.full(V, token))  # (V rows of the child)
                    visit(child, children_logits[token, 0], prefix + (int(token),), score)

        visit(root, logits[0, 0], (), 0.0)
    return SearchResult(best["tokens"], best["log_prob"], count[0])


class SearchCase(NamedTuple):
    """Greedy search against exhaustive search and beam search on a tiny model (:func:`search_case`)."""

    sources: list  # the held-out sources searched
    greedy: list  # greedy output per source (text)
    greedy_log_prob: np.ndarray  # (N,)
    best: list  # the most probable output per source (text)
    best_log_prob: np.ndarray  # (N,)
    beam: list  # beam search's output (num_beams beams, no length penalty)
    num_beams: int
    prefixes: int  # prefixes the exhaustive searches scored, in all
    example: int  # index of the first source where the most probable output is not greedy's
    example_steps: list  # [(greedy token, p, best token, p)] at every step of the example
    train_history: History
    tokenizer: object

    @property
    def greedy_not_best(self) -> np.ndarray:
        return self.best_log_prob > self.greedy_log_prob + 1e-9


def _token_probs(model: RNNSeq2Seq, src_ids, tokens) -> np.ndarray:
    """p(y_t | y_<t, x) of each token of ``tokens`` (teacher-forced), (len(tokens),)."""
    dec_in = np.array([[model.config.bos_id, *tokens[:-1]]])
    with model.evaluating():
        logits, _ = model.forward(src_ids, dec_in)
    return np.exp(log_softmax(logits[0])[np.arange(len(tokens)), list(tokens)])


@one_blas_thread
def search_case(seed: int = 0, n_sources: int = 60, max_tokens: int = 10, num_beams: int = 3) -> SearchCase:
    """A tiny model (LSTM, d = 16, E = 8) trained for 400 updates on ``copy`` with 2 symbols and
    lengths 3..8, still unsure of many outputs; then, for ``n_sources`` (60 drawn, the distinct ones)
    held-out sources, greedy search, exhaustive search (:func:`exhaustive_search`) and beam
    search, each output scored by its log-probability under the model."""
    task = get_task("copy", min_len=3, max_len=8, n_symbols=2)
    tok = task.tokenizer
    model = RNNSeq2Seq(default_rnn_config(task, cell="lstm", hidden_size=16, embedding_size=8, dtype="float64",
                                          seed=seed))
    sources = list(dict.fromkeys(s for s, _ in task.dataset(n_sources, seed=seed + 500)))  # unique, in order
    cfg = TrainConfig(steps=400, batch_size=32, lr=LR, warmup=10, eval_every=0, eval_size=8, seed=seed,
                      progress=False)
    history = train(model, task, cfg, held_out=sources)
    model.eval()
    greedy, g_lp, best, b_lp, beam, prefixes = [], [], [], [], [], 0
    example, steps = -1, []
    for i, s in enumerate(sources):
        src = np.array([tok.encode(s)])  # (1, S)
        g = greedy_search(model, src, max_new_tokens=max_tokens)
        g_tokens = tuple(int(t) for t in g.sequences[0, :g.lengths[0]])
        r = exhaustive_search(model, src, max_tokens)
        b = beam_search(model, src, num_beams=num_beams, max_new_tokens=max_tokens, length_penalty=0.0,
                        early_stopping="never")
        greedy.append(tok.decode(list(g_tokens)))
        g_lp.append(float(g.log_probs[0]) if g.finished[0] else -np.inf)
        best.append(tok.decode(list(r.tokens)))
        b_lp.append(r.log_prob)
        beam.append(tok.decode([int(t) for t in b.sequences[0, :b.lengths[0]]]))
        prefixes += r.prefixes
        if example < 0 and r.log_prob > g_lp[-1] + 1e-9:
            example = i
            pg, pb = _token_probs(model, src, g_tokens), _token_probs(model, src, r.tokens)
            T = max(len(g_tokens), len(r.tokens))
            name = lambda t: "<eos>" if t == tok.eos_id else tok.decode([t])  # noqa: E731
            steps = [(name(g_tokens[t]) if t < len(g_tokens) else "", float(pg[t]) if t < len(g_tokens) else np.nan,
                      name(r.tokens[t]) if t < len(r.tokens) else "", float(pb[t]) if t < len(r.tokens) else np.nan)
                     for t in range(T)]
    return SearchCase(sources, greedy, np.array(g_lp), best, np.array(b_lp), beam, num_beams, prefixes, example,
                      steps, history, tok)
