"""Lesson 2 (*Attention from scratch*): the runs and the measurements.

Everything the notebook prints and the figures (:mod:`minitf.course.l02_attention.figures`) draw is
computed here, from minitf's own attention (:mod:`minitf.attention`, and Lesson 1's additive
attention, :mod:`minitf.rnn.attention`) and softmax (:mod:`minitf.layers.softmax`).  Shapes in
the course's letters (:mod:`minitf`).

======================================  ===================================================
section of Lesson 2                     what is measured here
======================================  ===================================================
1  queries, keys and values             :func:`score_contrast` (Lesson 1's additive score,
                                        minitf's ``AdditiveAttention``, against the dot
                                        product), :func:`content_lookup`
2  scaled dot-product attention         :func:`score_variance`, :func:`saturation`
3  the softmax and its backward         :func:`softmax_jacobian`, :func:`softmax_backward_check`,
                                        :func:`naive_softmax`, :func:`overflow_demo`
4  the attention backward               :func:`attention_backward_check` (every line's
                                        result, read by name from minitf's backward),
                                        :func:`forgotten_scale_error`
5  many heads                           :func:`heads_by_loop`, :func:`lesson2_run`,
                                        :func:`head_patterns`
======================================  ===================================================
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...attention import MultiHeadAttention, scaled_dot_product_attention, scaled_dot_product_attention_backward
from ...config import ModelConfig
from ...gradcheck import numerical_gradient, rel_error
from ...layers.linear import affine_forward
from ...layers.softmax import softmax, softmax_backward
from ...models import EncoderDecoder
from ...data.tasks import Task, get_task
from ...rnn.attention import AdditiveAttention
from ...training import History, TrainConfig, token_accuracy
from ..kit.runs import lesson_model_config, lesson_train_config, once_per_process, train_fresh

__all__ = [
    "ScoreContrast", "score_contrast", "Lookup", "content_lookup",
    "DIMS", "SCALES", "score_variance", "Saturation", "saturation",
    "softmax_jacobian", "SoftmaxCheck", "softmax_backward_check", "naive_softmax", "overflow_demo",
    "LineCheck", "LINES", "attention_backward_check", "forgotten_scale_error",
    "heads_by_loop", "SEQ_LEN", "EVAL_SIZE", "lesson2_task", "lesson2_model_config", "lesson2_train_config",
    "Lesson2Run", "lesson2_run", "HeadPattern", "ATTENTIONS", "head_patterns",
]


# =====================================================================================
# 1. Queries, keys and values
# =====================================================================================
class ScoreContrast(NamedTuple):
    """Both scores of the same queries and keys (:func:`score_contrast`)."""

    Q: np.ndarray  # (T, d)
    K: np.ndarray  # (S, d)
    additive: np.ndarray  # (T, S)  v_a . tanh(q W_a + k U_a), minitf's AdditiveAttention.score
    dot: np.ndarray  # (T, S)       q . k / sqrt(d)
    additive_weights: np.ndarray  # (T, S) softmax over the keys
    dot_weights: np.ndarray  # (T, S)
    additive_params: int  # W_a, U_a, v_a: the score's own parameters
    additive_hidden: int  # numbers of the (T, S, A) hidden tensor
    dot_products: int  # multiply-adds of Q K^T: T * S * d
    additive_attention: AdditiveAttention  # Lesson 1's attention holding W_a, U_a, v (= v_a)


def score_contrast(seed: int = 0, T: int = 3, S: int = 5, d: int = 4, A: int = 8) -> ScoreContrast:
    """The additive score (random W_a, U_a, v_a: an untrained Lesson 1 attention) and the scaled
    dot product of one small Q (T, d) and K (S, d), and their softmax weights.

    The additive score is Lesson 1's :class:`~minitf.rnn.attention.AdditiveAttention`: the S
    keys projected once (``project_keys``), then each of the T queries scored against them
    (``score``), the queries as the batch rows and the keys broadcast to every row."""
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((T, d)), rng.standard_normal((S, d))
    W_a, U_a = rng.standard_normal((d, A)) / math.sqrt(d), rng.standard_normal((d, A)) / math.sqrt(d)
    v_a = rng.standard_normal(A) / math.sqrt(A)
    # the module's own initial weights (drawn from a generator of their own) are replaced by these
    attention = AdditiveAttention(d, d, A, rng=np.random.default_rng(seed), dtype=np.float64)
    for name, value in (("W_a", W_a), ("U_a", U_a), ("v", v_a)):
        attention.params[name][...] = value
    keys, _ = attention.project_keys(K[None])  # (1, S, d) -> (1, S, A): k_s U_a, once
    additive, _ = attention.score(Q, keys)  # (T, d) queries against (1, S, A) keys -> (T, S)
    dot = Q @ K.T / math.sqrt(d)  # (T, S)
    return ScoreContrast(Q, K, additive, dot, softmax(additive), softmax(dot),
                         attention.num_parameters(), T * S * A, T * S * d, attention)


class Lookup(NamedTuple):
    """Attention used as a soft dictionary look-up (:func:`content_lookup`)."""

    order: np.ndarray  # (T,) the key each query was made from
    weights: np.ndarray  # (T, S) attention weights
    out: np.ndarray  # (T, Dh) = weights @ V
    V: np.ndarray  # (S, Dh)


def content_lookup(seed: int = 0, S: int = 6, Dh: int = 16, noise: float = 0.3) -> Lookup:
    """Queries that are noisy copies of the keys, in a shuffled order: attention finds, for each
    query, the key it was made from by content alone (no positions anywhere).

    K, V (S, Dh) random; Q[t] = K[order[t]] + noise; minitf's scaled_dot_product_attention.
    """
    rng = np.random.default_rng(seed)
    K, V = rng.standard_normal((S, Dh)), rng.standard_normal((S, Dh))
    order = rng.permutation(S)
    Q = K[order] + noise * rng.standard_normal((S, Dh))  # (T = S, Dh)
    out, cache = scaled_dot_product_attention(Q[None, None], K[None, None], V[None, None])  # (1, 1, T, Dh)
    return Lookup(order, cache.A[0, 0], out[0, 0], V)


# =====================================================================================
# 2. Scaled dot-product attention
# =====================================================================================
DIMS = (4, 16, 64, 256, 1024)
"""Head widths Dh the lesson measures."""


SCALES = ("none", "sqrt(Dh)", "Dh")
"""What the score q . k is divided by, in the order :func:`score_variance` and
:func:`saturation` return them: nothing, sqrt(Dh) (the transformer's) and Dh (too much)."""


def score_variance(dims=DIMS, n: int = 4000, seed: int = 0) -> dict[int, tuple[float, float, float]]:
    """Dh -> (var(q . k), var(q . k / sqrt(Dh)), var(q . k / Dh)) over ``n`` pairs of q, k with
    independent N(0, 1) entries (:data:`SCALES`).  Theory: Dh, 1 and 1 / Dh."""
    rng = np.random.default_rng(seed)
    out = {}
    for Dh in dims:
        q, k = rng.standard_normal((n, Dh)), rng.standard_normal((n, Dh))
        s = np.einsum("nd,nd->n", q, k)  # (n,) one dot product per pair
        out[int(Dh)] = (float(s.var()), float((s / math.sqrt(Dh)).var()), float((s / Dh).var()))
    return out


class Saturation(NamedTuple):
    """How peaked the softmax over S keys is, averaged over query rows (:func:`saturation`)."""

    max_weight: float  # mean of the largest weight (1/S uniform, 1 one-hot)
    entropy: float  # mean entropy in nats (log S uniform, 0 one-hot)
    jacobian_norm: float  # mean Frobenius norm ||diag(p) - p p^T||_F of the softmax's Jacobian (section 3): it
    #                       bounds ||J g|| / ||g||, how much of an upstream gradient g reaches the scores (0 one-hot)
    one_hot_share: float  # share of rows whose largest weight exceeds 0.99


def _saturation_of(scores: np.ndarray) -> Saturation:
    p = softmax(scores)  # (n, S)
    entropy = -(p * np.log(np.where(p > 0, p, 1.0))).sum(-1)  # (n,) 0 log 0 = 0
    jac = np.sqrt(np.square(softmax_jacobian(p)).sum(axis=(-2, -1)))  # (n,)
    pmax = p.max(-1)
    return Saturation(float(pmax.mean()), float(entropy.mean()), float(jac.mean()), float((pmax > 0.99).mean()))


def saturation(dims=DIMS, S: int = 16, n: int = 1000, seed: int = 0) -> dict[int, tuple[Saturation, ...]]:
    """Dh -> (unscaled, scaled, over Dh): the softmax over S keys of ``n`` random queries, the
    scores q . k divided by nothing, by sqrt(Dh) and by Dh (:data:`SCALES`), q and k with
    N(0, 1) entries."""
    rng = np.random.default_rng(seed)
    out = {}
    for Dh in dims:
        Q, K = rng.standard_normal((n, Dh)), rng.standard_normal((S, Dh))
        scores = Q @ K.T  # (n, S)
        out[int(Dh)] = (_saturation_of(scores), _saturation_of(scores / math.sqrt(Dh)), _saturation_of(scores / Dh))
    return out


# =====================================================================================
# 3. The softmax and its backward
# =====================================================================================
def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """dp/dz = diag(p) - p p^T for each row: p (..., S) -> (..., S, S).  Symmetric; its rows sum to 0."""
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


class SoftmaxCheck(NamedTuple):
    """The softmax backward three ways (:func:`softmax_backward_check`)."""

    p: np.ndarray  # (S,)
    g: np.ndarray  # (S,) upstream gradient dL/dp
    by_jacobian: np.ndarray  # (S,) J^T g, an (S, S) matrix built and multiplied
    cheap: np.ndarray  # (S,) p * (g - <g, p>), minitf.layers.softmax.softmax_backward
    numerical: np.ndarray  # (S,) finite differences of L = <softmax(z), g>
    jacobian_vs_cheap: float  # rel_error
    cheap_vs_numerical: float  # rel_error
    jacobian_row_sums: float  # max |row sum of J|: 0, since the p sum to 1 whatever z


def softmax_backward_check(seed: int = 0, S: int = 6) -> SoftmaxCheck:
    """z, g random (S,); the Jacobian form, the cheap form and float64 finite differences."""
    rng = np.random.default_rng(seed)
    z, g = rng.standard_normal(S), rng.standard_normal(S)
    p = softmax(z)
    J = softmax_jacobian(p)  # (S, S)
    by_jacobian = J.T @ g
    cheap = softmax_backward(g, p)
    numerical = numerical_gradient(lambda: float(softmax(z) @ g), z)
    return SoftmaxCheck(p, g, by_jacobian, cheap, numerical, rel_error(by_jacobian, cheap),
                        rel_error(cheap, numerical), float(np.abs(J.sum(-1)).max()))


def naive_softmax(z: np.ndarray) -> np.ndarray:
    """exp(z) / sum exp(z) *without* subtracting the max: the version that overflows (for the
    lesson's contrast only; minitf's :func:`~minitf.layers.softmax.softmax` subtracts it)."""
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def overflow_demo(z=(1000.0, 999.0, 998.0)) -> dict[str, np.ndarray]:
    """The naive and minitf softmax of the same scores, in float64 and float32; the naive one in
    float32 already fails at scores of 89 (exp(89) > float32's largest, 3.4e38)."""
    z64 = np.asarray(z, dtype=np.float64)
    z_small32 = np.asarray(z, dtype=np.float32) - np.float32(z64.max() - 89.0)  # the same gaps, max 89
    with np.errstate(over="ignore", invalid="ignore"):
        return {
            "naive float64": naive_softmax(z64),
            "minitf float64": softmax(z64.copy()),
            "naive float32, max score 89": naive_softmax(z_small32),
            "minitf float32, max score 89": softmax(z_small32.copy()),
        }


# =====================================================================================
# 4. The attention backward, line by line
# =====================================================================================
class LineCheck(NamedTuple):
    """One line of minitf's attention backward against references (:func:`attention_backward_check`).

    The line's value is the one minitf's backward returns by name, so both references check
    minitf itself (there is no second copy of the backward to compare it with)."""

    line: str  # the formula
    numerical: float  # rel_error against float64 finite differences
    torch: float | None  # rel_error against torch autograd (None: torch not installed)


LINES = {  # the backward's named results (AttentionGrads) -> the line as the lesson writes it,
    #        P = softmax(S) being the weights the library calls A, S the scores
    "dV": "dV = P^T dO",
    "dA": "dP = dO V^T",
    "dscores": "dS = P * (dP - rowsum(dP * P))",
    "dQ": "dQ = dS K / sqrt(Dh)",
    "dK": "dK = dS^T Q / sqrt(Dh)",
}


def _torch_grads(Q, K, V, G) -> dict[str, np.ndarray] | None:
    try:
        import torch
    except ImportError:
        return None
    q, k, v = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (Q, K, V))
    s = q @ k.transpose(-1, -2) / math.sqrt(Q.shape[-1])  # the scores S, scaled
    s.retain_grad()
    p = torch.softmax(s, dim=-1)
    p.retain_grad()
    (p @ v * torch.tensor(G)).sum().backward()
    # torch's s.grad is dL/d(scaled scores); minitf's dscores is the same quantity
    return {"dV": v.grad.numpy(), "dA": p.grad.numpy(), "dscores": s.grad.numpy(),
            "dQ": q.grad.numpy(), "dK": k.grad.numpy()}


