"""The pieces of See et al.'s copy mechanism (2017), each with its backward: the scatter-add
of attention into the extended vocabulary and its gather, the coverage recurrence in the
copy attention's scores, the copy head (p_gen and the mixture), and the two losses.  The
model that puts them on the transformer is :mod:`minitf.models.pointer_generator`; the
extended vocabulary itself is :mod:`minitf.data.extended_vocab`.

**Coverage.**  c_t = sum_{t' < t} a_t' (B, T, S): how much attention each source position
has received so far.  See et al. add w_c c_t,i inside the attention score; the
transformer's equivalent adds w_c,h c_t,i to head h's scores in the last block's
cross-attention (:class:`Coverage`, w_c (H,): one weight per head, so a head can learn to
look away from what is covered, w_c,h < 0):

    A_t = softmax(Q K^T / sqrt(Dh) + mask + w_c c_t)        a_t = mean_h A_t

c_t is a sum of the earlier rows of a, each computed with the coverage before it, so the
rows are computed one position after the other (a loop over T, as in an RNN) and the
backward runs through that recurrence in reverse.  The coverage loss penalises attending
again where attention already went:

    L = (1 / n_real) sum_t [ -log P_t(y_t) + lambda sum_i min(a_t,i, c_t,i) ]

(:func:`copy_nll` and :func:`coverage_loss`, real target positions only).  In decoding, c
is carried from step to step beside the KV cache (:class:`CoverageStep`).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..attention import masked_softmax
from ..checks import check_number, check_shape, check_token_ids
from ..data import IGNORE_INDEX
from ..kv_cache import per_example, per_row
from ..layers.softmax import softmax, softmax_backward
from ..module import Module

__all__ = ["scatter_add", "gather", "coverage_vector", "Coverage", "CoverageStep", "sigmoid_pair", "CopyCache",
           "CopyHead", "copy_nll", "coverage_loss", "mixture_log_probs"]


# ---- the copy distribution's scatter-add into the extended vocabulary --------------------------------
def scatter_add(a: np.ndarray, ids: np.ndarray, width: int) -> np.ndarray:
    """out[b, t, ids[b, i]] += a[b, t, i]: a (B, T, S), ids (B, S) in [0, width) -> out (B, T, width).

    ``np.add.at`` and not ``out[b, t, ids] += a``: a buffered fancy-index assignment would
    keep only one of two source positions that hold the same token.  Its backward is the
    gather ``dout[b, t, ids[b, i]]`` (:func:`gather`).
    """
    B, T, S = a.shape
    out = np.zeros((B, T, width), dtype=a.dtype)  # (B, T, width)
    np.add.at(out, (np.arange(B)[:, None, None], np.arange(T)[None, :, None], ids[:, None, :]), a)
    return out


def gather(dout: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The backward of :func:`scatter_add`: dout (B, T, width), ids (B, S) -> da (B, T, S),
    da[b, t, i] = dout[b, t, ids[b, i]]."""
    return np.take_along_axis(dout, np.broadcast_to(ids[:, None, :], dout.shape[:2] + ids.shape[1:]), axis=-1)


def coverage_vector(a: np.ndarray) -> np.ndarray:
    """c_t = sum_{t' < t} a_t': a (B, T, S) -> c (B, T, S), c_0 = 0 (a running sum, in the
    order :class:`Coverage` adds it up, so the two agree to the last bit)."""
    c = np.zeros_like(a)  # (B, T, S)
    np.cumsum(a[:, :-1], axis=1, out=c[:, 1:])
    return c


