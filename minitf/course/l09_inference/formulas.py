"""Lesson 9's formulas: the two KV caches, temperature, top-k and top-p, beam search's
length-normalised score; the pointer-generator's mixture and p_gen, the coverage vector, the
coverage loss and GNMT's coverage penalty (section 5); scheduled sampling's input mixing
(section 6)."""
from __future__ import annotations


import numpy as np

from ...attention import MultiHeadAttention
from ...decoding import LayerKV, coverage_penalty, init_cache, length_normalized_score, top_k_filter, top_p_filter, \
    warp_logits
from ...models import EncoderDecoder
from ...models.copy_mechanism import CopyHead, Coverage, coverage_loss, coverage_vector
from ...models.pointer_generator import PointerGenerator
from ...scheduled_sampling import mix_decoder_inputs, own_previous_tokens
from ..kit.formulas import (attention, compare, finite_differences, formula, from_heads, lesson_intro, random_ids,
                            softmax_rows, tiny_config, to_heads)

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
p = \operatorname{softmax}(z / \tau), \qquad \frac{p_i}{p_j} = \left(\frac{\hat p_i}{\hat p_j}\right)^{1/\tau}""",
         computes="minitf.decoding.processors.warp_logits",
         note="τ is the temperature (Lesson 9 writes T; here τ, since T is the target length), p̂ = softmax(z) "
              "the model's own distribution. τ < 1 sharpens the distribution towards the argmax (τ = 0.5 squares "
              "the odds between any two tokens), τ > 1 flattens it; no token is removed. Greedy decoding takes "
              "argmax z.")
def check_temperature(rng):
    z = rng.standard_normal((3, 9)) * 2
    return [compare(f"softmax(z / {tau})", softmax_rows(z / tau), softmax_rows(warp_logits(z, temperature=tau)))
            for tau in (0.5, 2.0)]


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


# ---- section 5: copy and coverage (the pointer-generator) ------------------------------------------
def _sigma(z):
    return 1.0 / (1.0 + np.exp(-z))


@formula("pointer-generator", lesson="9", section=5, title="The pointer-generator's mixture and p_gen",
         latex=r"""
