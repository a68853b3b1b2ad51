"""Lesson 4 (*Cross-attention: joining the two stacks*): the run and the measurements.

The lesson's specimen is a small encoder-decoder trained on the ``reverse`` task
(``fbhad -> dahbf``), chosen because its alignment is known in advance: the decoder
position that predicts target token t must read source position n-1-t (n the source's
real length).  :func:`lesson4_run` trains it once per process and seed (cached, however
the seed is passed), so the notebook and the figures (:mod:`minitf.course.l04_cross_attention.figures`)
read the same weights.  Everything is float64 (:mod:`minitf.course.kit.runs` says why).

======================================  ===================================================
section of Lesson 4                     what is measured here
======================================  ===================================================
set-up                                  :func:`lesson4_task`, :func:`lesson4_model_config`,
                                        :func:`lesson4_train_config`, :func:`lesson4_run`
1  queries from the decoder, keys and   :func:`cross_attention_call` (a live
   values from the encoder              ``MultiHeadAttention.forward`` of a decoder block's
                                        cross-attention, on its real inputs)
2  no causal mask, only source padding  :func:`padding_check` (padded keys: zero weight,
                                        and their contents change nothing),
                                        :func:`future_mass` (weight on s > t)
3  what the decoder looks at            :func:`cross_attention_weights`,
                                        :func:`expected_alignment`, :func:`alignment_scores`,
                                        :func:`alignment_example`
4  keys and values computed once        :func:`cross_kv_reuse` (a real ``KVCache`` over a
                                        greedy decode)
5  the gradient through cross-attention :func:`gradient_shares` (dH_enc and each decoder
                                        block's share), :func:`cross_attention_gradcheck`,
                                        :func:`dH_enc_gradcheck` (finite differences),
                                        :func:`embedding_paths` (the shared, tied embedding
                                        table's three sources of gradient)
======================================  ===================================================

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...attention import MultiHeadAttentionCache
from ...config import ModelConfig
from ...decoding import decode_step, start_decoding
from ...gradcheck import check_layer, numerical_gradient
from ...loss import cross_entropy
from ...models import EncoderDecoder
from ...data.tasks import Task, get_task
from ...training import History, TrainConfig
from ..kit.runs import check_model, lesson_model_config, lesson_train_config, once_per_process, train_fresh

__all__ = [
    "EVAL_SIZE", "lesson4_task", "lesson4_model_config", "lesson4_train_config", "Lesson4Run", "lesson4_run",
    "CrossAttentionCall", "cross_attention_call", "PaddingCheck", "padding_check", "future_mass",
    "cross_attention_weights", "expected_alignment", "AlignmentScores", "alignment_scores",
    "AlignmentExample", "alignment_example",
    "CrossKVReuse", "cross_kv_reuse", "GradientShares", "gradient_shares", "cross_attention_gradcheck",
    "FiniteDifferenceCheck", "dH_enc_gradcheck", "EmbeddingPaths", "embedding_paths",
]

EVAL_SIZE = 200  # fixed held-out pairs the lesson measures the alignment on


# ---- the lesson's run ------------------------------------------------------------------------
def lesson4_task() -> Task:
    """Reverse a string of 4 to 10 letters (12 symbols): target token t is source token n-1-t."""
    return get_task("reverse")


def lesson4_model_config(task: Task | None = None, seed: int = 0, **overrides) -> ModelConfig:
    """D = 32, H = 2 (Dh = 16), F = 64, one encoder block and two decoder blocks (so there
    are two cross-attentions to compare), shared and tied embeddings, float64."""
    task = lesson4_task() if task is None else task
    return lesson_model_config(task, seed, **{**dict(d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1,
                                                     n_decoder_layers=2), **overrides})


def lesson4_train_config(seed: int = 0, **overrides) -> TrainConfig:
    """600 AdamW steps of 32 examples, warm-up then cosine decay from 3e-3; one evaluation
    (64 examples) at the end."""
    return lesson_train_config(seed, **{**dict(steps=600, batch_size=32, lr=3e-3, warmup=20, eval_every=0,
                                               eval_size=64), **overrides})


class Lesson4Run(NamedTuple):
    """The lesson's trained model and the pairs it is measured on (:func:`lesson4_run`)."""

    task: Task
    eval_pairs: list  # EVAL_SIZE fixed (source, target) pairs, never trained on
    train_config: TrainConfig
    model: EncoderDecoder  # trained, eval mode, float64; shared by notebook and figures: do not modify
    history: History

    @property
    def model_config(self) -> ModelConfig:
        return self.model.config