# ---- coverage: w_c c_t added to the copy attention's scores ---------------------------------------
class Coverage(Module):
    """The attention-weight function of the last block's cross-attention with coverage:

        A_t = softmax(scores_t + w_c c_t),   c_{t+1} = c_t + mean_h A_t,   c_0 = 0

    scores (B, H, T, S) (already scaled and masked) -> A (B, H, T, S), one position after the
    other.  w_c (H,) weighs the coverage in each head.  It plugs into
    :func:`~minitf.attention.scaled_dot_product_attention` as ``weights`` (a ``forward(scores,
    mask) -> A`` and ``backward(dA, A) -> dscores`` pair; the backward recomputes c from A).
    """

    def __init__(self, n_heads: int, dtype=np.float32):
        super().__init__(dtype)
        self.add_param("w_c", np.zeros(n_heads))  # 0: starts as the plain attention

    def step(self, scores: np.ndarray, mask, c0: np.ndarray):
        """The recurrence from the coverage ``c0`` (B, S): scores (B, H, T, S) -> (A (B, H, T, S),
        the coverage after the T positions (B, S)).  Decoding continues from its running c."""
        B, H, T, S = scores.shape
        w_c = self.params["w_c"][None, :, None]  # (1, H, 1)
        A = np.empty_like(scores)  # (B, H, T, S)
        c = c0  # (B, S)
        for t in range(T):
            mask_t = mask if mask is None or mask.ndim < 2 else mask[..., min(t, mask.shape[-2] - 1), :]  # row t's
            A[:, :, t] = masked_softmax(scores[:, :, t] + w_c * c[:, None, :], mask_t)  # (B, H, S)
            c = c + A[:, :, t].mean(axis=1)  # (B, S)
        return A, c

    def forward(self, scores: np.ndarray, mask=None) -> np.ndarray:
        """scores (B, H, T, S) -> A (B, H, T, S), coverage starting at 0 (teacher forcing)."""
        B, H, T, S = scores.shape
        return self.step(scores, mask, np.zeros((B, S), dtype=scores.dtype))[0]

    def backward(self, dA: np.ndarray, A: np.ndarray) -> np.ndarray:
        """dA (B, H, T, S) -> dscores (B, H, T, S); adds dL/dw_c.  Runs through the recurrence
        in reverse: row t's coverage c_t feeds row t's scores and every later c."""
        B, H, T, S = A.shape
        w_c = self.params["w_c"]  # (H,)
        c = coverage_vector(A.mean(axis=1))  # (B, T, S) the coverage each row saw
        dscores = np.empty_like(A)  # (B, H, T, S)
        dc = np.zeros((B, S), dtype=A.dtype)  # dL/dc_{t+1}, from the rows after t
        for t in reversed(range(T)):
            # forward: c_{t+1} = c_t + mean_h A_t   -> each head of row t gets dc / H
            dA_t = dA[:, :, t] + dc[:, None, :] / H  # (B, H, S)
            # forward: A_t = softmax(z_t)
            dz = softmax_backward(dA_t, A[:, :, t])  # (B, H, S)
            dscores[:, :, t] = dz
            # forward: z_t = scores_t + w_c[h] c_t
            self.grads["w_c"] += np.einsum("bhs,bs->h", dz, c[:, t])  # (H,)
            dc = dc + np.einsum("bhs,h->bs", dz, w_c)  # (B, S) c_t reaches c_{t+1} and z_t
        return dscores


class CoverageStep(NamedTuple):
    """:class:`Coverage` during decoding: the recurrence continued from each row's running
    coverage, for the N = B * G rows of a cross-attention step, whose scores arrive laid out
    per example (B, H, G*T_new, S) (:mod:`minitf.kv_cache`)."""
    coverage: Coverage
    c: np.ndarray  # (N, S) the coverage before these positions

    def forward(self, scores: np.ndarray, mask) -> np.ndarray:
        """scores (B, H, G*T_new, S), mask (B, 1, 1, S) -> A (B, H, G*T_new, S)."""
        G = self.c.shape[0] // scores.shape[0]
        A, _ = self.coverage.step(per_row(scores, G), np.repeat(mask, G, axis=0), self.c)  # (N, H, T_new, S) each row its own c
        return per_example(A, G)