def attention_backward_check(seed: int = 0, B: int = 2, H: int = 2, T: int = 3, S: int = 4,
                             Dh: int = 5) -> dict[str, LineCheck]:
    """Every line of the attention backward, on random float64 Q, K, V and a random upstream
    gradient G (L = sum(out * G)), against finite differences of L with respect to that line's
    variable (V, P, S, Q, K: P and S perturbed as free inputs of the rest of the forward) and
    torch autograd where installed.

    Each line's value is the result minitf's
    :func:`~minitf.attention.scaled_dot_product_attention_backward` returns by name
    (:class:`~minitf.attention.AttentionGrads`: the intermediates dA and dscores with dQ, dK, dV);
    the dict is keyed by those names, in :data:`LINES`' order."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(shape) for shape in ((B, H, T, Dh), (B, H, S, Dh), (B, H, S, Dh)))
    out, cache = scaled_dot_product_attention(Q, K, V)
    G = rng.standard_normal(out.shape)
    grads = scaled_dot_product_attention_backward(G, cache)
    lines = grads._asdict()  # every line's result, by name

    def loss() -> float:
        return float((scaled_dot_product_attention(Q, K, V)[0] * G).sum())

    P = cache.A.copy()
    S_scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)  # (B, H, T, S)
    numerical = {
        "dV": numerical_gradient(loss, V),
        "dA": numerical_gradient(lambda: float((P @ V * G).sum()), P),
        "dscores": numerical_gradient(lambda: float((softmax(S_scores) @ V * G).sum()), S_scores),
        "dQ": numerical_gradient(loss, Q),
        "dK": numerical_gradient(loss, K),
    }
    torch_grads = _torch_grads(Q, K, V, G)
    return {name: LineCheck(LINES[name], rel_error(lines[name], numerical[name]),
                            None if torch_grads is None else rel_error(lines[name], torch_grads[name]))
            for name in LINES}


def forgotten_scale_error(seed: int = 0, B: int = 2, H: int = 2, T: int = 3, S: int = 4, Dh: int = 5) -> float:
    """The classic bug, measured: rel_error of dQ computed *without* the 1/sqrt(Dh) of the
    backward against finite differences (the inputs of :func:`attention_backward_check`).
    Every entry is off by the factor sqrt(Dh): (sqrt(Dh) - 1) / (sqrt(Dh) + 1)."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal(shape) for shape in ((B, H, T, Dh), (B, H, S, Dh), (B, H, S, Dh)))
    out, cache = scaled_dot_product_attention(Q, K, V)
    G = rng.standard_normal(out.shape)
    dscores = scaled_dot_product_attention_backward(G, cache).dscores  # (B, H, T, S)
    dQ_without_scale = dscores @ K  # the bug: dS K, no 1/sqrt(Dh)
    numerical = numerical_gradient(lambda: float((scaled_dot_product_attention(Q, K, V)[0] * G).sum()), Q)
    return rel_error(dQ_without_scale, numerical)


