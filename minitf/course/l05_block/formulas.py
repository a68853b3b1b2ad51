"""Lesson 5's formulas: LayerNorm and its backward, the residual sub-layer in its pre-LN and
post-LN arrangements, dropout, the feed-forward network, ReLU and GELU, sinusoidal positions,
and the warm-up schedules."""
from __future__ import annotations

import math

import numpy as np

from ...blocks import sublayer_backward, sublayer_forward
from ...layers import Dropout, FeedForward, LayerNorm, Linear, sinusoidal_table
from ...layers.activations import gelu_backward, gelu_forward, gelu_tanh_backward, gelu_tanh_forward, relu_backward, \
    relu_forward
from ...schedules import Noam, WarmupCosine
from ..kit.formulas import compare, finite_differences, formula, lesson_intro, sinusoidal

lesson_intro("5", """
The block (`minitf/blocks.py`, `minitf/layers/`): every sub-layer f (self-attention, cross-attention
or the feed-forward network) sits in a residual connection with a LayerNorm. Each formula acts on the
last axis, D, of a (B, T, D) stream, every position on its own.
""")

EPS = 1e-5


def layer_norm(x, gamma, beta, eps=EPS):
    """y = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta over the last axis; also x_hat and 1/sqrt(sigma^2 + eps)."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    x_hat = (x - mu) * rstd
    return gamma * x_hat + beta, x_hat, rstd


def layer_norm_jacobian(x_hat, rstd, gamma):
    """dy_i/dx_j = gamma_i (delta_ij - 1/D - x_hat_i x_hat_j / D) / sqrt(sigma^2 + eps), per row: (N, D, D)."""
    D = x_hat.shape[-1]
    xh = x_hat.reshape(-1, D)
    J = (np.eye(D)[None] - 1.0 / D - xh[:, :, None] * xh[:, None, :] / D) * rstd.reshape(-1, 1, 1)
    return gamma[None, :, None] * J


def _vjp(J, dy):
    """dx = J^T dy row by row: dy (..., D) -> (..., D)."""
    return np.einsum("nij,ni->nj", J, dy.reshape(-1, dy.shape[-1])).reshape(dy.shape)


def _norm(rng, D):
    norm = LayerNorm(D, EPS, dtype=np.float64)
    norm.params["gamma"][...] = 1.0 + 0.3 * rng.standard_normal(D)  # random: gamma = 1 hides bugs
    norm.params["beta"][...] = 0.3 * rng.standard_normal(D)
    return norm


@formula("layernorm", lesson="5", section=2, title="Layer normalization",
         latex=r"""
\mu = \frac{1}{D}\sum_{i=1}^{D} x_i, \qquad \sigma^2 = \frac{1}{D}\sum_{i=1}^{D} (x_i - \mu)^2, \qquad
\hat x = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad y = \gamma \odot \hat x + \beta""",
         computes="minitf.layers.layernorm.LayerNorm.forward",
         note="Over the D features of one position (not over the batch); σ² is the biased variance, as in the "
              "paper and PyTorch; ε = 10⁻⁵.")
def check_layernorm(rng):
    D = 8
    norm = _norm(rng, D)
    x = rng.standard_normal((2, 3, D)) * 2 + 1
    y, _, _ = layer_norm(x, norm.params["gamma"], norm.params["beta"])
    return [compare("y", y, norm.forward(x)[0])]


@formula("layernorm-backward", lesson="5", section=2, title="The LayerNorm backward",
         latex=r"""