@once_per_process
def lesson4_run(seed: int = 0) -> Lesson4Run:
    """Train the lesson's model once per process and seed (``lesson4_run()``,
    ``lesson4_run(0)`` and ``lesson4_run(seed=0)`` are one cached run); no training batch
    contains a source of :attr:`Lesson4Run.eval_pairs`."""
    task = lesson4_task()
    held_out = task.dataset(EVAL_SIZE, seed=seed + 20_000)
    train_config = lesson4_train_config(seed)
    model, _, history = train_fresh(task, lesson4_model_config(task, seed), train_config,
                                    held_out=[s for s, _ in held_out])
    model.eval()
    return Lesson4Run(task, held_out, train_config, model, history)


def _decoder_inputs(model: EncoderDecoder, batch, layer: int):
    """What decoder block ``layer``'s cross-attention received in the teacher-forced forward
    of ``batch``: its query input x_q (B, T, D) (the decoder stream after the block's norm),
    H_enc (B, S, D), the source mask (B, 1, 1, S) and the attention cache it made."""
    _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    c: MultiHeadAttentionCache = cache.decoder.layers[layer].cross_attn.f
    return c.x_q, c.x_kv, model.source_mask(batch.input_ids), c


# ---- section 1: a live cross-attention call -----------------------------------------------------
class CrossAttentionCall(NamedTuple):
    """One ``MultiHeadAttention.forward(x_q, H_enc, src_mask)`` of a decoder block."""

    x_q: np.ndarray  # (B, T, D) decoder stream: the queries' input
    H_enc: np.ndarray  # (B, S, D) encoder output: the keys' and values' input
    src_mask: np.ndarray  # (B, 1, 1, S) additive source-padding mask
    y: np.ndarray  # (B, T, D) the output
    cache: MultiHeadAttentionCache  # attn.Q (B, H, T, Dh), attn.K/V (B, H, S, Dh), attn.A (B, H, T, S)
    max_diff_vs_model: float  # max |A - A from the model's own forward|: the call is the model's


def cross_attention_call(run: Lesson4Run, pairs, layer: int = -1) -> CrossAttentionCall:
    """Take decoder block ``layer``'s cross-attention inputs from a teacher-forced forward
    of ``pairs`` and call its ``MultiHeadAttention.forward`` on them again, by hand."""
    model = run.model
    x_q, H_enc, src_mask, model_cache = _decoder_inputs(model, run.task.batch(pairs), layer)
    attn = model.decoder_layers[layer].cross_attn
    y, cache = attn.forward(x_q, H_enc, src_mask)  # (B, T, D)
    return CrossAttentionCall(x_q, H_enc, src_mask, y, cache,
                              float(np.max(np.abs(cache.attn.A - model_cache.attn.A))))


# ---- section 2: padding masked, the future not ----------------------------------------------------
class PaddingCheck(NamedTuple):
    """Cross-attention over a padded batch, and again with the padded rows of H_enc scrambled."""

    lengths: np.ndarray  # (B,) real source lengths
    S: int  # padded source length
    weight_on_padding: float  # max over b, h, t of the weights on padded source positions
    row_sums: tuple  # (min, max) of the weights' row sums over real keys
    max_output_change: float  # max |y - y'| when H_enc's padded rows are replaced by noise


