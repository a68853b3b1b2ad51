"""Task 9.2: the next beams are simply the K best candidates, <eos> ones included: a finished
hypothesis also stays in the beam (and is extended after its <eos>)."""
import numpy as np


def beam_step(beam_scores, log_probs, length, length_penalty, eos_id):
    B, K, V = log_probs.shape
    cand = (beam_scores[:, :, None] + log_probs).reshape(B, K * V)
    top = np.argsort(-cand, axis=1, kind="stable")[:, :K]
    top_scores = np.take_along_axis(cand, top, axis=1)
    top_beam, top_token = np.divmod(top, V)
    finishing = (top_token == eos_id) & np.isfinite(top_scores)
    finished_beam = np.where(finishing, top_beam, -1)
    finished_scores = np.where(finishing, top_scores, -np.inf) / float(length) ** length_penalty
    return top_beam, top_token, top_scores, finished_beam, finished_scores