# ---- the copy head: p_gen and the mixture --------------------------------------------------------
def sigmoid_pair(z: np.ndarray):
    """(sigma(z), sigma(-z)) = (p_gen, 1 - p_gen), each to full relative precision.

    1 - sigma(z) computed by subtraction, or as (1 + tanh(-z/2)) / 2, keeps only the
    absolute precision of numbers near 1: at p_gen = 0.9999 the copy weight 1e-4 would
    carry a relative error of ~1e-12 into log P.  With e = exp(-|z|) <= 1, the larger of
    the two is 1 / (1 + e) and the smaller e / (1 + e), and nothing cancels."""
    e = np.exp(-np.abs(z))
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    return np.where(z >= 0, big, small), np.where(z >= 0, small, big)


class CopyCache(NamedTuple):
    context: np.ndarray  # (B, T, D) h*_t, for dw_h
    s: np.ndarray  # (B, T, D) the decoder state, for dw_s
    x: np.ndarray  # (B, T, D) the decoder input, for dw_x
    a: np.ndarray  # (B, T, S) the copy attention, for dp_gen
    src_ext: np.ndarray  # (B, S) extended ids of the source tokens: where the scatter-add went
    p_gen: np.ndarray  # (B, T)
    p_copy: np.ndarray  # (B, T) 1 - p_gen
    P_vocab: np.ndarray  # (B, T, V) for the softmax backward and dp_gen