\begin{aligned}
h^*_t &= \sum_i a_{t,i}\, H_{\text{enc},i}, \qquad
a_t = \frac{1}{H} \sum_{h=1}^{H} A^{(L_{\text{dec}}, h)}_{t} \quad \text{(the last block's cross-attention, mean over heads)} \\
p_{\text{gen}} &= \sigma\!\left(w_h \cdot h^*_t + w_s \cdot s_t + w_x \cdot x_t + b_{\text{ptr}}\right) \\
P(w) &= p_{\text{gen}}\, P_{\text{vocab}}(w) + (1 - p_{\text{gen}}) \sum_{i:\, x_i = w} a_{t,i},
\qquad P_{\text{vocab}} = \operatorname{softmax}(H_{\text{dec}} W_U)
\end{aligned}""",
         computes=("minitf.models.copy_mechanism.CopyHead.forward", "minitf.models.copy_mechanism.scatter_add",
                   "minitf.models.pointer_generator.PointerGenerator.decode"),
         note="See et al. 2017. w runs over the extended vocabulary: the V output tokens, then the example's "
              "source-only tokens (V + j); P_vocab is 0 on those. The sum over i is a scatter-add: a token at two "
              "source positions collects both weights. s_t is the decoder state the head reads, x_t the decoder's "
              "input (the first block's).")
def check_pointer_generator(rng):
    B, T, S, D, V, V_ext = 2, 3, 5, 4, 6, 9
    head = CopyHead(D, rng=rng, dtype=np.float64)
    p = head.params
    logits, context, s, x = (rng.standard_normal(shape) for shape in ((B, T, V), (B, T, D), (B, T, D), (B, T, D)))
    a = softmax_rows(rng.standard_normal((B, T, S)))  # (B, T, S) rows sum to 1
    src_ext = np.array([[1, 7, 1, 8, 2], [6, 6, 3, 0, 8]])  # (B, S) repeats, and source-only ids >= V
    p_gen = _sigma(context @ p["w_h"] + s @ p["w_s"] + x @ p["w_x"] + p["b_ptr"])  # (B, T)
    P = np.zeros((B, T, V_ext))
    P[..., :V] = p_gen[..., None] * softmax_rows(logits)
    for b in range(B):
        for i in range(S):  # every source position adds its weight to its token
            P[b, :, src_ext[b, i]] += (1 - p_gen[b]) * a[b, :, i]
    got, cache = head.forward(logits, context, s, x, a, src_ext, V_ext)
    out = [compare("P(w)", P, got), compare("p_gen", p_gen, cache.p_gen),
           compare("sum_w P(w)", np.ones((B, T)), got.sum(-1))]

    c = tiny_config(n_decoder_layers=2, src_vocab_size=13, tgt_vocab_size=11)
    model = PointerGenerator(c, coverage=False).eval()
    src = random_ids(rng, 2, 5, c.src_vocab_size)  # ids >= 11 are source-only
    dec_in = random_ids(rng, 2, 4, c.tgt_vocab_size)
    H_enc, _ = model.encode(src)
    P_model, dec = model.decode(dec_in, H_enc, model.source_mask(src), source=model.extend_source(src))
    a_model = dec.copy.a  # (B, T, S) the copy attention the model used
    A_last = dec.stack.layers[-1].cross_attn.f.attn.A  # (B, H, T, S) the last block's cross-attention weights
    out += [compare("a_t = mean_h A_t (last block)", A_last.mean(axis=1), a_model),
            compare("h*_t = sum_i a_t,i H_enc,i", a_model @ H_enc, dec.copy.context),
            compare("sum_w P(w), the model", np.ones(P_model.shape[:2]), P_model.sum(-1))]
    return out


@formula("coverage", lesson="9", section=5, title="The coverage vector, and coverage in the copy attention",
         latex=r"""
c_t = \sum_{t' < t} a_{t'}, \quad c_0 = 0, \qquad
A^{(h)}_t = \operatorname{softmax}\!\left(\frac{q^{(h)}_t K^{(h)\top}}{\sqrt{D_h}} + M + w_{c,h}\, c_t\right), \qquad
a_t = \frac{1}{H} \sum_h A^{(h)}_t""",
         computes=("minitf.models.copy_mechanism.coverage_vector", "minitf.models.copy_mechanism.Coverage.forward"),
         note="c_t,i: how much copy attention source position i has received before step t. See et al. add "
              "w_c c_t,i inside the attention score; here one weight per head of the last block's cross-attention, "
              "so the rows are computed one position after the other (each needs the coverage of the rows before).")
def check_coverage(rng):
    B, H, T, S = 2, 3, 4, 5
    a = softmax_rows(rng.standard_normal((B, T, S)))
    c = np.zeros_like(a)
    for t in range(1, T):
        c[:, t] = c[:, t - 1] + a[:, t - 1]
    out = [compare("c_t", c, coverage_vector(a))]
    cov = Coverage(H, dtype=np.float64)
    cov.params["w_c"][...] = rng.standard_normal(H)
    scores = rng.standard_normal((B, H, T, S))  # (B, H, T, S) scaled and masked already
    A = np.empty_like(scores)
    c_run = np.zeros((B, S))
    for t in range(T):
        A[:, :, t] = softmax_rows(scores[:, :, t] + cov.params["w_c"][None, :, None] * c_run[:, None, :])
        c_run = c_run + A[:, :, t].mean(axis=1)
    out.append(compare("A_t with w_c c_t", A, cov.forward(scores)))
    return out


@formula("coverage-loss", lesson="9", section=5, title="The coverage loss",
         latex=r"""
L_{\text{cov}} = \frac{\lambda}{m} \sum_{t\ \text{real}} \sum_{i=1}^{S} \min\!\left(a_{t,i},\, c_{t,i}\right)""",
         computes="minitf.models.copy_mechanism.coverage_loss",
         note="See et al.'s: it penalises attending again where attention already went (min(a, c) is large only "
              "where both are), added to the mixture's negative log-likelihood; m real target positions, λ = 1 in "
              "Lesson 9. Its gradient reaches a_t twice: through the min, and through every later c.")
def check_coverage_loss(rng):
    B, T, S, lam = 2, 4, 5, 0.7
    a = softmax_rows(rng.standard_normal((B, T, S)))
    labels = np.ones((B, T), dtype=np.int64)
    labels[1, 3] = -100  # a padding position: no loss
    real = labels != -100
    c = np.concatenate([np.zeros((B, 1, S)), np.cumsum(a, axis=1)[:, :-1]], axis=1)
    expected = lam * (np.minimum(a, c).sum(-1) * real).sum() / real.sum()
    loss, da = coverage_loss(a, labels, lam)
    return [compare("L_cov", expected, loss),
            finite_differences("dL_cov/da", da, lambda: coverage_loss(a, labels, lam)[0], a, tol=1e-7)]


@formula("coverage-penalty", lesson="9", section=5, title="GNMT's coverage penalty",
         latex=r"""
\operatorname{cp}(y) = \beta \sum_{i=1}^{S} \log \min\!\left(c_i,\, 1\right), \qquad
c_i = \sum_{t=1}^{|y|} a_{t,i}""",
         computes="minitf.decoding.beam.coverage_penalty",
         note="Wu et al. 2016, added to a finished hypothesis's score in beam search: 0 once every real source "
              "position has received a total weight of at least 1, more negative the more of the source is left "
              "unread. Padding positions are left out of the sum.")
def check_coverage_penalty(rng):
    coverage = rng.random((3, 6)) * 1.6 + 0.05  # (N, S) some above 1
    src_real = np.ones((3, 6), dtype=bool)
    src_real[2, 4:] = False  # padding
    beta = 0.2
    expected = beta * (np.log(np.minimum(coverage, 1.0)) * src_real).sum(-1)
    return [compare("cp", expected, coverage_penalty(coverage, src_real, beta))]


# ---- section 6: scheduled sampling for a transformer ---------------------------------------------------
@formula("scheduled-sampling-mix", lesson="9", section=6, title="Scheduled sampling's input mixing (two passes)",
         latex=r"""
\hat y_{t} = \arg\max_w\, z^{(1)}_{t}(w) \ \ \text{(pass 1, gold inputs, no gradient)}, \qquad
\tilde x_t = \begin{cases} y_{t-1} & u_t < \varepsilon_i \ \text{ or } t = 0 \ \text{ or } y_{t-1} = \texttt{<pad>} \\
\hat y_{t-1} & \text{otherwise} \end{cases}, \qquad u_t \sim U(0, 1)""",
         computes=("minitf.scheduled_sampling.own_previous_tokens", "minitf.scheduled_sampling.mix_decoder_inputs"),
         note="Mihaylova & Martins 2019. Pass 2 is the ordinary teacher-forced step on the mixed inputs x̃, scored "
              "on the gold labels y_t. Position t is offered the prediction made at t − 1 (the token a free-running "
              "decoder would feed there; ŷ_t itself would be position t's own answer). ε_i, the probability of the "
              "gold token at update i, falls by Lesson 1's schedules (formula scheduled-sampling-decay).")
def check_scheduled_sampling_mix(rng):
    B, T, pad = 3, 6, 0
    gold = rng.integers(3, 9, size=(B, T))  # (B, T) decoder inputs: <bos> = 1, then y_1 .. y_{T-1}
    gold[:, 0] = 1
    gold[2, 4:] = pad  # a shorter target: padding stays padding
    predictions = rng.integers(3, 9, size=(B, T))  # (B, T) pass 1's argmax at each position
    coins = rng.random((B, T)) < 0.5  # True: keep the gold input
    expected = gold.copy()
    for b in range(B):
        for t in range(1, T):
            if not coins[b, t] and gold[b, t] != pad:
                expected[b, t] = predictions[b, t - 1]
    expected_gold = coins.copy()  # where the gold input is fed: the coin, position 0, padding
    expected_gold[:, 0] = True
    expected_gold |= gold == pad
    own = own_previous_tokens(predictions, gold)
    fed, kept = mix_decoder_inputs(gold, own, coins, pad)
    return [compare("x̃ (pass 2's inputs)", expected, fed, tol=0),
            compare("where the gold input is fed", expected_gold, kept, tol=0)]