# =====================================================================================
# 5. Many heads
# =====================================================================================
def heads_by_loop(mha: MultiHeadAttention, x_q: np.ndarray, x_kv: np.ndarray) -> np.ndarray:
    """The reference the reshape must agree with: multi-head attention written as a loop over
    heads, head h using columns h*Dh:(h+1)*Dh of W_q, W_k, W_v (and of their biases), the head
    outputs concatenated, then W_o.  x_q (B, T, D), x_kv (B, S, D) -> y (B, T, D)."""
    p, H = mha.params, mha.n_heads
    Dh = mha.d_model // H
    heads = []
    for h in range(H):
        cols = slice(h * Dh, (h + 1) * Dh)
        q = affine_forward(x_q, p["W_q"][:, cols], p["b_q"][cols])  # (B, T, Dh)
        k = affine_forward(x_kv, p["W_k"][:, cols], p["b_k"][cols])  # (B, S, Dh)
        v = affine_forward(x_kv, p["W_v"][:, cols], p["b_v"][cols])  # (B, S, Dh)
        out, _ = scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])  # (B, 1, T, Dh)
        heads.append(out[:, 0])
    return affine_forward(np.concatenate(heads, axis=-1), p["W_o"], p["b_o"])  # (B, T, D)


SEQ_LEN = 8  # every source has this many letters: no padding, one fixed alignment
EVAL_SIZE = 200  # held-out pairs the heads are measured on


