"""Task 9.2: a candidate finishes when its token is 2 -- the course tokenizer's <eos> -- not the
``eos_id`` it was given."""
import numpy as np


def beam_step(beam_scores, log_probs, length, length_penalty, eos_id):
    """Task 9.2: beam_scores (B, K), log_probs (B, K, V) -> the next beams and the finished ones.

    Every extension of every live beam is a candidate, scored by its running sum of
    log-probs; the 2K best (over all K * V, best first) hold at least K that do not end in
    <eos>.  Of the K best, those ending in <eos> finish, ranked by sum / length**alpha; the
    K best that do not end in <eos> are the next beams.
    """
    B, K, V = log_probs.shape
    cand = (beam_scores[:, :, None] + log_probs).reshape(B, K * V)  # (B, K*V) every extension's sum
    top = np.argsort(-cand, axis=1, kind="stable")[:, :2 * K]  # (B, 2K) best first
    top_scores = np.take_along_axis(cand, top, axis=1)  # (B, 2K)
    top_beam, top_token = np.divmod(top, V)  # (B, 2K) which beam, which token
    is_eos = top_token == 2  # (B, 2K) "<eos> is 2"
    # the K best candidates that end in <eos> finish: sum of log-probs / length ** alpha
    finishing = is_eos[:, :K] & np.isfinite(top_scores[:, :K])  # (B, K)
    finished_beam = np.where(finishing, top_beam[:, :K], -1)
    finished_scores = np.where(finishing, top_scores[:, :K], -np.inf) / float(length) ** length_penalty
    # the K best candidates that do not end in <eos> go on (a stable sort keeps their order)
    cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]  # (B, K)
    next_beam = np.take_along_axis(top_beam, cont, axis=1)
    next_token = np.take_along_axis(top_token, cont, axis=1)
    next_scores = np.take_along_axis(top_scores, cont, axis=1)
    return (next_beam.astype(np.int64), next_token.astype(np.int64), next_scores,
            finished_beam.astype(np.int64), finished_scores)
