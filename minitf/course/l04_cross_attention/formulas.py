"""Lesson 4's formulas: cross-attention (queries from the decoder, keys and values from H_enc)
and its backward, which returns the decoder's and the encoder's gradients apart."""
from __future__ import annotations

import numpy as np

from ...attention import MultiHeadAttention
from ..kit.formulas import attention, compare, finite_differences, formula, from_heads, lesson_intro, to_heads

lesson_intro("4", """
Cross-attention joins the two stacks (`minitf/attention.py`): `MultiHeadAttention` called with the
decoder stream X_dec (B, T, D) as queries and the encoder output H_enc (B, S, D) as keys and values.
""")


def _cross_example(rng, B=2, T=3, S=5, D=8, H=2):
    mha = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        mha.params[name][...] = rng.standard_normal(D)
    X_dec, H_enc = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    M = np.zeros((B, 1, 1, S))
    M[1, ..., 3:] = -1e9  # source padding: row 1 has 3 real positions
    return mha, X_dec, H_enc, M


def _cross_forward(p, X_dec, H_enc, M, H):
    Q = to_heads(X_dec @ p["W_q"] + p["b_q"], H)
    K = to_heads(H_enc @ p["W_k"] + p["b_k"], H)
    V = to_heads(H_enc @ p["W_v"] + p["b_v"], H)
    O, A = attention(Q, K, V, M)
    return from_heads(O) @ p["W_o"] + p["b_o"], (Q, K, V, A, O)


@formula("cross-attention", lesson="4", section=1, title="Cross-attention",
         latex=r"""
Q = X_{\text{dec}} W_q + b_q, \quad K = H_{\text{enc}} W_k + b_k, \quad V = H_{\text{enc}} W_v + b_v, \qquad
A = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{D_h}} + M_{\text{src}}\right) \in \mathbb{R}^{T \times S}""",
         computes=("minitf.attention.MultiHeadAttention.forward", "minitf.attention.MultiHeadAttention.project_kv"),
         note="Per head, a T × S weight matrix; the only mask is source padding (no causal mask: the "
              "source is known in full). K and V depend on H_enc alone, hence the cross-attention cache of Lesson 9.")
def check_cross_attention(rng):
    mha, X_dec, H_enc, M = _cross_example(rng)
    y, (_, K, V, A, _) = _cross_forward(mha.params, X_dec, H_enc, M, mha.n_heads)
    my, cache = mha.forward(X_dec, H_enc, M)
    return [compare("A (B, H, T, S)", A, cache.attn.A), compare("K", K, cache.attn.K), compare("y", y, my)]


@formula("cross-attention-backward", lesson="4", section=5, title="The gradient through cross-attention",
         latex=r"""
\frac{\partial L}{\partial X_{\text{dec}}} = dQ\, W_q^\top, \qquad
\frac{\partial L}{\partial H_{\text{enc}}}\Big|_{\text{this block}} = dK\, W_k^\top + dV\, W_v^\top, \qquad
\frac{\partial L}{\partial W_k} = H_{\text{enc}}^\top dK,
\quad \frac{\partial L}{\partial W_v} = H_{\text{enc}}^\top dV""",
         computes="minitf.attention.MultiHeadAttention.backward",
         note="dQ, dK, dV (heads merged) come from the attention backward of Lesson 2. The backward returns "
              "dx_q and dx_kv separately: the first goes back into the decoder stream, the second is this "
              "block's share of ∂L/∂H_enc (Lesson 8 §4 adds the shares up).")
def check_cross_attention_backward(rng):
    mha, X_dec, H_enc, M = _cross_example(rng)
    p, Hh = mha.params, mha.n_heads
    dy = rng.standard_normal(X_dec.shape)
    _, (Q, K, V, A, O) = _cross_forward(p, X_dec, H_enc, M, Hh)
    sqrt_dh = np.sqrt(Q.shape[-1])
    dO = to_heads(dy @ p["W_o"].T, Hh)
    dV = np.swapaxes(A, -1, -2) @ dO
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - (dA * A).sum(-1, keepdims=True))
    dQ, dK = from_heads(dS @ K / sqrt_dh), from_heads(np.swapaxes(dS, -1, -2) @ Q / sqrt_dh)
    dV = from_heads(dV)
    dX_dec, dH_enc = dQ @ p["W_q"].T, dK @ p["W_k"].T + dV @ p["W_v"].T
    dW_k = np.einsum("bsi,bsj->ij", H_enc, dK)

    _, cache = mha.forward(X_dec, H_enc, M)
    mdx_q, mdx_kv = mha.backward(dy, cache)

    def loss():
        return float(np.sum(_cross_forward(p, X_dec, H_enc, M, Hh)[0] * dy))

    return [compare("dX_dec", dX_dec, mdx_q), compare("dH_enc (this block)", dH_enc, mdx_kv),
            compare("dW_k", dW_k, mha.grads["W_k"]), finite_differences("dH_enc", dH_enc, loss, H_enc)]