class CopyHead(Module):
    """p_gen and the mixture (module docstring), parameters named as in See et al.:
    ``w_h``, ``w_s``, ``w_x`` (D,) and ``b_ptr`` (1,)."""

    def __init__(self, d_model: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        bound = 1.0 / math.sqrt(d_model)
        for name in ("w_h", "w_s", "w_x"):
            self.add_param(name, rng.uniform(-bound, bound, size=d_model))
        self.add_param("b_ptr", np.zeros(1))

    def forward(self, logits, context, s, x, a, src_ext, vocab_size: int):
        """logits (B, T, V), context, s, x (B, T, D), a (B, T, S), src_ext (B, S) in [0, V_ext)
        -> P (B, T, V_ext = vocab_size), cache."""
        p = self.params
        V = logits.shape[-1]
        z = context @ p["w_h"] + s @ p["w_s"] + x @ p["w_x"] + p["b_ptr"]  # (B, T, D) @ (D,) -> (B, T)
        p_gen, p_copy = sigmoid_pair(z)  # (B, T) each: p_gen, and 1 - p_gen without cancellation
        P_vocab = softmax(logits)  # (B, T, V)
        P = scatter_add(p_copy[..., None] * a, src_ext, vocab_size)  # (B, T, V_ext) the copy part
        P[..., :V] += p_gen[..., None] * P_vocab  # the generation part
        return P, CopyCache(context, s, x, a, src_ext, p_gen, p_copy, P_vocab)

    def backward(self, dP: np.ndarray, cache: CopyCache):
        """dP (B, T, V_ext) -> (dlogits (B, T, V), dcontext, ds, dx (B, T, D), da (B, T, S))."""
        p, g = self.params, self.grads
        context, s, x, a, src_ext, p_gen, p_copy, P_vocab = cache
        V = P_vocab.shape[-1]
        # forward: P = p_gen [P_vocab, 0] + (1 - p_gen) scatter_add(a)
        dP_src = gather(dP, src_ext)  # (B, T, S) dP at each source position's token
        dP_vocab = p_gen[..., None] * dP[..., :V]  # (B, T, V)
        da = p_copy[..., None] * dP_src  # (B, T, S)
        dp_gen = (dP[..., :V] * P_vocab).sum(axis=-1) - (dP_src * a).sum(axis=-1)  # (B, T)
        # forward: P_vocab = softmax(logits)
        dlogits = softmax_backward(dP_vocab, P_vocab)  # (B, T, V)
        # forward: p_gen = sigma(z)
        dz = dp_gen * p_gen * p_copy  # (B, T)
        # forward: z = context . w_h + s . w_s + x . w_x + b_ptr
        g["w_h"] += np.einsum("btd,bt->d", context, dz)
        g["w_s"] += np.einsum("btd,bt->d", s, dz)
        g["w_x"] += np.einsum("btd,bt->d", x, dz)
        g["b_ptr"] += dz.sum()
        dz = dz[..., None]  # (B, T, 1)
        return dlogits, dz * p["w_h"], dz * p["w_s"], dz * p["w_x"], da  # (B, T, D) x3 by broadcast


# ---- the losses --------------------------------------------------------------------------------
def copy_nll(P: np.ndarray, labels, ignore_index: int = IGNORE_INDEX):
    """The negative log-likelihood of the mixture: P (B, T, V_ext), labels (B, T) extended ids
    (``ignore_index`` on padding) -> (loss, dP).

        L = -(1 / n_real) sum_t log P_t(y_t)          dL/dP_t(y_t) = -1 / (n_real P_t(y_t))

    (There is no softmax to fuse with: P is a mixture.)  A label must have probability > 0:
    a copied id V + j must belong to a token of the example's own source."""
    check_shape("labels", labels, P.shape[:-1], f"P is {P.shape}: one label per position")
    labels = check_token_ids("labels", labels, P.shape[-1], allow=(ignore_index,))
    real = labels != ignore_index  # (B, T)
    n_real = int(real.sum())
    if n_real == 0:
        raise ValueError(f"labels: every label is ignore_index={ignore_index}; expected at least one real target")
    y = np.where(real, labels, 0)[..., None]  # (B, T, 1)
    p_y = np.take_along_axis(P, y, axis=-1)[..., 0]  # (B, T)
    if not (p_y[real] > 0).all():
        b, t = np.argwhere(real & ~(p_y > 0))[0]
        raise ValueError(f"labels: position ({b}, {t}) has label {labels[b, t]}, which has probability 0 (a copied "
                         f"id must be a token of the example's own source: PointerGenerator.to_extended)")
    p_y = np.where(real, p_y, 1.0)  # ignored positions: log 1 = 0, and no division by 0
    loss = float(-(np.log(p_y) * real).sum() / n_real)
    dP = np.zeros_like(P)  # (B, T, V_ext)
    np.put_along_axis(dP, y, np.where(real, -1.0 / (n_real * p_y), 0.0)[..., None].astype(P.dtype), axis=-1)
    return loss, dP


def coverage_loss(a: np.ndarray, labels, weight: float = 1.0, ignore_index: int = IGNORE_INDEX):
    """See et al.'s coverage loss: a (B, T, S) the copy attention, labels (B, T) (for the real
    positions) -> (loss, da).

        L_cov = (weight / n_real) sum_{t real} sum_i min(a_t,i, c_t,i),   c_t = sum_{t' < t} a_t'

    dL/da reaches a_t twice: where a_t,i < c_t,i through the min directly, and through every
    later c (ties go to c)."""
    check_number("weight", weight, 0)
    check_shape("labels", labels, a.shape[:2], f"a is {a.shape}: (B, T), one label per position")
    real = np.asarray(labels) != ignore_index  # (B, T)
    n_real = int(real.sum())
    if n_real == 0:
        raise ValueError(f"labels: every label is ignore_index={ignore_index}; expected at least one real target")
    c = coverage_vector(a)  # (B, T, S)
    loss = float(weight * (np.minimum(a, c).sum(axis=-1) * real).sum() / n_real)
    g = (weight * real / n_real)[..., None]  # (B, T, 1)
    # forward: m = min(a, c)
    da = g * (a < c)  # (B, T, S)
    dc = g * (a >= c)
    # forward: c_t = sum_{t' < t} a_t'   -> a_t' receives every later dc_t
    da += np.cumsum(dc[:, ::-1], axis=1)[:, ::-1] - dc  # (B, T, S) sum_{t > t'} dc_t
    return loss, da.astype(a.dtype)


def mixture_log_probs(P: np.ndarray) -> np.ndarray:
    """log P, -inf where P = 0 (an extended id no token of this example's source carries):
    what the decoders rank by (the log-softmax of a log-distribution is itself)."""
    with np.errstate(divide="ignore"):
        return np.log(P)