\begin{aligned}
\frac{\partial \hat x_i}{\partial x_j} &= \frac{1}{\sqrt{\sigma^2 + \epsilon}}
\left(\delta_{ij} - \frac{1}{D} - \frac{\hat x_i \hat x_j}{D}\right) \\
d\hat x &= \gamma \odot dy, \qquad
dx = \frac{1}{\sqrt{\sigma^2 + \epsilon}}\Big(d\hat x - \operatorname{mean}(d\hat x) -
\hat x \odot \operatorname{mean}(d\hat x \odot \hat x)\Big) \\
d\gamma &= \sum_{\text{rows}} dy \odot \hat x, \qquad d\beta = \sum_{\text{rows}} dy
\end{aligned}""",
         computes="minitf.layers.layernorm.LayerNorm.backward",
         note="Three paths from x to x̂ (directly, through μ, through σ) collapse into the compact second line; "
              "the check builds the D × D Jacobian of the first line for every position and compares.")
def check_layernorm_backward(rng):
    D = 6
    norm = _norm(rng, D)
    g, b = norm.params["gamma"], norm.params["beta"]
    x, dy = rng.standard_normal((2, 3, D)), rng.standard_normal((2, 3, D))
    _, x_hat, rstd = layer_norm(x, g, b)
    dx_jacobian = _vjp(layer_norm_jacobian(x_hat, rstd, g), dy)
    dxh = g * dy
    dx = rstd * (dxh - dxh.mean(-1, keepdims=True) - x_hat * (dxh * x_hat).mean(-1, keepdims=True))
    _, cache = norm.forward(x)
    mdx = norm.backward(dy, cache)
    return [compare("dx (Jacobian built)", dx_jacobian, mdx), compare("dx (compact)", dx, mdx),
            compare("dγ", (dy * x_hat).reshape(-1, D).sum(0), norm.grads["gamma"]),
            compare("dβ", dy.reshape(-1, D).sum(0), norm.grads["beta"]),
            finite_differences("dx", dx, lambda: float(np.sum(layer_norm(x, g, b)[0] * dy)), x)]


def _sublayer_example(rng, D=6):
    norm, lin, drop = _norm(rng, D), Linear(D, D, rng=rng, dtype=np.float64), Dropout(0.0, rng=rng)
    x, dy = rng.standard_normal((2, 3, D)), rng.standard_normal((2, 3, D))
    return norm, lin, drop, x, dy


def _run_sublayer(norm, lin, drop, x, dy, norm_first):
    y, cache = sublayer_forward(x, lin.forward, norm, drop, norm_first)
    dx, _ = sublayer_backward(dy, cache, lambda d, c: (lin.backward(d, c), None), norm, drop, norm_first)
    return y, dx


@formula("pre-ln", lesson="5", section=3, title="The residual sub-layer, pre-LN",
         latex=r"""
y = x + f\big(\operatorname{LN}(x)\big), \qquad
\frac{\partial L}{\partial x} = dy + J_{\operatorname{LN}}^\top J_f^\top\, dy""",
         computes=("minitf.blocks.sublayer_forward", "minitf.blocks.sublayer_backward"),
         note="The residual path passes dy to the input unchanged, whatever f does: the gradient's highway "
              "(Lesson 5 §1). J are Jacobians; f is a linear layer in the check (x W + b, so J_fᵀ dy = dy Wᵀ), "
              "J_LN the LayerNorm Jacobian above. Pre-LN needs one more LayerNorm after the last block. minitf, like "
              "`torch.nn.Transformer`, gives each stack that final norm (`encoder_norm`, `decoder_norm`) in both "
              "arrangements, so a minitf post-LN stack normalises twice at its top, which the 2017 model does "
              "not (Lesson 5 §3); Lesson 6's parameter count includes it either way.")
def check_pre_ln(rng):
    norm, lin, drop, x, dy = _sublayer_example(rng)
    g, b, W = norm.params["gamma"], norm.params["beta"], lin.params["W"]
    h, x_hat, rstd = layer_norm(x, g, b)
    y = x + h @ W + lin.params["b"]
    dx = dy + _vjp(layer_norm_jacobian(x_hat, rstd, g), dy @ W.T)
    my, mdx = _run_sublayer(norm, lin, drop, x, dy, norm_first=True)
    return [compare("y", y, my), compare("dx", dx, mdx)]


@formula("post-ln", lesson="5", section=3, title="The residual sub-layer, post-LN",
         latex=r"""
z = x + f(x), \quad y = \operatorname{LN}(z), \qquad
dz = J_{\operatorname{LN}}^\top\, dy, \qquad \frac{\partial L}{\partial x} = dz + J_f^\top\, dz""",
         computes=("minitf.blocks.sublayer_forward", "minitf.blocks.sublayer_backward"),
         note="The 2017 arrangement: a LayerNorm sits on the stream after every addition, so the gradient "
              "crosses one LayerNorm backward per sub-layer on its way down. On Lesson 5 §3's task, at a "
              "deliberately high learning rate and on two seeds, it needed warm-up more than pre-LN did: far "
              "more by held-out loss, less clearly by token accuracy. (minitf's post-LN stacks keep the final "
              "norm of pre-LN: see above.)")
def check_post_ln(rng):
    norm, lin, drop, x, dy = _sublayer_example(rng)
    g, b, W = norm.params["gamma"], norm.params["beta"], lin.params["W"]
    y, z_hat, rstd = layer_norm(x + x @ W + lin.params["b"], g, b)
    dz = _vjp(layer_norm_jacobian(z_hat, rstd, g), dy)
    my, mdx = _run_sublayer(norm, lin, drop, x, dy, norm_first=False)
    return [compare("y", y, my), compare("dx", dz + dz @ W.T, mdx)]


@formula("dropout", lesson="5", section=1, title="Inverted dropout",
         latex=r"""