def lesson2_task() -> Task:
    """``reverse`` with sources of exactly SEQ_LEN letters (``fbhadcge -> egcdahbf``): no padding,
    so target position t always reads source position SEQ_LEN - 1 - t."""
    return get_task("reverse", min_len=SEQ_LEN, max_len=SEQ_LEN)


def lesson2_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """D = 32, H = 4 heads (Dh = 8), F = 64, one encoder block and one decoder block, in float64."""
    task = lesson2_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=1,
                                                     n_decoder_layers=1), **overrides})


def lesson2_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """1000 AdamW steps of 32 examples, warm-up then cosine decay from 3e-3; one evaluation at the end."""
    return lesson_train_config(seed, **{**dict(steps=1000, batch_size=32, lr=3e-3, warmup=20, eval_every=0,
                                               eval_size=64), **overrides})


class Lesson2Run(NamedTuple):
    task: Task
    model: EncoderDecoder  # trained, in eval mode; shared by the notebook and the figures: do not modify
    history: History
    eval_pairs: list  # EVAL_SIZE held-out (source, target) pairs
    token_accuracy: float  # teacher-forced, on eval_pairs (minitf.training.token_accuracy)
    attention: dict  # ATTENTIONS name -> weights (EVAL_SIZE, H, T, S) on eval_pairs


