"""Lesson 2's formulas: scaled dot-product attention, the softmax and its Jacobian-vector
product, the attention backward line by line, and multi-head attention."""
from __future__ import annotations

import math

import numpy as np

from ...attention import MultiHeadAttention, scaled_dot_product_attention, scaled_dot_product_attention_backward
from ...layers.softmax import log_softmax, softmax, softmax_backward
from ..kit.formulas import attention, compare, finite_differences, formula, lesson_intro, softmax_rows

lesson_intro("2", """
Attention from scratch (`minitf/attention.py`, `minitf/layers/softmax.py`). Q is (B, H, T, Dh),
K and V are (B, H, S, Dh); the softmax runs over the last axis, the keys.
""")


def _qkv(rng, B=2, H=2, T=3, S=4, Dh=5):
    return rng.standard_normal((B, H, T, Dh)), rng.standard_normal((B, H, S, Dh)), rng.standard_normal((B, H, S, Dh))


@formula("scaled-dot-product-attention", lesson="2", section=2, title="Scaled dot-product attention",
         latex=r"""
\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{D_h}} + M\right) V""",
         computes="minitf.attention.scaled_dot_product_attention",
         note="The scale 1/√Dh keeps the scores' variance at 1 whatever the head width (var(q · k) = Dh for "
              "unit-variance entries, measured in Lesson 2 §2); M is the additive mask of Lesson 3 (0 here).")
def check_attention(rng):
    Q, K, V = _qkv(rng)
    out, P = attention(Q, K, V)
    mout, cache = scaled_dot_product_attention(Q, K, V)
    return [compare("P", P, cache.A), compare("output", out, mout)]


@formula("softmax", lesson="2", section=3, title="The softmax, with the maximum subtracted",
         latex=r"""
p_i = \operatorname{softmax}(z)_i = \frac{e^{\,z_i - \max_k z_k}}{\sum_j e^{\,z_j - \max_k z_k}}, \qquad
\log p_i = z_i - \max_k z_k - \log \sum_j e^{\,z_j - \max_k z_k}""",
         computes=("minitf.layers.softmax.softmax", "minitf.layers.softmax.log_softmax"),
         note="Subtracting the maximum changes nothing (softmax(z) = softmax(z − c)) and keeps every exponent ≤ 0: "
              "nothing overflows, even for scores of 1000.")
def check_softmax(rng):
    z = rng.standard_normal((3, 7)) * 3
    z[0] += 1000.0  # would overflow without the maximum subtracted
    p = softmax_rows(z)
    shifted = z - z.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return [compare("p", p, softmax(z.copy())), compare("log p", logp, log_softmax(z))]


@formula("softmax-backward", lesson="2", section=3, title="The softmax backward: a Jacobian-vector product",
         latex=r"""
J = \frac{\partial p}{\partial z} = \operatorname{diag}(p) - p\, p^\top, \qquad
\frac{\partial L}{\partial z} = J^\top g = p \odot \big(g - \langle g, p \rangle\big),
\qquad g = \frac{\partial L}{\partial p}""",
         computes="minitf.layers.softmax.softmax_backward",
         note="J is symmetric and its rows sum to zero; the cheap form costs O(S) per row instead of O(S²) "
              "and never builds J.")
def check_softmax_backward(rng):
    z, g = rng.standard_normal(6), rng.standard_normal(6)
    p = softmax_rows(z)
    J = np.diag(p) - np.outer(p, p)
    cheap = p * (g - g @ p)
    return [compare("J^T g (J built)", J.T @ g, softmax_backward(g, p)),
            compare("p ⊙ (g − ⟨g, p⟩)", cheap, softmax_backward(g, p)),
            finite_differences("∂L/∂z", cheap, lambda: float(softmax_rows(z) @ g), z)]


@formula("attention-backward", lesson="2", section=4, title="The attention backward, line by line",
         latex=r"""
\begin{aligned}
S &= Q K^\top / \sqrt{D_h}, & P &= \operatorname{softmax}(S), & O &= P V \\
dV &= P^\top dO, & dP &= dO\, V^\top, & dS &= P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big) \\
dQ &= dS\, K / \sqrt{D_h}, & dK &= dS^\top Q / \sqrt{D_h}
\end{aligned}""",
         computes="minitf.attention.scaled_dot_product_attention_backward",
         note="dX means ∂L/∂X. The scale comes back in the backward, as any constant factor does; "
              "forgetting it is the classic bug.")
def check_attention_backward(rng):
    Q, K, V = _qkv(rng)
    dO = rng.standard_normal((2, 2, 3, 5))
    sqrt_dh = math.sqrt(Q.shape[-1])
    _, P = attention(Q, K, V)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    dQ = dS @ K / sqrt_dh
    dK = np.swapaxes(dS, -1, -2) @ Q / sqrt_dh
    _, cache = scaled_dot_product_attention(Q, K, V)
    mQ, mK, mV, _, _ = scaled_dot_product_attention_backward(dO, cache)

    def loss():
        return float(np.sum(attention(Q, K, V)[0] * dO))

    return [compare("dQ", dQ, mQ), compare("dK", dK, mK), compare("dV", dV, mV),
            finite_differences("dQ", dQ, loss, Q), finite_differences("dK", dK, loss, K)]


@formula("multi-head-attention", lesson="2", section=5, title="Multi-head attention",
         latex=r"""
\begin{aligned}
\mathrm{head}_h &= \operatorname{Attention}\!\big(X_q W_q^{(h)} + b_q^{(h)},
\ X_{kv} W_k^{(h)} + b_k^{(h)},\ X_{kv} W_v^{(h)} + b_v^{(h)}\big),
\qquad W^{(h)} = W_{[:,\ h D_h\, :\, (h+1) D_h]} \\
\operatorname{MultiHead}(X_q, X_{kv}) &= \big[\mathrm{head}_0, \dots, \mathrm{head}_{H-1}\big]\, W_o + b_o
\end{aligned}""",
         computes="minitf.attention.MultiHeadAttention.forward",
         note="Heads are numbered from 0, as in the code: head h = 0, …, H − 1 uses its own Dh = D/H columns "
              "of W_q, W_k, W_v, columns hDh to (h + 1)Dh − 1 (the slice hDh : (h + 1)Dh); minitf computes all heads at once by "
              "reshaping (B, T, D) to (B, H, T, Dh), the formula here loops over heads.")
def check_multi_head(rng):
    B, T, S, D, H = 2, 3, 4, 12, 3
    Dh = D // H
    mha = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    p = mha.params
    for name in ("b_q", "b_k", "b_v", "b_o"):
        p[name][...] = rng.standard_normal(D)
    X_q, X_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    heads = []
    for h in range(H):
        cols = slice(h * Dh, (h + 1) * Dh)
        q = X_q @ p["W_q"][:, cols] + p["b_q"][cols]
        k = X_kv @ p["W_k"][:, cols] + p["b_k"][cols]
        v = X_kv @ p["W_v"][:, cols] + p["b_v"][cols]
        heads.append(attention(q, k, v)[0])
    y = np.concatenate(heads, axis=-1) @ p["W_o"] + p["b_o"]
    return [compare("MultiHead(X_q, X_kv)", y, mha.forward(X_q, X_kv)[0])]