y = \frac{m \odot x}{1 - p}, \quad m_i \sim \operatorname{Bernoulli}(1 - p), \qquad dx = \frac{m \odot dy}{1 - p}""",
         computes=("minitf.layers.dropout.Dropout.forward", "minitf.layers.dropout.Dropout.backward"),
         note="In training only (the identity in evaluation); on each residual branch, "
              "y = x + Dropout(f(LN(x))), on the feed-forward network's hidden layer, and on the sum of the "
              "embeddings and the positions. The survivors are scaled by 1/(1 − p), so that the mean of Dropout(x) "
              "is x. The check reads the "
              "draw m from minitf's cache.")
def check_dropout(rng):
    p = 0.25
    drop = Dropout(p, rng=rng)
    x, dy = rng.standard_normal((4, 50)), rng.standard_normal((4, 50))
    y, mask = drop.forward(x)
    m = (mask != 0).astype(float)
    return [compare("y", m * x / (1 - p), y), compare("dx", m * dy / (1 - p), drop.backward(dy, mask)),
            compare("mask values in {0, 1/(1-p)}", np.where(m == 1, 1 / (1 - p), 0.0), mask)]


def _ffn_formula(ff, x, act):
    l1, l2 = ff.linear1.params, ff.linear2.params
    return act(x @ l1["W"] + l1["b"]) @ l2["W"] + l2["b"]


def _gelu(a):
    return a * 0.5 * (1.0 + np.vectorize(math.erf)(a / math.sqrt(2.0)))


def _gelu_tanh(a):
    return 0.5 * a * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a ** 3)))


@formula("ffn", lesson="5", section=4, title="The feed-forward network",
         latex=r"""
\operatorname{FFN}(x) = \operatorname{act}\!\left(x W_1 + b_1\right) W_2 + b_2,
\qquad (B, T, D) \to (B, T, F) \to (B, T, D)""",
         computes="minitf.layers.feedforward.FeedForward.forward",
         note="The same weights at every position, each position on its own; F is usually 4D, and the FFN "
              "holds 2DF + F + D parameters: most of an encoder block's, about half of a decoder block's "
              "(which has a second attention).")
def check_ffn(rng):
    x = rng.standard_normal((2, 3, 6))
    out = []
    for name, act in (("relu", lambda a: np.maximum(0.0, a)), ("gelu_tanh", _gelu_tanh)):
        ff = FeedForward(6, 24, name, rng=rng, dtype=np.float64)
        out.append(compare(f"FFN(x), {name}", _ffn_formula(ff, x, act), ff.forward(x)[0]))
    return out


@formula("relu", lesson="5", section=4, title="ReLU",
         latex=r"\operatorname{ReLU}(a) = \max(0, a), \qquad \frac{d}{da}\operatorname{ReLU}(a) = \mathbb{1}[a > 0]",
         computes=("minitf.layers.activations.relu_forward", "minitf.layers.activations.relu_backward"),
         note="An exact zero derivative for every negative input: a unit negative for every input passes no gradient.")
def check_relu(rng):
    a, dy = rng.standard_normal(50), rng.standard_normal(50)
    return [compare("ReLU(a)", np.maximum(0.0, a), relu_forward(a)[0]),
            compare("dy ReLU'(a)", dy * (a > 0), relu_backward(dy, a))]


@formula("gelu", lesson="5", section=4, title="GELU",
         latex=r"""
\operatorname{GELU}(a) = a\, \Phi(a),
\quad \Phi(a) = \tfrac{1}{2}\left(1 + \operatorname{erf}\!\big(a / \sqrt{2}\big)\right), \qquad
\frac{d}{da}\operatorname{GELU}(a) = \Phi(a) + a\, \varphi(a), \quad \varphi(a) = \frac{e^{-a^2/2}}{\sqrt{2\pi}}""",
         computes=("minitf.layers.activations.gelu_forward", "minitf.layers.activations.gelu_backward"),
         note="Φ and φ are the standard normal's distribution function and density (BERT's and GPT's activation).")
def check_gelu(rng):
    a, dy = rng.standard_normal(40) * 2, rng.standard_normal(40)
    Phi = 0.5 * (1.0 + np.vectorize(math.erf)(a / math.sqrt(2.0)))
    phi = np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    dx = dy * (Phi + a * phi)
    return [compare("GELU(a)", a * Phi, gelu_forward(a)[0]), compare("dy GELU'(a)", dx, gelu_backward(dy, a)),
            finite_differences("dy GELU'(a)", dx, lambda: float(np.sum(_gelu(a) * dy)), a)]


@formula("gelu-tanh", lesson="5", section=4, title="GELU, tanh approximation",
         latex=r"""