def padding_check(run: Lesson4Run, pairs, layer: int = -1, seed: int = 0) -> PaddingCheck:
    """Weights on padded source keys, and whether those keys' contents reach the output:
    H_enc's padded rows are replaced with large random values and the call repeated."""
    model = run.model
    batch = run.task.batch(pairs)
    x_q, H_enc, src_mask, _ = _decoder_inputs(model, batch, layer)
    attn = model.decoder_layers[layer].cross_attn
    y, cache = attn.forward(x_q, H_enc, src_mask)
    pad = batch.input_ids == model.config.pad_id  # (B, S)
    A = cache.attn.A  # (B, H, T, S)
    on_pad = np.where(pad[:, None, None, :], A, 0.0)
    real_sums = np.where(pad[:, None, None, :], 0.0, A).sum(-1)  # (B, H, T)
    scrambled = H_enc.copy()
    scrambled[pad] = 100.0 * np.random.default_rng(seed).standard_normal((int(pad.sum()), H_enc.shape[-1]))
    y2, _ = attn.forward(x_q, scrambled, src_mask)
    return PaddingCheck((~pad).sum(1), int(pad.shape[1]), float(on_pad.max()),
                        (float(real_sums.min()), float(real_sums.max())), float(np.max(np.abs(y - y2))))


def future_mass(run: Lesson4Run, pairs, layer: int = -1) -> dict:
    """Mean attention weight on positions s > t ("the future" in a causal mask's sense),
    over real query positions t < n, for decoder block ``layer``'s cross-attention and its
    self-attention, and the share of target positions whose known alignment n-1-t is > t.
    -> ``{"cross": float, "self": float, "needed": float}``."""
    model = run.model
    batch = run.task.batch(pairs)
    _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    dec = cache.decoder.layers[layer]
    out = {}
    for name, A in (("cross", dec.cross_attn.f.attn.A), ("self", dec.self_attn.f.attn.A)):
        T, S = A.shape[-2:]
        later = np.arange(S)[None, :] > np.arange(T)[:, None]  # (T, S) key s after query t
        rows = []
        for b, (src, _) in enumerate(pairs):
            n = len(src)
            rows.append((A[b, :, :n] * later[:n]).sum(-1).ravel())  # (H * n,)
        out[name] = float(np.concatenate(rows).mean())
    n_all = np.concatenate([np.arange(len(s)) for s, _ in pairs])
    n_len = np.concatenate([np.full(len(s), len(s)) for s, _ in pairs])
    out["needed"] = float(np.mean(n_len - 1 - n_all > n_all))
    return out


# ---- section 3: what the decoder looks at -----------------------------------------------------------
def cross_attention_weights(model: EncoderDecoder, batch) -> list:
    """Every decoder block's cross-attention weights from one teacher-forced forward:
    a list of L_dec arrays (B, H, T, S), read from the forward's cache."""
    check_model(model)
    _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    return [layer.cross_attn.f.attn.A for layer in cache.decoder.layers]


def expected_alignment(task: Task, source: str) -> np.ndarray:
    """The source position each target position must read: (n,) ints, n = len(source);
    n-1-t for ``reverse``, t for ``copy`` (the final ``<eos>`` position has none)."""
    n = len(source)
    if task.name == "reverse":
        return n - 1 - np.arange(n)
    if task.name == "copy":
        return np.arange(n)
    raise ValueError(f"task: expected 'reverse' or 'copy' (a known alignment), got {task.name!r}")


class AlignmentScores(NamedTuple):
    """How well each decoder block's, each head's cross-attention matches the known alignment."""

    argmax_match: np.ndarray  # (L_dec, H) share of target positions whose most-attended source is the expected one
    weight_on_expected: np.ndarray  # (L_dec, H) mean weight on the expected source position
    chance: float  # mean 1/n: the weight (and argmax hit rate) of a uniform spread
    positions: int  # target positions scored (the <eos> positions excluded)


