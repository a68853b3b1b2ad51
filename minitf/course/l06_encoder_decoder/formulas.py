"""Lesson 6's formulas: the model's input and output (embedding, scale, positions; the head and
tying), the linear layer and the embedding backward, and the three budgets: parameters, FLOPs
and activation memory."""
from __future__ import annotations

import math

import numpy as np

from ...config import ModelConfig
from ...layers import Dropout, Embedding, PositionalEncoding, affine_backward, affine_forward
from ...models import EncoderDecoder
from ...models.common import head_backward, input_forward
from ..kit.formulas import compare, formula, lesson_intro, random_ids, sinusoidal, tiny_config

lesson_intro("6", """
The whole encoder–decoder (`minitf/models/`): V_src and V_tgt are the two vocabularies, L_enc and
L_dec the two stacks' depths, q the bytes of one number (8 in float64, 4 in float32).
""")


@formula("input-embedding", lesson="6", section=1, title="From ids to the first block's input",
         latex=r"x_t = \sqrt{D}\; W_E[\mathrm{id}_t] + P_t \qquad (B, T) \to (B, T, D)",
         computes="minitf.models.common.input_forward",
         note="W_E (V × D) is the embedding table, initialised N(0, 1/D) so that √D W_E has unit variance; "
              "P the positions of Lesson 5 (then dropout, in training).")
def check_input(rng):
    V, D, T = 13, 8, 6
    embed = Embedding(V, D, 0, init_std=D ** -0.5, rng=rng, dtype=np.float64)
    pos, drop = PositionalEncoding(12, D, rng=rng, dtype=np.float64), Dropout(0.0, rng=rng)
    ids = random_ids(rng, 2, T, V)
    x = math.sqrt(D) * embed.params["W_E"][ids] + sinusoidal(T, D)
    return [compare("x", x, input_forward(ids, embed, pos, drop, True)[0])]


@formula("output-head", lesson="6", section=5, title="The output head, and tying it to the embedding",
         latex=r"""
z = H_{\text{dec}} W_U \quad (B, T, V), \qquad \frac{\partial L}{\partial H_{\text{dec}}} = dz\, W_U^\top, \qquad
\frac{\partial L}{\partial W_U} = H_{\text{dec}}^\top dz; \qquad \text{tied: } W_U = W_E^\top,\ \
\frac{\partial L}{\partial W_E} \mathrel{+}= \big(H_{\text{dec}}^\top dz\big)^\top""",
         computes=("minitf.models.common.head_weight", "minitf.models.common.head_backward"),
         note="W_U has no bias. Tied, one table serves as input and output and its gradient is the sum of "
              "its two uses (Press & Wolf 2017).")
def check_head(rng):
    model = EncoderDecoder(tiny_config(tgt_vocab_size=11, tie_output=True)).eval()
    src, tgt = random_ids(rng, 2, 5, 11), random_ids(rng, 2, 4, 11)
    logits, cache = model.forward(src, tgt)
    H_dec, W_E = cache.decoder.H_dec, model.tgt_embed.params["W_E"]
    dz = rng.standard_normal(logits.shape)
    model.zero_grad()
    dH = head_backward(dz, H_dec, model)
    return [compare("z = H_dec W_Eᵀ", H_dec @ W_E.T, logits), compare("dH_dec", dz @ W_E, dH),
            compare("dW_E (from the head)", np.einsum("btd,btv->vd", H_dec, dz), model.tgt_embed.grads["W_E"])]


@formula("linear", lesson="6", section=3, title="The linear layer and its backward",
         latex=r"""
y = x W + b, \qquad dx = dy\, W^\top, \qquad dW = x^\top dy, \qquad db = \sum_{\text{rows}} dy""",
         computes=("minitf.layers.linear.affine_forward", "minitf.layers.linear.affine_backward"),
         note="x (N, D_in), W (D_in, D_out), N = B·T rows. One product in the forward becomes two of the "
              "same size in the backward: hence backward FLOPs = 2 × forward FLOPs.")
