"""Lesson 3's formulas: the additive causal and padding masks, attention under a mask (a
fully masked row gives zero), and the mask in the backward."""
from __future__ import annotations

import math

import numpy as np

from ...attention import scaled_dot_product_attention, scaled_dot_product_attention_backward
from ...masks import causal_mask, key_padding_mask
from ..kit.formulas import compare, formula, lesson_intro, softmax_rows

lesson_intro("3", """
The causal mask (`minitf/masks.py`, `minitf/attention.py`). A mask is *added* to the scores before the
softmax: 0 where a query may attend, −10⁹ (`MASK_VALUE`) where it may not, a finite number so that
masks add up and a fully masked row stays finite.
""")

BLOCKED = -1e9


@formula("causal-mask", lesson="3", section=2, title="The causal mask",
         latex=r"M_{ts} = \begin{cases} 0 & s \le t + t_0 \\ -10^{9} & s > t + t_0 \end{cases} \qquad (T \times S)",
         computes="minitf.masks.causal_mask",
         note="Query t, at absolute position t + t₀ (t₀ = 0 in training; the cache's length when decoding "
              "several new positions at once, Lesson 9), may attend to keys up to its own position.")
def check_causal_mask(rng):
    out = []
    for T, S, t0 in ((5, 5, 0), (3, 7, 4)):
        t, s = np.arange(T)[:, None], np.arange(S)[None, :]
        M = np.where(s <= t + t0, 0.0, BLOCKED)
        out.append(compare(f"M (T={T}, S={S}, t0={t0})", M, causal_mask(T, S, offset=t0, dtype=np.float64), tol=0))
    return out


@formula("padding-mask", lesson="3", section=3, title="The key padding mask",
         latex=r"""
M_{b s} = \begin{cases} -10^{9} & x_{b s} = \langle\mathrm{pad}\rangle \\ 0 & \text{otherwise} \end{cases}
\qquad (B \times 1 \times 1 \times S)""",
         computes="minitf.masks.key_padding_mask",
         note="The same for every head and every query; added to the causal mask it broadcasts to (B, 1, T, S).")
def check_padding_mask(rng):
    pad = 0
    ids = rng.integers(1, 9, size=(3, 6))
    ids[0, 4:], ids[2, 1:] = pad, pad
    M = np.where(ids == pad, BLOCKED, 0.0)[:, None, None, :]
    return [compare("M", M, key_padding_mask(ids, pad, dtype=np.float64), tol=0)]


def _padded_example(rng):
    """Q, K, V (B=2, H=2, T=5, Dh=4) and a causal + padding mask (B, 1, T, T) whose row 1 is
    padded on the left (keys 0 and 1): its first two queries have nothing to attend to."""
    B, H, T, Dh = 2, 2, 5, 4
    Q, K, V = (rng.standard_normal((B, H, T, Dh)) for _ in range(3))
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]
    pad = np.zeros((B, 1, 1, T))
    pad[1, ..., :2] = BLOCKED
    return Q, K, V, np.where(s > t, BLOCKED, 0.0) + pad


@formula("masked-attention", lesson="3", section=3, title="Attention under a mask; fully masked rows",
         latex=r"""
A_{t} = \mathbb{1}\big[\exists s : M_{ts} = 0\big]\
\operatorname{softmax}\!\left(\frac{q_t K^\top}{\sqrt{D_h}} + M_{t}\right),
\qquad O = A V""",
         computes="minitf.attention.scaled_dot_product_attention",
         note="A blocked key gets exp(≈ −10⁹) = 0 weight exactly. A query with every key blocked gets "
              "all-zero weights, hence a zero output and a zero gradient, never NaN. Such a query comes "
              "with *left* padding: the first queries of a left-padded row see only padding (Lesson 3 §3; "
              "minitf left-pads a decoder-only model's prompts when it generates). Right padding, minitf's "
              "layout elsewhere, leaves every query at least its row's first token. The softmax alone "
              "would give such a row weights that mean nothing: uniform in float32, where a score plus "
              "−10⁹ rounds to −10⁹, and in float64, where the scores survive the addition, in effect the "
              "unmasked softmax of the scores (Lesson 3 §2).")
def check_masked_attention(rng):
    Q, K, V, M = _padded_example(rng)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) + M
    alive = (M == 0).any(axis=-1, keepdims=True)  # (B, 1, T, 1)
    A = alive * softmax_rows(scores)
    out, cache = scaled_dot_product_attention(Q, K, V, M)
    return [compare("A", A, cache.A), compare("O", A @ V, out)]


@formula("mask-backward", lesson="3", section=4, title="The mask in the backward",
         latex=r"""
\frac{\partial L}{\partial S_{ts}} = A_{ts}\Big(dA_{ts} - \sum_{u} A_{tu}\, dA_{tu}\Big) = 0
\quad \text{wherever } A_{ts} = 0
\ \ (M_{ts} = -10^{9}), \qquad dQ = \frac{dS\, K}{\sqrt{D_h}}""",
         computes="minitf.attention.scaled_dot_product_attention_backward",
         note="The mask is a constant added to the scores, so the backward passes straight through it and "
              "inherits the softmax's factor A: no gradient reaches a query from a key it could not see.")
def check_mask_backward(rng):
    Q, K, V, M = _padded_example(rng)
    dO = rng.standard_normal(Q.shape)
    _, cache = scaled_dot_product_attention(Q, K, V, M)
    A = cache.A
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - (A * dA).sum(-1, keepdims=True))
    mQ, mK, _, _, _ = scaled_dot_product_attention_backward(dO, cache)
    blocked = np.broadcast_to(M <= BLOCKED / 2, dS.shape)
    return [compare("dS on blocked cells", dS[blocked], np.zeros(blocked.sum()), tol=0, against="0"),
            compare("dQ = dS K / √Dh", dS @ K / math.sqrt(Q.shape[-1]), mQ),
            compare("dK = dSᵀ Q / √Dh", np.swapaxes(dS, -1, -2) @ Q / math.sqrt(Q.shape[-1]), mK)]