def alignment_scores(model: EncoderDecoder, task: Task, pairs) -> AlignmentScores:
    """Score every layer and head of ``model``'s cross-attention on ``pairs`` against
    :func:`expected_alignment` (target positions t < n; the ``<eos>`` row is left out)."""
    weights = cross_attention_weights(model, task.batch(pairs))
    L, H = len(weights), weights[0].shape[1]
    hits, mass = np.zeros((L, H)), np.zeros((L, H))
    total = 0
    for b, (src, _) in enumerate(pairs):
        n, want = len(src), expected_alignment(task, src)
        total += n
        for l, A in enumerate(weights):
            rows = A[b, :, :n]  # (H, n, S)
            hits[l] += (rows.argmax(-1) == want).sum(-1)
            mass[l] += rows[:, np.arange(n), want].sum(-1)
    chance = float(np.mean([1.0 / len(s) for s, _ in pairs for _ in s]))
    return AlignmentScores(hits / total, mass / total, chance, total)


class AlignmentExample(NamedTuple):
    """One held-out pair's cross-attention weights, every block and head."""

    index: int  # position in run.eval_pairs
    source: str
    target: str
    weights: np.ndarray  # (L_dec, H, T, S) T = len(target) + 1 (<eos>), S = len(source)
    expected: np.ndarray  # (len(source),) expected source position of each target position


def alignment_example(run: Lesson4Run) -> AlignmentExample:
    """The first held-out pair of the longest length (no padding in its picture)."""
    longest = max(len(s) for s, _ in run.eval_pairs)
    index = next(i for i, (s, _) in enumerate(run.eval_pairs) if len(s) == longest)
    source, target = run.eval_pairs[index]
    weights = cross_attention_weights(run.model, run.task.batch([(source, target)]))
    return AlignmentExample(index, source, target, np.stack([A[0] for A in weights]),
                            expected_alignment(run.task, source))


# ---- section 4: K, V once per layer ----------------------------------------------------------------
class CrossKVReuse(NamedTuple):
    """The cross-attention cache of a greedy decode, checked at every step."""

    steps: int  # decode steps taken
    shapes: list  # K_cross shape per layer: (B, H, S, Dh), no T in it
    max_diff_vs_project_kv: float  # max |K_cross - project_kv(H_enc)[0]| (and V), over layers
    max_diff_vs_forward: float  # max |K_cross - K of the teacher-forced forward's cross-attention|
    max_change_over_steps: float  # max |K_cross after step t - K_cross before step 1|, over t and layers
    same_arrays: bool  # every step's cache holds the very same K_cross / V_cross arrays
    output: str  # the decoded text


def cross_kv_reuse(run: Lesson4Run, index: int = 0) -> CrossKVReuse:
    """Greedy-decode ``run.eval_pairs[index]`` step by step through a real KV cache and
    compare its cross-attention K, V with ``project_kv(H_enc)`` and with themselves."""
    model, task = run.model, run.task
    pair = run.eval_pairs[index]
    batch = task.batch([pair])
    src = batch.input_ids  # (1, S)
    H_enc, _ = model.encode(src)  # (1, S, D)
    cache = start_decoding(model, src)
    first = [(kv.K_cross.copy(), kv.V_cross.copy()) for kv in cache.layers]
    objs = [(kv.K_cross, kv.V_cross) for kv in cache.layers]
    d_proj = 0.0
    for layer, kv in zip(model.decoder_layers, cache.layers):
        K, V = layer.cross_attn.project_kv(H_enc)  # (1, H, S, Dh)
        d_proj = max(d_proj, float(np.max(np.abs(kv.K_cross - K))), float(np.max(np.abs(kv.V_cross - V))))
    _, fwd = model.forward(src, batch.decoder_input_ids)
    d_fwd = max(float(np.max(np.abs(kv.K_cross - dec.cross_attn.f.attn.K)))
                for kv, dec in zip(cache.layers, fwd.decoder.layers))
    token, out, change, same = np.array([[model.config.bos_id]]), [], 0.0, True
    for _ in range(task.max_target_len):
        logits, cache = decode_step(model, token, cache)  # (1, 1, V)
        token = logits[:, -1].argmax(-1)[:, None]  # (1, 1) greedy
        for (K0, V0), (Ko, Vo), kv in zip(first, objs, cache.layers):
            change = max(change, float(np.max(np.abs(kv.K_cross - K0))), float(np.max(np.abs(kv.V_cross - V0))))
            same &= kv.K_cross is Ko and kv.V_cross is Vo
        if int(token[0, 0]) == model.config.eos_id:
            break
        out.append(int(token[0, 0]))
    return CrossKVReuse(cache.length, [kv.K_cross.shape for kv in cache.layers], d_proj, d_fwd, change, same,
                        task.tokenizer.decode(out))