def check_linear(rng):
    x, W, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    dy = rng.standard_normal((2, 3, 5))
    dx, dW, db = affine_backward(dy, x, W)
    x2, dy2 = x.reshape(-1, 4), dy.reshape(-1, 5)
    return [compare("y", x @ W + b, affine_forward(x, W, b)), compare("dx", dy @ W.T, dx),
            compare("dW", x2.T @ dy2, dW), compare("db", dy2.sum(0), db)]


@formula("embedding-backward", lesson="6", section=5, title="The embedding's backward",
         latex=r"""
\frac{\partial L}{\partial W_E[v]} = \sum_{n\,:\ \mathrm{id}_n = v} \frac{\partial L}{\partial x_n}
\qquad (v \ne \langle\mathrm{pad}\rangle)""",
         computes="minitf.layers.embedding.Embedding.backward",
         note="A lookup's backward scatters each position's gradient into the row it read; a token that "
              "occurs n times gets the sum of n rows. The padding row gets nothing (PyTorch's padding_idx).")
def check_embedding_backward(rng):
    V, D, pad = 6, 4, 0
    embed = Embedding(V, D, pad, rng=rng, dtype=np.float64)
    ids = rng.integers(0, V, size=(3, 7))
    dx = rng.standard_normal((3, 7, D))
    expected = np.zeros((V, D))
    for n, v in enumerate(ids.reshape(-1)):
        if v != pad:
            expected[v] += dx.reshape(-1, D)[n]
    _, cache = embed.forward(ids)
    embed.backward(dx, cache)
    return [compare("dW_E", expected, embed.grads["W_E"])]


def parameter_count(c: ModelConfig) -> int:
    """The formula of Lesson 6 §2, from the config alone."""
    D, F = c.d_model, c.d_ff
    n = c.src_vocab_size * D + c.tgt_vocab_size * D
    n += c.n_encoder_layers * (4 * D * D + 2 * D * F + 9 * D + F) + 2 * D
    n += c.n_decoder_layers * (8 * D * D + 2 * D * F + 15 * D + F) + 2 * D + D * c.tgt_vocab_size
    n -= c.tgt_vocab_size * D if c.share_embeddings else 0
    n -= D * c.tgt_vocab_size if c.tie_output else 0
    return n + (2 * c.max_len * D if c.positional == "learned" else 0)


@formula("parameter-count", lesson="6", section=2, title="Counting parameters",
         latex=r"""
\begin{aligned}
N &= V_{\text{src}} D + V_{\text{tgt}} D + L_{\text{enc}}\,(4D^2 + 2DF + 9D + F) + 2D +
L_{\text{dec}}\,(8D^2 + 2DF + 15D + F) + 2D + D\, V_{\text{tgt}} \\
&\quad - V_{\text{tgt}} D\ [\text{shared}] \ - D\, V_{\text{tgt}}\ [\text{tied}]
\ + 2\, \ell_{\max} D\ [\text{learned positions}]
\end{aligned}""",
         computes="minitf.module.Module.num_parameters",
         note="An attention has 4D² + 4D weights, a feed-forward network 2DF + F + D, a LayerNorm 2D; an "
              "encoder block one attention and two norms, a decoder block two and three; each stack a final "
              "norm; ℓ_max is max_len.")
def check_parameters(rng):
    out = []
    for name, changes in (("default", {}), ("learned positions", {"positional": "learned"}),
                          ("shared + tied", {"share_embeddings": True, "tie_output": True, "tgt_vocab_size": 11}),
                          ("post-LN, 3 + 2 blocks",
                           {"norm_first": False, "n_encoder_layers": 3, "n_decoder_layers": 2})):
        c = tiny_config(**changes)
        out.append(compare(f"N ({name})", parameter_count(c), EncoderDecoder(c).num_parameters(), tol=0))
    return out


