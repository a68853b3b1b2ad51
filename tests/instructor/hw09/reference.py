"""Homework 9 -- Inference.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the reasoning.  CI grades this
file and expects full marks (``minitf grade hw09 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, K beams, V vocabulary, V_ext extended vocabulary, T target length,
S source length.
"""
from __future__ import annotations

import numpy as np


# =====================================================================================
# Task 9.1 -- top-k and top-p
# =====================================================================================
def top_k_filter(logits, k):
    """Task 9.1 (a): logits (..., V) -> (..., V), -inf below the k-th largest of each row.

    Ties with the k-th largest value stay (Hugging Face compares with the k-th value, it
    does not count tokens).  k = 0 or k >= V keeps everything.
    """
    out = np.array(logits, copy=True)  # (..., V) a new array, the input's dtype
    V = out.shape[-1]
    if k == 0 or k >= V:
        return out
    kth = np.sort(out, axis=-1)[..., V - k:V - k + 1]  # (..., 1) the k-th largest value
    out[out < kth] = -np.inf  # everything equal to the k-th stays
    return out


def top_p_filter(logits, p, min_tokens_to_keep=1):
    """Task 9.1 (b): nucleus filtering, logits (..., V) -> (..., V).

    From the least likely token up, remove a token while the mass of it and everything
    below it is still <= 1 - p: what stays holds mass >= p, and the token that crosses p
    stays.  The min_tokens_to_keep most likely tokens always stay.
    """
    out = np.array(logits, copy=True)  # (..., V)
    if p >= 1.0:
        return out
    order = np.argsort(out, axis=-1, kind="stable")  # (..., V) least likely first
    z = np.take_along_axis(out, order, axis=-1).astype(np.float64)  # (..., V) sorted logits
    probs = np.exp(z - z[..., -1:])  # the last one is the row maximum
    probs /= probs.sum(axis=-1, keepdims=True)
    cum = np.cumsum(probs, axis=-1)  # (..., V) mass of each token and all below it
    remove_sorted = cum <= 1.0 - p  # the tokens above already hold mass >= p
    remove_sorted[..., max(out.shape[-1] - min_tokens_to_keep, 0):] = False  # the most likely always stay (all if m >= V)
    remove = np.empty_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)  # back to vocabulary order
    out[remove] = -np.inf
    return out


# =====================================================================================
# Task 9.2 -- one step of beam search
# =====================================================================================
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
    is_eos = top_token == eos_id  # (B, 2K)
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


# =====================================================================================
# Task 9.3 -- the pointer-generator's mixture
# =====================================================================================
def copy_mixture_forward(P_vocab, p_gen, a, src_ext, vocab_size):
    """Task 9.3 (a): P = p_gen P_vocab + (1 - p_gen) scatter_add(a) -> (B, T, V_ext).

    np.add.at, not a fancy-index +=: a token at two source positions collects both weights.
    """
    B, T, V = P_vocab.shape
    S = a.shape[-1]
    P = np.zeros((B, T, vocab_size), dtype=P_vocab.dtype)  # (B, T, V_ext)
    copy = (1.0 - p_gen)[..., None] * a  # (B, T, S)
    b_idx = np.broadcast_to(np.arange(B)[:, None, None], (B, T, S))
    t_idx = np.broadcast_to(np.arange(T)[None, :, None], (B, T, S))
    w_idx = np.broadcast_to(src_ext[:, None, :], (B, T, S))
    np.add.at(P, (b_idx, t_idx, w_idx), copy)  # the copy part: repeated tokens add up
    P[..., :V] += p_gen[..., None] * P_vocab  # the generation part, on the output vocabulary
    return P


def copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext):
    """Task 9.3 (b): dP (B, T, V_ext) -> dP_vocab (B, T, V), dp_gen (B, T), da (B, T, S).

    The scatter-add's backward is a gather: a_i reached P at its token src_ext[i].
    """
    V = P_vocab.shape[-1]
    dP_src = np.take_along_axis(dP, np.broadcast_to(src_ext[:, None, :], a.shape), axis=-1)  # (B, T, S)
    dP_vocab = p_gen[..., None] * dP[..., :V]  # (B, T, V)
    dp_gen = (dP[..., :V] * P_vocab).sum(axis=-1) - (dP_src * a).sum(axis=-1)  # (B, T)
    da = (1.0 - p_gen)[..., None] * dP_src  # (B, T, S)
    return dP_vocab, dp_gen, da


# =====================================================================================
# Task 9.4 -- the coverage loss
# =====================================================================================
IGNORE_INDEX = -100


def coverage_loss(a, labels, weight=1.0):
    """Task 9.4: a (B, T, S), labels (B, T) -> (loss, da (B, T, S)).

    L = (weight / n_real) sum_{t real} sum_i min(a_t,i, c_t,i),  c_t = sum_{t' < t} a_t'.
    a_t reaches L directly (where a < c) and through every later c (where c <= a).
    """
    real = labels != IGNORE_INDEX  # (B, T)
    n_real = int(real.sum())
    c = np.zeros_like(a)  # (B, T, S)
    c[:, 1:] = np.cumsum(a[:, :-1], axis=1)  # the attention before t, not t's own
    loss = float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / n_real)
    g = (weight * real / n_real)[..., None]  # (B, T, 1) dL/dmin_t
    da = g * (a < c)  # the direct path
    dc = g * (a >= c)  # the path through c_t (ties go to c)
    # c_t = sum_{t' < t} a_t'  ->  a_t' collects dc_t of every later t
    da = da + np.cumsum(dc[:, ::-1], axis=1)[:, ::-1] - dc
    return loss, da.astype(a.dtype)


# =====================================================================================
# Task 9.5 -- scheduled sampling's mixed inputs
# =====================================================================================
def mix_inputs(decoder_input_ids, predictions, use_gold, pad_id):
    """Task 9.5: (B, T) each -> (fed, gold) (B, T) each.

    The prediction made at position t-1 is the input at t; position 0 (the start token)
    and padding are always gold.
    """
    own = np.empty_like(decoder_input_ids)  # (B, T)
    own[:, 0] = decoder_input_ids[:, 0]
    own[:, 1:] = predictions[:, :-1]  # predicted at t-1, fed at t
    gold = use_gold.copy()
    gold[:, 0] = True
    gold |= decoder_input_ids == pad_id
    return np.where(gold, decoder_input_ids, own), gold


# =====================================================================================
# Task 9.6 -- concept check
# =====================================================================================
ANSWERS = {
    "9.6.1": "c",
    "9.6.2": "b",
    "9.6.3": "d",
    "9.6.4": "a",
    "9.6.5": "c",
}
