"""Task 9.2: the length penalty divides only the last step's log-prob (the <eos>), not the
hypothesis's whole sum: score = sum_before + log p(<eos>) / length**alpha."""
import numpy as np


def beam_step(beam_scores, log_probs, length, length_penalty, eos_id):
    B, K, V = log_probs.shape
    normed = beam_scores[:, :, None] + log_probs / float(length) ** length_penalty  # per-step penalty
    cand = (beam_scores[:, :, None] + log_probs).reshape(B, K * V)
    top = np.argsort(-cand, axis=1, kind="stable")[:, :2 * K]
    top_scores = np.take_along_axis(cand, top, axis=1)
    top_beam, top_token = np.divmod(top, V)
    is_eos = top_token == eos_id
    finishing = is_eos[:, :K] & np.isfinite(top_scores[:, :K])
    finished_beam = np.where(finishing, top_beam[:, :K], -1)
    finished = np.take_along_axis(normed.reshape(B, K * V), top[:, :K], axis=1)
    finished_scores = np.where(finishing, finished, -np.inf)
    cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]
    return (np.take_along_axis(top_beam, cont, axis=1), np.take_along_axis(top_token, cont, axis=1),
            np.take_along_axis(top_scores, cont, axis=1), finished_beam, finished_scores)
