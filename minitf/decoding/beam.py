"""Beam search and length normalization (Lesson 9, section 4), as today's Hugging Face
transformers runs it (``GenerationMixin._beam_search``, rewritten in 4.50 and settled from
4.54), vectorised over the batch (tests/test_beam_reference.py checks it against a plain
transcription of Hugging Face's rules, and against transformers itself when installed).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..checks import check_number
from ..layers.softmax import log_softmax
from ._args import MODEL, _check_beam_args, _check_common, _check_not_all_banned
from .cache import decode_step, reorder_cache, start_decoding
from .outputs import Candidate, GenerationOutput, Hypothesis, TraceStep
from .processors import banned_ngram_tokens

__all__ = ["length_normalized_score", "coverage_penalty", "beam_search"]


def length_normalized_score(log_prob, length, length_penalty: float = 1.0, style: str = "hf"):
    """The score beam search ranks finished hypotheses by.

    ``"hf"``:   log_prob / length ** length_penalty   (Hugging Face's ``length_penalty``)
    ``"gnmt"``: log_prob / ((5 + length) / 6) ** length_penalty   (Wu et al., 2016; alpha)

    ``length`` counts the generated tokens, the final ``<eos>`` included, the start token
    not.  ``length_penalty`` 0 ranks by the plain sum of log-probs (short outputs win);
    larger values favour longer outputs.
    """
    length = np.asarray(length, dtype=np.float64)
    if style == "hf":
        return log_prob / length ** length_penalty
    if style == "gnmt":
        return log_prob / ((5.0 + length) / 6.0) ** length_penalty
    raise ValueError(f"length_penalty_style: expected 'hf' or 'gnmt', got {style!r}")


def coverage_penalty(coverage, src_real, beta: float):
    """GNMT's coverage penalty (Wu et al., 2016), added to a finished hypothesis's score:

        cp = beta * sum_i log(min(c_i, 1))          over the real source positions i

    c_i is the attention source position i has received over the whole output (the
    coverage vector: ``KVCache.coverage``).  cp is 0 once every position has had a total
    weight of at least 1, and the more negative the more of the source is left unread, so
    among equally likely outputs the one that covers the source wins.

    coverage (..., S), src_real (..., S) bool (False on padding) -> (...,).  ``beta`` >= 0.
    """
    with np.errstate(divide="ignore"):  # a padded position's 0 is masked out below
        log_c = np.log(np.minimum(coverage, 1.0))  # (..., S) <= 0
    return beta * np.where(src_real, log_c, 0.0).sum(axis=-1)


class _Pool(NamedTuple):
    """The finished hypotheses of every example: the K best so far, best first (arrays, so
    adding and ranking are vectorised over the batch).  Empty slots have score -inf."""
    tokens: np.ndarray  # (B, K, T_max) int64, pad after the end
    log_probs: np.ndarray  # (B, K)
    scores: np.ndarray  # (B, K) length-normalised; -inf = empty slot
    lengths: np.ndarray  # (B, K)
    finished: np.ndarray  # (B, K) bool

    @classmethod
    def empty(cls, B, K, T_max, pad_id):
        return cls(np.full((B, K, T_max), pad_id, dtype=np.int64), np.full((B, K), -np.inf),
                   np.full((B, K), -np.inf), np.zeros((B, K), dtype=np.int64), np.zeros((B, K), dtype=bool))

    def add(self, tokens, log_probs, scores, lengths, finished) -> "_Pool":
        """Offer M new hypotheses per example (B, M[, T_max]); keep the K best.  A candidate
        with score -inf is no candidate.  On a tie with the worst kept hypothesis the older
        one stays, as in Hugging Face; among equal scores the older also ranks first (where
        Hugging Face lists the newer first: exact ties only, the set kept is the same)."""
        K = self.scores.shape[1]
        B, M = scores.shape
        merged = _Pool(np.concatenate([self.tokens, tokens], axis=1),  # (B, K+M, T_max)
                       np.concatenate([self.log_probs, log_probs], axis=1),  # (B, K+M)
                       np.concatenate([self.scores, scores], axis=1),
                       np.concatenate([self.lengths, np.broadcast_to(lengths, (B, M))], axis=1),
                       np.concatenate([self.finished, np.broadcast_to(finished, (B, M))], axis=1))
        keep = np.argsort(-merged.scores, axis=1, kind="stable")[:, :K]  # (B, K) best first, older first on ties
        return _Pool(np.take_along_axis(merged.tokens, keep[:, :, None], axis=1),
                     *(np.take_along_axis(a, keep, axis=1) for a in merged[1:]))

    def count(self) -> np.ndarray:
        return np.isfinite(self.scores).sum(axis=1)  # (B,)


def beam_search(model, src_ids, *, num_beams: int, num_return_sequences: int = 1,
                max_new_tokens: int | None = None, length_penalty: float = 1.0, length_penalty_style: str = "hf",
                early_stopping: bool | str = False, no_repeat_ngram_size: int = 0, start_id: int | None = None,
                eos_id: int | None | str = MODEL, coverage_penalty_weight: float = 0.0,
                trace: bool = False) -> GenerationOutput:
    """Beam search as today's Hugging Face transformers runs it, vectorised over the batch.

    Every step, for each example: extend each of its K live beams by every token, score
    each extension by the sum of the model's log-probs, and take the 2K best.  Of these, a
    candidate ending in ``<eos>`` and ranked among the first K becomes a *finished
    hypothesis*, scored by :func:`length_normalized_score`; the K best candidates that do not
    end in ``<eos>`` are the next beams.  Each example keeps its K best finished hypotheses.
    At the last step (``max_new_tokens``) every one of the K best candidates stops, ``<eos>``
    or not, and enters the pool (those without ``<eos>`` unfinished).

    When is an example done? ``early_stopping``:

    * ``True``: as soon as K hypotheses are finished;
    * ``False`` (Hugging Face's default): when the worst of K finished hypotheses scores at
      least the best *live beam*'s sum normalised by the current length (a heuristic);
    * ``"never"``: only when no live beam can still beat it (with a positive length
      penalty, the best live sum normalised by ``max_new_tokens``): the canonical algorithm.

    The best live beam is the best candidate that does not end in ``<eos>``: the first beam
    of the next step.  (Up to transformers 4.49, ``BeamSearchScorer`` compared with the best
    of all 2K candidates, ``<eos>`` ones included, which can stop a search that a live beam
    could still have won.  It also let the live beams join the pool at ``max_new_tokens``
    instead of the K best candidates: the same pool, since a live beam ranked K or lower is
    worse than all K candidates that enter.)

    Lengths count generated tokens with ``<eos>``, not the start token, as Hugging Face counts
    them (``cur_len + 1 - decoder_prompt_len``).  It always decodes with the KV cache, so the
    decoder must be causal (``config.causal``).

    ``coverage_penalty_weight`` beta > 0 adds GNMT's :func:`coverage_penalty` to each
    hypothesis's score as it enters the pool, from the coverage vector of its beam (the last
    decoder block's cross-attention, mean over heads, summed over its tokens, ``<eos>``
    included).  The penalty is never positive, so the live beams' best possible score is
    still bounded without it.  A :class:`~minitf.models.PointerGenerator` is searched over
    its extended vocabulary (V + the example's source-only tokens), as its decode step
    scores it.

    Parameters
    ----------
    num_beams : int
        K >= 1.  K = 1 is greedy search.
    num_return_sequences : int
        R <= K finished hypotheses per input, best first.
    length_penalty : float
        The exponent; 0 ranks by the plain sum of log-probs.
    length_penalty_style : "hf" or "gnmt"
        log_prob / length**lp, or GNMT's log_prob / ((5 + length) / 6)**lp.
    early_stopping : True, False or "never"
    coverage_penalty_weight : float
        beta >= 0 of :func:`coverage_penalty`; 0 (default) leaves it out.  An encoder-decoder only.
    Other parameters as in :func:`greedy_search`.

    Returns
    -------
    GenerationOutput
        ``scores`` are the length-normalised scores, ``log_probs`` the plain sums.  With
        ``trace``, each TraceStep lists the 2K candidates (status "kept", "finished" or
        "dropped") and the pool of finished hypotheses after the step.
    """
    K, R, early_stopping = _check_beam_args(num_beams, num_return_sequences, length_penalty, length_penalty_style,
                                            early_stopping)
    src_ids, T_max, start_id, eos_id = _check_common(model, src_ids, max_new_tokens, no_repeat_ngram_size,
                                                     start_id, eos_id)
    beta = check_number("coverage_penalty_weight", coverage_penalty_weight, 0)
    if beta and not getattr(model, "can_follow_coverage", False):
        raise ValueError(f"coverage_penalty_weight: expected 0 for a {type(model).__name__} (the coverage vector "
                         f"sums an encoder-decoder's cross-attention weights), got {beta}")
    c = model.config

    def norm(log_prob, length):
        return length_normalized_score(log_prob, length, length_penalty, length_penalty_style)

    with model.evaluating():
        cache = start_decoding(model, src_ids, group_size=K, max_len=T_max, coverage=beta > 0)  # the encoder runs once
        B = src_ids.shape[0]
        N = B * K
        src_real = np.repeat(src_ids != c.pad_id, K, axis=0)  # (N, S) the positions the penalty sums over
        ids = np.full((N, T_max + 1), c.pad_id, dtype=np.int64)  # (N, 1+T_max) each beam's decoder inputs
        ids[:, 0] = start_id
        # All K beams start as the same <bos>; only beam 0 is alive, or the first step would
        # offer K copies of every candidate.  -inf marks a dead beam.
        beam_scores = np.full((B, K), -np.inf)  # (B, K) sum of log-probs of each beam
        beam_scores[:, 0] = 0.0
        pool = _Pool.empty(B, K, T_max, c.pad_id)
        done = np.zeros(B, dtype=bool)  # (B,)
        steps = [] if trace else None
        ex = np.arange(B)[:, None]  # (B, 1)
        for t in range(T_max):
            logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # (N, 1, V)
            logp = log_softmax(logits[:, -1].astype(np.float64))  # (N, V) the model's log-probs
            V = logp.shape[-1]  # the output vocabulary (a PointerGenerator's: extended)
            if no_repeat_ngram_size:
                logp = np.where(banned_ngram_tokens(ids[:, :t + 1], no_repeat_ngram_size, V), -np.inf, logp)
            cand = (beam_scores.reshape(N, 1) + logp).reshape(B, K * V)  # (B, K*V) every extension's sum
            if no_repeat_ngram_size:
                _check_not_all_banned(cand, ~done, "example", no_repeat_ngram_size, t)
            top = np.argsort(-cand, axis=1, kind="stable")[:, :2 * K]  # (B, 2K) the 2K best, best first
            top_scores = np.take_along_axis(cand, top, axis=1)  # (B, 2K)
            top_beam, top_token = np.divmod(top, V)  # (B, 2K) which beam, which token
            is_eos = top_token == eos_id if eos_id is not None else np.zeros_like(top, dtype=bool)
            alive = np.isfinite(top_scores)

            # 1. <eos> among the K best (not the 2K: Hugging Face's rank < num_beams) ends a
            #    hypothesis: its tokens, then <eos>, join the pool.  At the last step every one
            #    of the K best stops (max_new_tokens is a stopping criterion too), unfinished
            #    unless it ends in <eos>.
            finishing = (is_eos & alive & ~done[:, None])[:, :K]  # (B, K) ended by <eos>
            stopping = (alive & ~done[:, None])[:, :K] if t == T_max - 1 else finishing  # (B, K) enter the pool
            new_tokens = ids[ex * K + top_beam[:, :K], 1:]  # (B, K, T_max) the extended beams' tokens
            new_tokens[:, :, t] = top_token[:, :K]
            new_logp = np.where(stopping, top_scores[:, :K], -np.inf)  # (B, K)
            new_scores = norm(new_logp, t + 1)  # (B, K)
            if beta:  # the coverage of the beam each candidate extends, after this step
                cp = coverage_penalty(cache.coverage, src_real, beta).reshape(B, K)  # (B, K) per beam
                new_scores = new_scores + np.take_along_axis(cp, top_beam[:, :K], axis=1)
            pool = pool.add(new_tokens, new_logp, np.where(stopping, new_scores, -np.inf), t + 1, is_eos[:, :K])

            # 2. the K best candidates not ending in <eos> become the next beams
            cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]  # (B, K) non-<eos> first, order kept
            next_beam = np.take_along_axis(top_beam, cont, axis=1)  # (B, K)
            next_token = np.take_along_axis(top_token, cont, axis=1)
            next_scores = np.take_along_axis(top_scores, cont, axis=1)  # (B, K) best first
            next_beam[done] = np.arange(K)  # finished examples: rows stay put, fed padding
            next_token[done] = c.pad_id
            next_scores[done] = -np.inf
            if trace:
                _trace_beam_step(steps, t, ids, beam_scores, top_beam, top_token, top_scores, finishing,
                                 cont, done, pool, K)
            beam_idx = (ex * K + next_beam).reshape(N)  # (N,) the row each new beam continues
            ids = ids[beam_idx]  # (N, 1+T_max)
            ids[:, t + 1] = next_token.reshape(N)
            cache = reorder_cache(cache, beam_idx)  # self-attention K, V follow their beams
            beam_scores = next_scores

            # 3. done?  Can the best live beam (next_scores[:, 0], the best candidate not
            #    ending in <eos>) still beat the worst finished hypothesis?
            full = pool.count() >= K  # (B,)
            if early_stopping is True:
                now_done = full
            else:
                L = T_max if early_stopping == "never" and length_penalty > 0 else t + 1
                best_possible = norm(next_scores[:, 0], L)  # (B,)
                now_done = full & (pool.scores[:, K - 1] >= best_possible)
            done |= now_done
            if done.all():
                break

    lengths = pool.lengths[:, :R].reshape(B * R)
    T_out = max(int(lengths.max()), 1)
    return GenerationOutput(sequences=pool.tokens[:, :R, :T_out].reshape(B * R, T_out).copy(), lengths=lengths,
                            log_probs=pool.log_probs[:, :R].reshape(B * R), scores=pool.scores[:, :R].reshape(B * R),
                            finished=pool.finished[:, :R].reshape(B * R), num_return=R, trace=steps)


def _trace_beam_step(steps, t, ids, beam_scores, top_beam, top_token, top_scores, finishing, cont, done, pool, K):
    """One TraceStep per example still searching at step t (a loop, but only when tracing)."""
    B = beam_scores.shape[0]
    for b in range(B):
        if done[b]:
            continue
        rows = [k for k in range(K) if np.isfinite(beam_scores[b, k])]
        kept = set(int(i) for i in cont[b] if np.isfinite(top_scores[b, i]))
        cands = []
        for i in range(2 * K):
            if not np.isfinite(top_scores[b, i]):
                continue
            k = int(top_beam[b, i])
            status = "finished" if i < K and finishing[b, i] else ("kept" if i in kept else "dropped")
            cands.append(Candidate(k, int(top_token[b, i]), float(top_scores[b, i] - beam_scores[b, k]),
                                   float(top_scores[b, i]), status))
        finished = [Hypothesis(tuple(int(x) for x in pool.tokens[b, j, :pool.lengths[b, j]]),
                               float(pool.log_probs[b, j]), float(pool.scores[b, j]), bool(pool.finished[b, j]))
                    for j in range(K) if np.isfinite(pool.scores[b, j])]
        steps.append(TraceStep(t, b, [tuple(int(x) for x in ids[b * K + k, 1:t + 1]) for k in rows],
                               [float(beam_scores[b, k]) for k in rows], rows, cands, finished))