ATTENTIONS = ("encoder self-attention", "decoder self-attention", "cross-attention")


@once_per_process
def lesson2_run(seed: int = 0) -> Lesson2Run:
    """Train the lesson's model once per process and seed, and record every head's attention
    weights on the held-out pairs (one teacher-forced pass)."""
    task = lesson2_task()
    eval_pairs = task.dataset(EVAL_SIZE, seed=seed + 20_000)
    model, _, history = train_fresh(task, lesson2_model_config(task, seed), lesson2_train_config(seed),
                                    held_out=[s for s, _ in eval_pairs])
    model.eval()
    batch = task.batch(eval_pairs)
    logits, (enc, dec) = model.forward(batch.input_ids, batch.decoder_input_ids)
    accuracy = token_accuracy(logits, batch.labels)
    attention = dict(zip(ATTENTIONS, (enc.layers[0].self_attn.f.attn.A, dec.layers[0].self_attn.f.attn.A,
                                      dec.layers[0].cross_attn.f.attn.A)))
    return Lesson2Run(task, model, history, eval_pairs, accuracy, attention)


class HeadPattern(NamedTuple):
    """Where one head looks, averaged over the held-out pairs (:func:`head_patterns`)."""

    mean_map: np.ndarray  # (T, S) mean attention weights
    offset: int  # the offset the head puts most weight on: key - query position (self-attention),
    #              key - (SEQ_LEN - 1 - t), the reversal's source position (cross-attention)
    offset_share: float  # mean weight on that offset, per query
    key: int  # the key position the head puts most weight on, whatever the query
    key_share: float  # mean weight on that key position, per query
    distance: float  # mean |offset| weighted by attention
    max_weight: float  # mean largest weight of a row
    entropy: float  # mean entropy of a row, nats


def head_patterns(run: Lesson2Run) -> dict[str, list[HeadPattern]]:
    """Each head's pattern in each of the model's three attentions."""
    out = {}
    for name, A in run.attention.items():
        _, H, T, S = A.shape
        anchor = SEQ_LEN - 1 - np.arange(T) if name == "cross-attention" else np.arange(T)  # (T,)
        offsets = np.arange(S)[None, :] - anchor[:, None]  # (T, S)
        patterns = []
        for h in range(H):
            w = A[:, h]  # (N, T, S)
            mean_map = w.mean(0)
            by_offset = {int(o): float(mean_map[offsets == o].sum() / T) for o in np.unique(offsets)}
            offset = max(by_offset, key=by_offset.get)
            by_key = mean_map.mean(0)  # (S,)
            entropy = -(w * np.log(np.where(w > 0, w, 1.0))).sum(-1)
            patterns.append(HeadPattern(mean_map, offset, by_offset[offset], int(by_key.argmax()),
                                        float(by_key.max()), float((mean_map * np.abs(offsets)).sum() / T),
                                        float(w.max(-1).mean()), float(entropy.mean())))
        out[name] = patterns
    return out