@formula("forward-flops", lesson="6", section=3, title="Counting FLOPs",
         latex=r"""
\begin{aligned}
\text{(m × k)(k × n) product: } & 2mkn \\
F_{\text{fwd}} &= L_{\text{enc}}\big(8BSD^2 + 4BS^2D + 4BSDF\big) \\
&+ L_{\text{dec}}\big(8BTD^2 + 4BT^2D + 4BTD^2 + 4BSD^2 + 4BTSD + 4BTDF\big) + 2BTDV_{\text{tgt}},
\qquad F_{\text{bwd}} = 2 F_{\text{fwd}}
\end{aligned}""",
         computes="minitf.course.l06_encoder_decoder.counted_flops",
         note="Projections and feed-forward networks cost 2 FLOPs per weight per position; attention proper "
              "(Q Kᵀ and A V) grows with the product of two lengths. Element-wise work is not counted. The "
              "linked function counts the products of a live forward from its cache's shapes.")
def check_flops(rng):
    from .experiments import counted_flops  # course code, imported when the check runs

    c = tiny_config()
    B, S, T = 2, 5, 4
    D, F, V, Le, Ld = c.d_model, c.d_ff, c.tgt_vocab_size, c.n_encoder_layers, c.n_decoder_layers
    expected = (Le * (8 * B * S * D * D + 4 * B * S * S * D + 4 * B * S * D * F)
                + Ld * (8 * B * T * D * D + 4 * B * T * T * D + 4 * B * T * D * D + 4 * B * S * D * D
                        + 4 * B * T * S * D + 4 * B * T * D * F) + 2 * B * T * D * V)
    model = EncoderDecoder(c).eval()
    _, cache = model.forward(random_ids(rng, B, S, c.src_vocab_size), random_ids(rng, B, T, V))
    return [compare("F_fwd", expected, counted_flops(model, cache)["total"], tol=0)]


@formula("activation-memory", lesson="6", section=4, title="Where the memory goes",
         latex=r"""
\begin{aligned}
\text{encoder block: } & q\,\big(8BSD + 2BS + BHS^2 + 2BSF\big) \\
\text{decoder block: } & q\,\big(12BTD + 3BT + BHT^2 + BHTS + 2BSD + 2BTF\big) \\
\text{once: } & q\,\big(BSD\ [H_{\text{enc}}] + BSD + BS + BTD + BT\ [\text{final norms}] +
BTD\ [H_{\text{dec}}]\big) + 8B(S + T)\ [\text{ids}]
\end{aligned}""",
         computes="minitf.models.encoder_decoder.EncoderDecoder.activation_bytes",
         note="The bytes a forward keeps for its backward: LayerNorm x̂ and 1/σ, attention inputs, Q, K, V, "
              "the weights A (quadratic in the lengths), merged heads, the FFN's pre-activation and activation. "
              "No dropout masks (evaluation mode).")
def check_memory(rng):
    c = tiny_config()
    B, S, T, q = 2, 5, 4, 8
    D, H, F, Le, Ld = c.d_model, c.n_heads, c.d_ff, c.n_encoder_layers, c.n_decoder_layers
    enc = q * Le * (8 * B * S * D + 2 * B * S + B * H * S * S + 2 * B * S * F) + q * (B * S * D + B * S) + 8 * B * S
    dec = (q * Ld * (12 * B * T * D + 3 * B * T + B * H * T * T + B * H * T * S + 2 * B * S * D + 2 * B * T * F)
           + q * B * S * D + q * (B * T * D + B * T) + 8 * B * T)
    head = q * B * T * D
    model = EncoderDecoder(c).eval()
    _, cache = model.forward(random_ids(rng, B, S, c.src_vocab_size), random_ids(rng, B, T, c.tgt_vocab_size))
    got = model.activation_bytes(cache)
    return [compare("encoder bytes", enc, got["encoder"], tol=0), compare("decoder bytes", dec, got["decoder"], tol=0),
            compare("head bytes", head, got["head"], tol=0)]
