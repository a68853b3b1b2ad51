"""Greedy search and sampling: one token per row per step (Lesson 9, section 3).

Both run the same loop (:func:`_generate_rows`) and differ only in how a row's next token is
chosen from its logits: the argmax, or a draw from the distribution the logit processors
shape (temperature -> top-k -> top-p, in Hugging Face's order and with its semantics).
Greedy search keeps uncached decoding (``use_cache=False``: the decoder re-run on the whole
prefix each step), the reference the cached path is tested against and the only way to
decode a model whose decoder is not causal.
"""
from __future__ import annotations

import numpy as np

from ..checks import as_rng, check_int
from ..layers.softmax import log_softmax, softmax
from ._args import MODEL, _check_common, _check_not_all_banned, _check_not_recurrent, _check_sampling_args
from .cache import decode_step, start_decoding
from .outputs import Candidate, GenerationOutput, TraceStep
from .processors import banned_ngram_tokens, warp_logits

__all__ = ["greedy_search", "sample"]

TRACE_CANDIDATES = 5  # greedy / sampling traces list this many of the likeliest tokens per row


def _draw(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One token per row from probs (N, V), by inverting the CDF: vectorised over rows."""
    cdf = np.cumsum(probs, axis=-1)  # (N, V)
    u = rng.random(probs.shape[0]) * cdf[:, -1]  # (N,) uniform in [0, total mass)
    return np.argmax(cdf > u[:, None], axis=-1)  # (N,) first index whose CDF passes u (a token with p > 0)


def _trace_rows(steps, t, ids, G, alive, cum_before, model_logp, dist_logp, chosen, eos_id):
    """Greedy / sampling trace: one TraceStep per example with a live row at step t.

    A candidate's ``log_prob`` is from the distribution the token was chosen from
    (``dist_logp``: after bans, temperature, top-k, top-p); its ``score`` adds the model's
    own log-prob (``model_logp``) to the row's running sum, as ``log_probs`` does."""
    N = ids.shape[0]
    for b in range(N // G):
        rows = [n for n in range(b * G, b * G + G) if alive[n]]
        if not rows:
            continue
        cands = []
        for n in rows:
            top = [int(i) for i in np.argsort(-dist_logp[n], kind="stable")[:TRACE_CANDIDATES]
                   if np.isfinite(dist_logp[n, i])]
            if int(chosen[n]) not in top:
                top.append(int(chosen[n]))
            for tok in top:
                status = "dropped" if tok != chosen[n] else ("finished" if tok == eos_id else "kept")
                cands.append(Candidate(n - b * G, tok, float(dist_logp[n, tok]),
                                       float(cum_before[n] + model_logp[n, tok]), status))
        cands.sort(key=lambda c: -c.score)
        steps.append(TraceStep(t, b, [tuple(int(i) for i in ids[n, 1:t + 1]) for n in rows],
                               [float(cum_before[n]) for n in rows], [n - b * G for n in rows], cands))


def _generate_rows(model, src_ids, choose, *, G, T_max, no_repeat_ngram_size, start_id, eos_id,
                   use_cache, trace):
    """The loop greedy search and sampling share: one token per row per step.

    ``choose(logits (N, V)) -> (tokens (N,), dist_logits (N, V))``: the token of each row and
    the logits of the distribution it was chosen from (-inf where filtered out; the trace
    shows their log-softmax).
    """
    c = model.config
    B = src_ids.shape[0]
    N = B * G
    if use_cache:
        cache = start_decoding(model, src_ids, group_size=G, max_len=T_max)  # the encoder runs once, here
    else:
        rerun = model.uncached_decoder(src_ids, G)  # the whole prefix re-run at every step
    ids = np.full((N, T_max + 1), c.pad_id, dtype=np.int64)  # (N, 1+T_max) decoder inputs: start, then outputs
    ids[:, 0] = start_id
    done = np.zeros(N, dtype=bool)  # (N,) rows that have emitted <eos>
    lengths = np.zeros(N, dtype=np.int64)
    log_probs = np.zeros(N)  # (N,) float64 running sums
    steps = [] if trace else None
    for t in range(T_max):
        if use_cache:
            logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # (N, 1, V): only the newest token fed
        else:
            logits = rerun(ids[:, :t + 1])  # (N, t+1, V) or (N, S+t+1, V): the whole prefix again
        logits = logits[:, -1].astype(np.float64)  # (N, V)
        logp = log_softmax(logits)  # (N, V) the model's distribution
        if no_repeat_ngram_size:
            logits = np.where(banned_ngram_tokens(ids[:, :t + 1], no_repeat_ngram_size, logits.shape[-1]),
                              -np.inf, logits)
            _check_not_all_banned(logits, ~done, "row", no_repeat_ngram_size, t)
        tokens, dist_logits = choose(logits)  # (N,), (N, V)
        tokens = np.where(done, c.pad_id, tokens)  # finished rows are padded
        if trace:
            _trace_rows(steps, t, ids, G, ~done, log_probs, logp, log_softmax(dist_logits), tokens, eos_id)
        log_probs += np.where(done, 0.0, logp[np.arange(N), tokens])
        lengths += ~done
        ids[:, t + 1] = tokens
        if eos_id is not None:
            done |= tokens == eos_id
        if done.all():
            break
    T_out = int(lengths.max())
    return GenerationOutput(sequences=ids[:, 1:T_out + 1].copy(), lengths=lengths, log_probs=log_probs,
                            scores=log_probs.copy(), finished=done.copy(), num_return=G, trace=steps)


def greedy_search(model, src_ids, *, max_new_tokens: int | None = None,
                  no_repeat_ngram_size: int = 0, start_id: int | None = None, eos_id: int | None | str = MODEL,
                  use_cache: bool | None = None, trace: bool = False) -> GenerationOutput:
    """The most likely next token, every step.

    Parameters
    ----------
    model : EncoderDecoder or DecoderOnly
        Put in eval mode while decoding (its mode is restored afterwards).  A DecoderOnly
        model reads ``source <bos>`` as its prompt (:mod:`minitf.decoding.cache`).  A
        PointerGenerator is decoded over its extended vocabulary: its outputs may hold
        copied ids >= V (``model.from_extended`` maps them back to source tokens).
    src_ids : int array (B, S)
        Sources, right-padded with ``model.config.pad_id``.
    max_new_tokens : int, optional
        Stop after this many tokens (default: the model's ``max_len``; for a DecoderOnly
        model, ``max_len - S``: the prompt takes S of its positions).
    no_repeat_ngram_size : int
        n > 0: never repeat an n-gram (see :func:`banned_ngram_tokens`).
    start_id : int, optional
        The first decoder input; ``None`` (default): the model's ``config.bos_id``.
    eos_id : int, None or "model"
        The token that ends a row; ``"model"`` (default): the model's ``config.eos_id``;
        ``None``: never end early.
    use_cache : bool, optional
        True decodes with the KV cache (:func:`decode_step`); False re-runs the decoder on
        the whole prefix at every step (the slow reference).  ``None`` (default): cached when
        the decoder is causal (``model.config.causal``), which a cache needs, else re-run.
    trace : bool
        Record a :class:`TraceStep` per step and example.

    Returns
    -------
    GenerationOutput
        R = 1; ``scores`` = ``log_probs``.
    """
    src_ids, T_max, start_id, eos_id = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size,
                                                     start_id, eos_id)
    use_cache = model.config.causal if use_cache is None else use_cache
    if not use_cache:
        _check_not_recurrent(model)

    def choose(logits):
        return np.argmax(logits, axis=-1), logits  # (N,), (N, V)

    with model.evaluating():
        return _generate_rows(model, src_ids, choose, G=1, T_max=T_max, no_repeat_ngram_size=no_repeat_ngram_size,
                              start_id=start_id, eos_id=eos_id, use_cache=use_cache, trace=trace)


def sample(model, src_ids, *, rng, temperature: float = 1.0, top_k: int = 0,
           top_p: float = 1.0, num_return_sequences: int = 1, max_new_tokens: int | None = None,
           no_repeat_ngram_size: int = 0, start_id: int | None = None, eos_id: int | None | str = MODEL,
           trace: bool = False) -> GenerationOutput:
    """Draw each next token from the model's distribution, reshaped as Hugging Face does:
    no-repeat-n-gram bans, then temperature, then top-k, then top-p (:func:`warp_logits`).

    Parameters
    ----------
    rng : np.random.Generator or int
        The only source of randomness; the same seed gives the same outputs.
    temperature : float
        > 0.  Logits are divided by it.
    top_k : int
        Keep the k most likely tokens (ties with the k-th kept); 0 = off.
    top_p : float
        In (0, 1]: keep the smallest set of most likely tokens whose mass reaches p; 1 = off.
    num_return_sequences : int
        R samples per input (the encoder still runs once per input).
    Other parameters as in :func:`greedy_search`; the cache is used when the decoder is
    causal, as ``greedy_search``'s default ``use_cache=None`` does.

    Returns
    -------
    GenerationOutput
        ``log_probs`` and ``scores`` are sums of the *model's* log-probabilities (temperature
        1, no filtering), so samples can be compared with each other and with greedy output.
    """
    _check_sampling_args(temperature, top_k, top_p)
    R = check_int("num_return_sequences", num_return_sequences, low=1)
    src_ids, T_max, start_id, eos_id = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size,
                                                     start_id, eos_id)
    rng = as_rng("rng", rng)

    def choose(logits):
        warped = warp_logits(logits, temperature, top_k, top_p)  # (N, V), -inf on removed tokens
        return _draw(softmax(warped), rng), warped

    with model.evaluating():
        return _generate_rows(model, src_ids, choose, G=R, T_max=T_max, no_repeat_ngram_size=no_repeat_ngram_size,
                              start_id=start_id, eos_id=eos_id, use_cache=model.config.causal, trace=trace)
