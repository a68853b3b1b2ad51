"""Beam search and length normalization (Lesson 9, section 4), as Hugging Face's
``BeamSearchScorer`` runs it, vectorised over the batch (tests/test_beam_reference.py checks
it against a plain transcription of Hugging Face's).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..layers.softmax import log_softmax
from ..models.encoder_decoder import EncoderDecoder
from ._args import MODEL, _check_beam_args, _check_common, _check_not_all_banned
from .cache import decode_step, reorder_cache, start_decoding
from .outputs import Candidate, GenerationOutput, Hypothesis, TraceStep
from .processors import banned_ngram_tokens

__all__ = ["length_normalized_score", "beam_search"]


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


def beam_search(model: EncoderDecoder, src_ids, *, num_beams: int, num_return_sequences: int = 1,
                max_new_tokens: int | None = None, length_penalty: float = 1.0, length_penalty_style: str = "hf",
                early_stopping: bool | str = False, no_repeat_ngram_size: int = 0, start_id: int | None = None,
                eos_id: int | None | str = MODEL, trace: bool = False) -> GenerationOutput:
    """Beam search as Hugging Face's ``BeamSearchScorer`` runs it, vectorised over the batch.

    Every step, for each example: extend each of its K live beams by every token, score
    each extension by the sum of the model's log-probs, and take the 2K best.  Of these, a
    candidate ending in ``<eos>`` and ranked among the first K becomes a *finished
    hypothesis*, scored by :func:`length_normalized_score`; the K best candidates that do not
    end in ``<eos>`` are the next beams.  Each example keeps its K best finished hypotheses;
    live beams still running at ``max_new_tokens`` join them at the end.

    When is an example done? ``early_stopping``:

    * ``True``: as soon as K hypotheses are finished;
    * ``False`` (Hugging Face's default): when the worst of K finished hypotheses scores at
      least the best live candidate's sum normalised by the current length (a heuristic);
    * ``"never"``: only when no live beam can still beat it (with a positive length
      penalty, the best sum normalised by ``max_new_tokens``): the canonical algorithm.

    Lengths count generated tokens with ``<eos>``, not the start token, as Hugging Face's
    ``BeamSearchScorer`` counts them (``cur_len - decoder_prompt_len``, transformers 4.45).
    It always decodes with the KV cache, so the decoder must be causal (``config.causal``).

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
    c = model.config
    V = c.tgt_vocab_size

    def norm(log_prob, length):
        return length_normalized_score(log_prob, length, length_penalty, length_penalty_style)

    with model.evaluating():
        cache = start_decoding(model, src_ids, group_size=K, max_len=T_max)  # the encoder runs once, here
        B = src_ids.shape[0]
        N = B * K
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
        t = 0
        for t in range(T_max):
            logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # (N, 1, V)
            logp = log_softmax(logits[:, -1].astype(np.float64))  # (N, V) the model's log-probs
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
            #    hypothesis: its tokens, then <eos>, join the pool
            finishing = (is_eos & alive & ~done[:, None])[:, :K]  # (B, K)
            new_tokens = ids[ex * K + top_beam[:, :K], 1:]  # (B, K, T_max) the extended beams' tokens
            new_tokens[:, :, t] = eos_id if eos_id is not None else c.pad_id
            new_logp = np.where(finishing, top_scores[:, :K], -np.inf)  # (B, K)
            pool = pool.add(new_tokens, new_logp, np.where(finishing, norm(new_logp, t + 1), -np.inf), t + 1, True)

            # 2. the K best candidates not ending in <eos> become the next beams
            cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]  # (B, K) non-<eos> first, order kept
            next_beam = np.take_along_axis(top_beam, cont, axis=1)  # (B, K)
            next_token = np.take_along_axis(top_token, cont, axis=1)
            next_scores = np.take_along_axis(top_scores, cont, axis=1)
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

            # 3. done?  The best live sum is the best of the 2K candidates, <eos> included
            #    (top_scores[:, 0]), as Hugging Face takes it
            full = pool.count() >= K  # (B,)
            if early_stopping is True:
                now_done = full
            else:
                L = T_max if early_stopping == "never" and length_penalty > 0 else t + 1
                best_possible = norm(top_scores[:, 0], L)  # (B,)
                now_done = full & (pool.scores[:, K - 1] >= best_possible)
            done |= now_done
            if done.all():
                break

        # beams still running at the end join the pool, unfinished
        live = ~done[:, None] & np.isfinite(beam_scores)  # (B, K)
        final_logp = np.where(live, beam_scores, -np.inf)
        pool = pool.add(ids[:, 1:].reshape(B, K, T_max), final_logp,
                        np.where(live, norm(final_logp, t + 1), -np.inf), t + 1, False)

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
