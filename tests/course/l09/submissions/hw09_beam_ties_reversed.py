"""Task 9.2: the candidates are ranked with np.argsort(scores)[:, ::-1] (ascending, then
reversed) instead of a stable sort of -scores: the same ranking without ties, but equal
scores come out with the HIGHER index k * V + v first (the template: the lower first)."""
import numpy as np


def beam_step(beam_scores, log_probs, length, length_penalty, eos_id):
    B, K, V = log_probs.shape
    cand = (beam_scores[:, :, None] + log_probs).reshape(B, K * V)
    top = np.argsort(cand, axis=1, kind="stable")[:, ::-1][:, :2 * K]  # best first ... ties reversed
    top_scores = np.take_along_axis(cand, top, axis=1)
    top_beam, top_token = np.divmod(top, V)
    is_eos = top_token == eos_id
    finishing = is_eos[:, :K] & np.isfinite(top_scores[:, :K])
    finished_beam = np.where(finishing, top_beam[:, :K], -1)
    finished_scores = np.where(finishing, top_scores[:, :K], -np.inf) / float(length) ** length_penalty
    cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]
    return (np.take_along_axis(top_beam, cont, axis=1).astype(np.int64),
            np.take_along_axis(top_token, cont, axis=1).astype(np.int64),
            np.take_along_axis(top_scores, cont, axis=1), finished_beam.astype(np.int64), finished_scores)
