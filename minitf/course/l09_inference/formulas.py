"""Lesson 9's formulas: the two KV caches, temperature, top-k and top-p, and beam search's
length-normalised score."""
from __future__ import annotations


import numpy as np

from ...attention import MultiHeadAttention
from ...decoding import LayerKV, init_cache, length_normalized_score, top_k_filter, top_p_filter, warp_logits
from ...models import EncoderDecoder
from ..kit.formulas import (attention, compare, formula, from_heads, lesson_intro, random_ids, softmax_rows,
                            tiny_config, to_heads)

lesson_intro("9", """
Inference (`minitf/decoding/`): z are the logits (V,) of one decoding step, N = B·G the rows decoded
(G beams or samples per example), T_max the cache's capacity.
""")


@formula("kv-cache", lesson="9", section=2, title="The two KV caches",
         latex=r"""
\begin{aligned}
K_{\le t} &= \begin{bmatrix} K_{< t} \\ x_t W_k + b_k \end{bmatrix}, \quad
V_{\le t} = \begin{bmatrix} V_{< t} \\ x_t W_v + b_v \end{bmatrix}, \qquad
o_t = \operatorname{softmax}\!\left(\frac{q_t K_{\le t}^\top}{\sqrt{D_h}}\right) V_{\le t} \\
K_{\text{cross}} &= H_{\text{enc}} W_k^{c} + b_k^{c}, \quad V_{\text{cross}} = H_{\text{enc}} W_v^{c} + b_v^{c}
\quad \text{(once per example, every layer)} \\
\text{bytes} &= q\,\big(2 L_{\text{dec}} N H\, T_{\max} D_h\ [\text{self}] +
2 L_{\text{dec}} B H S D_h\ [\text{cross}]\big)
\end{aligned}""",
         computes=("minitf.attention.SelfAttentionKV.queries_keys_values",
                   "minitf.models.encoder_decoder.EncoderDecoder.init_cache", "minitf.kv_cache.KVCache.nbytes"),
         note="The self-attention cache grows by one row per step; step t computes only its own query, key "
              "and value and attends over the rows kept, which the causal mask keeps from ever changing. The "
              "cross-attention keys and values depend on H_enc alone.")