\operatorname{GELU}_{\tanh}(a) = \tfrac{1}{2}\, a \left(1 + \tanh u\right),
\quad u = \sqrt{2/\pi}\,\big(a + 0.044715\, a^3\big), \qquad
\frac{d}{da}\operatorname{GELU}_{\tanh}(a) = \tfrac{1}{2}(1 + \tanh u) + \tfrac{1}{2}\, a \left(1 - \tanh^2 u\right)
\sqrt{2/\pi}\,\big(1 + 3 \cdot 0.044715\, a^2\big)""",
         computes=("minitf.layers.activations.gelu_tanh_forward", "minitf.layers.activations.gelu_tanh_backward"),
         note="GPT-2's form, within 5·10⁻⁴ of the exact GELU and much faster in NumPy (no erf ufunc).")
def check_gelu_tanh(rng):
    a, dy = rng.standard_normal(40) * 2, rng.standard_normal(40)
    u = math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)
    du_da = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * a * a)
    dx = dy * (0.5 * (1 + np.tanh(u)) + 0.5 * a * (1 - np.tanh(u) ** 2) * du_da)
    return [compare("GELU_tanh(a)", _gelu_tanh(a), gelu_tanh_forward(a)[0]),
            compare("dy GELU_tanh'(a)", dx, gelu_tanh_backward(dy, a)),
            finite_differences("dy GELU_tanh'(a)", dx, lambda: float(np.sum(_gelu_tanh(a) * dy)), a)]


@formula("sinusoidal-positions", lesson="5", section=5, title="Sinusoidal positions",
         latex=r"""
P_{t,\,2i} = \sin\!\left(\frac{t}{10000^{2i/D}}\right),
\qquad P_{t,\,2i+1} = \cos\!\left(\frac{t}{10000^{2i/D}}\right), \qquad
P_t \cdot P_{t+k} = \sum_{i} \cos\!\left(\frac{k}{10000^{2i/D}}\right)""",
         computes="minitf.layers.positional.sinusoidal_table",
         note="Added to the embeddings, x_t ← x_t + P_t. The dot product of two rows depends only on their "
              "distance k (sin a sin b + cos a cos b = cos(a − b)), for even D.")
def check_sinusoidal(rng):
    out = [compare(f"P (D={D})", sinusoidal(20, D), sinusoidal_table(20, D)) for D in (8, 7)]
    table, k = sinusoidal_table(20, 8), 3
    dots = np.einsum("td,td->t", table[:-k], table[k:])  # P_t . P_{t+k} for every t
    expected = np.cos(k / 10000.0 ** (np.arange(0, 8, 2) / 8)).sum()
    out.append(compare("P_t · P_{t+3}, every t", np.full_like(dots, expected), dots))
    return out


@formula("warmup-schedules", lesson="5", section=3, title="Learning-rate warm-up",
         latex=r"""
\begin{aligned}
\text{warm-up + cosine:}\quad \gamma(n) &= \begin{cases}
\gamma_{\max}\, n / w & n \le w \\
\gamma_{\min} + (\gamma_{\max} - \gamma_{\min})\,
\tfrac{1}{2}\big(1 + \cos(\pi\, \tfrac{n - w}{N - w})\big) & w < n \le N \\
\gamma_{\min} & n > N \end{cases} \\
\text{Noam:}\quad \gamma(n) &= c\, D^{-1/2} \min\!\big(n^{-1/2},\ n\, w^{-3/2}\big)
\end{aligned}""",
         computes=("minitf.schedules.WarmupCosine.lr_at", "minitf.schedules.Noam.lr_at"),
         note="n counts updates from 1, w warm-up steps, N the total. Noam is the schedule of the 2017 paper: "
              "a linear rise for w steps, then decay as n^{−1/2}.")
def check_warmup(rng):
    n = np.arange(1, 301)
    lr, lr_min, w, N, D, c = 3e-3, 1e-4, 30, 250, 64, 2.0
    cosine = np.where(n <= w, lr * n / w,
                      np.where(n > N, lr_min, lr_min + (lr - lr_min) * 0.5 * (1 + np.cos(np.pi * (n - w) / (N - w)))))
    noam = c * D ** -0.5 * np.minimum(n ** -0.5, n * w ** -1.5)
    wc, nm = WarmupCosine(lr, w, N, lr_min), Noam(D, w, c)
    return [compare("warm-up + cosine", cosine, [wc(s) for s in n]), compare("Noam", noam, [nm(s) for s in n])]