# ---- section 5: the gradient through cross-attention ---------------------------------------------------
class GradientShares(NamedTuple):
    """dL/dH_enc of the teacher-forced loss, and each decoder block's share of it."""

    loss: float
    dH_enc: np.ndarray  # (B, S, D)
    shares: list  # L_dec arrays (B, S, D)
    share_norms: list  # Frobenius norm of each share
    max_sum_error: float  # max |sum of shares - dH_enc|
    max_on_padding: float  # max |dH_enc| on padded source positions


def gradient_shares(run: Lesson4Run, pairs) -> GradientShares:
    """One teacher-forced forward and backward of the trained model on ``pairs``; the
    parameter gradients it accumulates are zeroed again afterwards."""
    model = run.model
    batch = run.task.batch(pairs)
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    g = model.backward(dlogits, cache)
    model.zero_grad()
    pad = batch.input_ids == model.config.pad_id
    return GradientShares(float(loss), g.dH_enc, list(g.dH_enc_shares),
                          [float(np.linalg.norm(s)) for s in g.dH_enc_shares],
                          float(np.max(np.abs(sum(g.dH_enc_shares) - g.dH_enc))),
                          float(np.max(np.abs(g.dH_enc[pad]), initial=0.0)))


def cross_attention_gradcheck(run: Lesson4Run, pairs, layer: int = -1, max_entries: int = 30,
                              seed: int = 0) -> dict:
    """Decoder block ``layer``'s cross-attention, on its real inputs (x_q, H_enc, source
    mask), checked by :func:`minitf.gradcheck.check_layer` under a random upstream gradient:
    ``{"dx_q": err, "dx_kv": err, "param:W_k": err, ...}`` (relative errors, float64).

    ``b_k`` is left out: adding b_k to every key adds the same number q . b_k to a
    query's every score, which the softmax ignores, so its true gradient is exactly zero
    and a relative error would compare two round-off-sized numbers."""
    model = run.model
    x_q, H_enc, src_mask, _ = _decoder_inputs(model, run.task.batch(pairs), layer)
    attn = model.decoder_layers[layer].cross_attn
    report = check_layer(attn, [x_q.copy(), H_enc.copy()], forward_kwargs={"mask": src_mask},
                         max_entries=max_entries, seed=seed)
    attn.zero_grad()
    return {{"input0": "dx_q", "input1": "dx_kv"}.get(k, k): v for k, v in report.items() if k != "param:b_k"}


class FiniteDifferenceCheck(NamedTuple):
    """An analytic gradient against finite differences on sampled entries."""

    entries: int  # entries compared
    max_abs_gradient: float  # max |analytic| over them
    max_abs_error: float  # max |analytic - numerical|
    rel_error: float  # ||analytic - numerical|| / (||analytic|| + ||numerical||) over the entries