def check_kv_cache(rng):
    N, T, D, H = 2, 5, 8, 2
    attn = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    p = attn.params
    for name in ("b_q", "b_k", "b_v", "b_o"):
        p[name][...] = rng.standard_normal(D)
    x = rng.standard_normal((N, T, D))
    kv = LayerKV(np.zeros((N, H, T, D // H)), np.zeros((N, H, T, D // H)), None, None)
    ys, expected = [], []
    for t in range(T):
        x_t = x[:, t:t + 1]  # (N, 1, D) the newest position
        ys.append(attn.forward(x_t, x_t, None, kv=kv.self_attention(t))[0])
        K, V = to_heads(x[:, :t + 1] @ p["W_k"] + p["b_k"], H), to_heads(x[:, :t + 1] @ p["W_v"] + p["b_v"], H)
        q = to_heads(x[:, t:t + 1] @ p["W_q"] + p["b_q"], H)
        expected.append(from_heads(attention(q, K, V)[0]) @ p["W_o"] + p["b_o"])
    out = [compare("y_t, every step", np.concatenate(expected, 1), np.concatenate(ys, 1)),
           compare("K_self after T steps", to_heads(x @ p["W_k"] + p["b_k"], H), kv.K_self)]

    c = tiny_config(n_decoder_layers=2)
    model = EncoderDecoder(c).eval()
    src = random_ids(rng, 3, 5, c.src_vocab_size)
    H_enc, _ = model.encode(src)
    cache = init_cache(model, H_enc, model.source_mask(src), group_size=2, max_len=7)
    for l, (layer, kv) in enumerate(zip(model.decoder_layers, cache.layers)):
        pc = layer.cross_attn.params
        out.append(compare(f"K_cross, layer {l + 1}", to_heads(H_enc @ pc["W_k"] + pc["b_k"], c.n_heads), kv.K_cross))
    Dh, L, B, S, N, q = c.d_model // c.n_heads, c.n_decoder_layers, 3, 5, 3 * 2, 8
    nbytes = cache.nbytes()
    out += [compare("self-attention bytes", q * 2 * L * N * c.n_heads * cache.capacity * Dh,
                    nbytes["self_attention_allocated"], tol=0),
            compare("cross-attention bytes", q * 2 * L * B * c.n_heads * S * Dh, nbytes["cross_attention"], tol=0)]
    return out


@formula("temperature", lesson="9", section=3, title="Sampling with a temperature",
         latex=r"""
p = \operatorname{softmax}(z / T), \qquad \frac{p_i}{p_j} = \left(\frac{\hat p_i}{\hat p_j}\right)^{1/T}""",
         computes="minitf.decoding.processors.warp_logits",
         note="T < 1 sharpens the distribution towards the argmax (T = 0.5 squares the odds between any two "
              "tokens), T > 1 flattens it; no token is removed. Greedy decoding takes argmax z.")
def check_temperature(rng):
    z = rng.standard_normal((3, 9)) * 2
    return [compare(f"softmax(z / {T})", softmax_rows(z / T), softmax_rows(warp_logits(z, temperature=T)))
            for T in (0.5, 2.0)]


@formula("top-k", lesson="9", section=3, title="Top-k filtering",
         latex=r"""
\tilde z_i = \begin{cases} z_i & z_i \ge z_{(k)} \\ -\infty & \text{otherwise} \end{cases},
\qquad z_{(k)} = \text{the } k\text{-th largest logit}""",
         computes="minitf.decoding.processors.top_k_filter",
         note="Keeps the k likeliest tokens (and any tied with the k-th); softmax(z̃) renormalises them.")
def check_top_k(rng):
    z = rng.standard_normal((4, 10))
    out = []
    for k in (1, 3):
        kth = -np.sort(-z, axis=-1)[:, k - 1:k]
        out.append(compare(f"z̃ (k = {k})", np.where(z >= kth, z, -np.inf), top_k_filter(z, k)))
    return out


@formula("top-p", lesson="9", section=3, title="Top-p (nucleus) filtering",
         latex=r"""
p_{(1)} \ge p_{(2)} \ge \dots \ge p_{(V)}, \qquad \text{keep token } (i) \iff \sum_{j < i} p_{(j)} < p""",
         computes="minitf.decoding.processors.top_p_filter",
         note="The smallest set of likeliest tokens whose probability mass reaches p; how many that is depends "
              "on how confident the model is at this step. The likeliest token always stays.")
def check_top_p(rng):
    z = rng.standard_normal((4, 10)) * 1.5
    out = []
    for top_p in (0.5, 0.9):
        probs = softmax_rows(z)
        order = np.argsort(-probs, axis=-1)
        above = np.cumsum(np.take_along_axis(probs, order, -1), -1) - np.take_along_axis(probs, order, -1)
        keep = np.empty_like(above, dtype=bool)
        np.put_along_axis(keep, order, above < top_p, axis=-1)
        out.append(compare(f"z̃ (p = {top_p})", np.where(keep, z, -np.inf), top_p_filter(z, top_p)))
    return out


@formula("length-normalization", lesson="9", section=4, title="Beam search's length-normalised score",
         latex=r"""
\log P(y \mid x) = \sum_{t=1}^{|y|} \log p(y_t \mid y_{<t}, x), \qquad
\operatorname{score}(y) = \frac{\log P(y \mid x)}{|y|^{\alpha}}
\ \ \text{or (GNMT)}\ \ \frac{\log P(y \mid x)}{\big((5 + |y|)/6\big)^{\alpha}}""",
         computes="minitf.decoding.beam.length_normalized_score",
         note="|y| counts the generated tokens with `<eos>`; α = 0 ranks by the plain sum (short outputs win), "
              "α = 1 by the mean log-prob per token (Hugging Face's `length_penalty`); GNMT is Wu et al. 2016's form.")
def check_length_normalization(rng):
    logp = -rng.random(20) * 20
    n = rng.integers(1, 15, size=20)
    out = []
    for alpha in (0.0, 1.0, 2.5):
        out.append(compare(f"score (α = {alpha})", logp / n ** alpha, length_normalized_score(logp, n, alpha)))
        out.append(compare(f"GNMT score (α = {alpha})", logp / ((5 + n) / 6) ** alpha,
                           length_normalized_score(logp, n, alpha, style="gnmt")))
    return out