def dH_enc_gradcheck(run: Lesson4Run, pairs, max_entries: int = 30, seed: int = 0,
                     h: float = 1e-4) -> FiniteDifferenceCheck:
    """The backward's dL/dH_enc (the sum of the shares) against centred finite differences
    of the teacher-forced loss with respect to H_enc, on ``max_entries`` sampled entries of
    the real (unpadded) positions (float64).

    The relative error is taken over the sampled entries as one vector: an entry-wise
    maximum would be ruled by the smallest entries, where a gradient of 1e-9 meets
    round-off of the same size.  The step ``h`` is 1e-4, not gradcheck's 1e-3: the decoder's
    feed-forward ReLUs have kinks, and on the lesson's batch a step of 1e-3 in H_enc pushes
    a pre-activation across zero (the check then errs by about 1e-7)."""
    model = run.model
    batch = run.task.batch(pairs)
    H_enc, _ = model.encode(batch.input_ids)  # (B, S, D)
    src_mask = model.source_mask(batch.input_ids)

    def loss() -> float:
        logits, _ = model.decode(batch.decoder_input_ids, H_enc, src_mask)
        return float(cross_entropy(logits, batch.labels)[0])

    analytic = gradient_shares(run, pairs).dH_enc
    b, s = np.nonzero(batch.input_ids != model.config.pad_id)  # real source positions
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(b) * H_enc.shape[2], size=max_entries, replace=False)
    D = H_enc.shape[2]
    idx = [(int(b[k // D]), int(s[k // D]), int(k % D)) for k in np.sort(picks)]  # (b, s, d) entries
    num = numerical_gradient(loss, H_enc, h=h, indices=idx)
    picked = tuple(np.array(i) for i in zip(*idx))
    a, n = analytic[picked], num[picked]
    return FiniteDifferenceCheck(len(idx), float(np.abs(a).max()), float(np.abs(a - n).max()),
                                 float(np.linalg.norm(a - n) / max(1e-300, np.linalg.norm(a) + np.linalg.norm(n))))


class EmbeddingPaths(NamedTuple):
    """Where the gradient of a shared, tied embedding table comes from (:func:`embedding_paths`)."""

    through_encoder: np.ndarray  # (V, D) from the source lookup: the part that passed through dL/dH_enc
    decoder_input: np.ndarray  # (V, D) from the decoder's input lookup
    head: np.ndarray  # (V, D) from the output layer, W_U = W_E^T
    total: np.ndarray  # (V, D) the shared table's gradient in the lesson's model
    max_sum_error: float  # max |through_encoder + decoder_input + head - total|
    encoder_blocks_norm: float  # |gradient of every encoder block and the encoder's final norm|
    encoder_blocks_untied_error: float  # max |that gradient, untied twin - lesson's model|: the same


def embedding_paths(run: Lesson4Run, pairs) -> EmbeddingPaths:
    """The lesson's model shares one embedding table between source and target and ties the
    output layer to it (``share_embeddings``, ``tie_output``), so the table's gradient is a sum
    of three parts.  To read them apart, the same weights go into a twin built with three
    separate tables (``src_embed.W_E``, ``tgt_embed.W_E``, ``W_U`` = W_E^T): the forward is the
    same, and each table's gradient is one part.  One teacher-forced forward and backward on
    ``pairs`` in each model; the gradients are zeroed again afterwards."""
    model = run.model
    c = model.config
    if not (c.share_embeddings and c.tie_output):
        raise ValueError("run: expected a model with shared and tied embeddings")
    twin = EncoderDecoder(c.replace(share_embeddings=False, tie_output=False))
    params = model.parameters()
    W_E = params["src_embed.W_E"]  # (V, D), the one table
    for name, value in twin.parameters().items():
        value[...] = W_E.T if name == "W_U" else (W_E if name == "tgt_embed.W_E" else params[name])
    batch = run.task.batch(pairs)
    grads = []
    for m in (model, twin):
        with m.evaluating():
            logits, cache = m.forward(batch.input_ids, batch.decoder_input_ids)
        _, dlogits = cross_entropy(logits, batch.labels)
        m.zero_grad()
        m.backward(dlogits, cache)
        grads.append({k: g.copy() for k, g in m.gradients().items()})
        m.zero_grad()
    tied, untied = grads
    parts = untied["src_embed.W_E"], untied["tgt_embed.W_E"], untied["W_U"].T
    encoder = [k for k in tied if k.startswith(("encoder_layers.", "encoder_norm."))]
    return EmbeddingPaths(*parts, tied["src_embed.W_E"], float(np.max(np.abs(sum(parts) - tied["src_embed.W_E"]))),
                          float(np.sqrt(sum(np.vdot(tied[k], tied[k]) for k in encoder))),
                          float(max(np.max(np.abs(tied[k] - untied[k])) for k in encoder)))
