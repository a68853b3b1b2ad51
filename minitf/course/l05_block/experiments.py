"""Lesson 5 (*The block*): the runs and the measurements.

Everything the notebook prints and the figures (:mod:`minitf.course.l05_block.figures`) draw is
computed here, from minitf's own blocks (:mod:`minitf.blocks`), LayerNorm, feed-forward
network, activations and positional encodings (:mod:`minitf.layers`) and models.  The
trained models are tiny and trained briefly, each once per process and seed (cached by
:func:`~minitf.course.kit.runs.once_per_process`), in float64 (:mod:`minitf.course.kit.runs`
says why).

======================================  ===================================================
section of Lesson 5                     what is measured here
======================================  ===================================================
set-up                                  :mod:`minitf.course.l05_block.configs` (re-exported
                                        here): :func:`lesson5_task`,
                                        :func:`lesson5_model_config`,
                                        :func:`lesson5_train_config`, :func:`summarize`
1  residual connections                 :func:`depth_profile`, :func:`depth_profiles` (a
                                        stack of :data:`DEPTH` blocks at initialisation,
                                        with and without the residual, with and without
                                        LayerNorm: the gradient at every block's input)
2  layer normalization and its          :func:`layernorm_jacobian`, :func:`layernorm_check`
   backward                             (finite differences, torch, the Jacobian, the
                                        all-ones trap), :func:`scale_invariance`
3  pre-LN and post-LN                   :func:`init_gradient_norms` (each block's gradient
                                        at initialisation), :func:`warmup_runs` (both
                                        arrangements trained with and without warm-up),
                                        :func:`unigram_loss` (the loss of ignoring the input)
4  the feed-forward network             :func:`ffn_is_per_position`, :func:`ffn_parameter_counts`,
                                        :func:`activation_stats` (ReLU, GELU), :func:`ffn_runs`
                                        (widths and activations trained),
                                        :func:`inactive_units`
5  positions                            :mod:`minitf.course.l05_block.positions`
                                        (re-exported here): :func:`encode_without_positions`,
                                        :func:`permutation_check`, :func:`sinusoid_offsets`,
                                        :func:`position_runs` (sinusoidal vs learned, trained
                                        on short strings), :func:`accuracy_by_position`,
                                        :func:`learned_rows_change`, :func:`weight_decay_shrink`
======================================  ===================================================

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...blocks import DecoderBlock, EncoderBlock
from ...checks import check_int
from ...data import IGNORE_INDEX, Batch
from ...gradcheck import check_layer, randomize_norms_and_biases, rel_error
from ...layers import FeedForward, LayerNorm
from ...layers.activations import get_activation
from ...loss import cross_entropy
from ...models import EncoderDecoder
from ...data.tasks import Task
from .configs import RunSummary, lesson5_model_config, lesson5_task, lesson5_train_config, summarize  # set-up
from .positions import (TEST_MAX_LEN, TRAIN_MAX_LEN, POSITION_STEPS, PermutationCheck, PositionAccuracy,  # section 5
                        accuracy_by_position, encode_without_positions, learned_rows_change, permutation_check,
                        position_runs, position_task, sinusoid_offsets, weight_decay_shrink)
from ..kit.runs import Trained, check_batch, check_model, norm, once_per_process, train_fresh

__all__ = [
    "lesson5_task", "lesson5_model_config", "lesson5_train_config", "RunSummary", "summarize",
    "DEPTH", "STACKS", "DepthProfile", "depth_profile", "depth_profiles",
    "layernorm_jacobian", "LayerNormCheck", "layernorm_check", "scale_invariance",
    "InitGradients", "init_gradient_norms", "HIGH_LR", "WARMUP", "WARMUP_STEPS", "ARRANGEMENTS",
    "warmup_runs", "unigram_loss",
    "ffn_is_per_position", "ffn_parameter_counts", "ActivationStats", "activation_stats", "FFN_VARIANTS",
    "ffn_runs", "inactive_units",
    "encode_without_positions", "PermutationCheck", "permutation_check", "sinusoid_offsets",
    "TRAIN_MAX_LEN", "TEST_MAX_LEN", "POSITION_STEPS", "position_task", "position_runs", "PositionAccuracy",
    "accuracy_by_position", "weight_decay_shrink", "learned_rows_change",
]


# =====================================================================================
# The lesson's set-up
# =====================================================================================
# the set-up is in configs.py, re-exported above


# =====================================================================================
# 1. Residual connections
# =====================================================================================
DEPTH = 24  # blocks in the stack of section 1: 48 sub-layers

STACKS = {  # name -> (residual, layer_norm)
    "no residual": (False, False),
    "residual": (True, False),
    "LayerNorm, no residual": (False, True),
    "residual + LayerNorm (pre-LN)": (True, True),
}
"""The four stacks of :func:`depth_profiles`; the last is minitf's pre-LN encoder block."""


class DepthProfile(NamedTuple):
    """The gradient at the input of every block of a deep stack (:func:`depth_profile`)."""

    residual: bool
    layer_norm: bool
    grad_norm: np.ndarray  # (L+1,) |dL/dx_l| at the input of block l; entry L is the top, |G|
    stream_rms: np.ndarray  # (L+1,) root mean square of the stream x_l entering block l (l = L: the output)
    cosine: np.ndarray  # (L+1,) cos(dL/dx_l, G): how much of the top's gradient is still there


def depth_profile(residual: bool, layer_norm: bool, seed: int = 0, n_blocks: int = DEPTH, B: int = 4,
                  S: int = 10, D: int = 32, H: int = 2, F: int = 64) -> DepthProfile:
    """A stack of ``n_blocks`` of minitf's pre-LN encoder blocks at initialisation (float64,
    weights from ``seed``), built with ``EncoderBlock(..., residual=residual,
    layer_norm=layer_norm)``, so that each sub-layer is:

        residual, layer_norm:      y = x + f(LayerNorm(x))   minitf's standard pre-LN block
        residual only:             y = x + f(x)
        layer_norm only:           y = f(LayerNorm(x))
        neither:                   y = f(x)

    ``f`` is the block's self-attention or its feed-forward network.  The input x (B, S, D)
    and the upstream gradient G = dL/dx_L are random N(0, 1); L = sum(x_L * G).  The same
    seed gives the same weights, input and G for every arrangement (a LayerNorm draws nothing).
    """
    rng = np.random.default_rng(seed)
    blocks = [EncoderBlock(D, H, F, residual=residual, layer_norm=layer_norm, rng=rng, dtype=np.float64)
              for _ in range(check_int("n_blocks", n_blocks, low=1))]
    x = rng.standard_normal((B, S, D))  # (B, S, D)
    G = rng.standard_normal((B, S, D))  # dL/dx_L
    rms, caches = [], []
    for block in blocks:
        rms.append(float(np.sqrt(np.mean(x * x))))
        x, cache = block.forward(x)
        caches.append(cache)
    rms.append(float(np.sqrt(np.mean(x * x))))
    dx, grads = G, [G]
    for block, cache in zip(reversed(blocks), reversed(caches)):
        dx = block.backward(dx, cache)
        grads.append(dx)
    grads.reverse()  # grads[l] = dL/dx_l, l = 0 (the bottom) .. L (the top)
    g_norm = np.linalg.norm(G)
    return DepthProfile(residual, layer_norm, np.array([np.linalg.norm(g) for g in grads]), np.array(rms),
                        np.array([float(np.vdot(g, G)) / (np.linalg.norm(g) * g_norm) for g in grads]))


def depth_profiles(seed: int = 0, n_blocks: int = DEPTH) -> dict[str, DepthProfile]:
    """:func:`depth_profile` of every stack of :data:`STACKS`, same weights, input and G."""
    return {name: depth_profile(r, n, seed, n_blocks) for name, (r, n) in STACKS.items()}


# =====================================================================================
# 2. Layer normalization and its backward
# =====================================================================================
def layernorm_jacobian(x_hat: np.ndarray, rstd: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """dy/dx of y = gamma * x_hat + beta, row by row: x_hat (..., D), rstd (..., 1), gamma (D,)
    -> (..., D, D), entry [i, j] = dy_i / dx_j = gamma_i rstd (delta_ij - 1/D - x_hat_i x_hat_j / D).

    Three paths from x_j to y_i: directly (delta_ij), through the mean (-1/D) and through
    the standard deviation (-x_hat_i x_hat_j / D)."""
    D = x_hat.shape[-1]
    eye = np.eye(D)
    inner = eye - 1.0 / D - x_hat[..., :, None] * x_hat[..., None, :] / D  # (..., D, D)
    return gamma[:, None] * rstd[..., None] * inner


class LayerNormCheck(NamedTuple):
    """minitf's LayerNorm backward against references (:func:`layernorm_check`)."""

    shape: tuple  # the input's shape (..., D)
    finite_differences: dict  # "dx", "dgamma", "dbeta" -> rel_error against float64 finite differences
    torch: dict | None  # the same against torch autograd (None: not asked for, or torch not installed)
    jacobian: float  # rel_error of J^T dy (the (D, D) Jacobian built and multiplied) vs the backward
    y_mean: float  # max |mean of a row of x_hat|: 0
    y_var: float  # max |variance of a row of x_hat - 1|: ~eps / var
    dx_row_sum: float  # max |sum of a row of dx|: 0 (shifting x changes nothing)
    dx_along_x_hat: float  # max |<dx, x_hat>| per row: 0 (scaling x changes nothing)
    ones_upstream_dx: float  # max |dx| for dy = 1 with gamma = 1, beta = 0: 0, a check that checks nothing


def _torch_layernorm_grads(x, gamma, beta, dy, eps) -> dict | None:
    try:
        import torch
    except ImportError:
        return None
    xt, gt, bt = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, gamma, beta))
    y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), gt, bt, eps)
    (y * torch.tensor(dy)).sum().backward()
    return {"dx": xt.grad.numpy(), "dgamma": gt.grad.numpy(), "dbeta": bt.grad.numpy()}


def layernorm_check(seed: int = 0, shape=(2, 3, 8), torch: bool = False) -> LayerNormCheck:
    """A float64 LayerNorm over the last axis of a random x of ``shape``, gamma and beta
    random (:func:`~minitf.gradcheck.randomize_norms_and_biases`: with gamma = 1 some terms of
    a wrong backward vanish), a random upstream gradient dy; every entry checked.
    ``torch=True`` compares with torch autograd too (importing torch takes seconds)."""
    rng = np.random.default_rng(seed)
    D = shape[-1]
    ln = randomize_norms_and_biases(LayerNorm(D, dtype=np.float64), seed)
    x = 3.0 * rng.standard_normal(shape) + 1.0  # off-centre and wide: the mean and the std both matter
    fd = check_layer(ln, [x], max_entries=None, seed=seed)  # draws its own random dy from `seed`
    y, cache = ln.forward(x)
    dy = rng.standard_normal(y.shape)
    ln.zero_grad()
    dx = ln.backward(dy, cache)
    dgamma, dbeta = ln.grads["gamma"].copy(), ln.grads["beta"].copy()
    ln.zero_grad()
    J = layernorm_jacobian(cache.x_hat, cache.rstd, ln.params["gamma"])  # (..., D, D)
    by_jacobian = np.einsum("...ij,...i->...j", J, dy)  # J^T dy, row by row
    ref = _torch_layernorm_grads(x, ln.params["gamma"], ln.params["beta"], dy, ln.eps) if torch else None
    torch_errors = None if ref is None else {"dx": rel_error(dx, ref["dx"]), "dgamma": rel_error(dgamma, ref["dgamma"]),
                                             "dbeta": rel_error(dbeta, ref["dbeta"])}
    plain = LayerNorm(D, dtype=np.float64)  # gamma = 1, beta = 0, as built
    _, c_plain = plain.forward(x)
    dx_ones = plain.backward(np.ones(shape), c_plain)
    return LayerNormCheck(
        tuple(shape), {"dx": fd["input0"], "dgamma": fd["param:gamma"], "dbeta": fd["param:beta"]}, torch_errors,
        rel_error(by_jacobian, dx), float(np.abs(cache.x_hat.mean(-1)).max()),
        float(np.abs(cache.x_hat.var(-1) - 1.0).max()), float(np.abs(dx.sum(-1)).max()),
        float(np.abs((dx * cache.x_hat).sum(-1)).max()), float(np.abs(dx_ones).max()))


def scale_invariance(seed: int = 0, scales=(0.1, 1.0, 10.0, 100.0), D: int = 8) -> dict[float, tuple[float, float]]:
    """scale c -> (max |LN(c x) - LN(x)|, |dx at c x| / |dx at x|) for one random row x
    and one random upstream gradient: the output ignores the input's scale, and the input
    gradient shrinks as 1/c (the factor rstd in the backward)."""
    rng = np.random.default_rng(seed)
    ln = LayerNorm(D, dtype=np.float64)
    x, dy = rng.standard_normal(D), rng.standard_normal(D)
    y1, c1 = ln.forward(x)
    g1 = np.linalg.norm(ln.backward(dy, c1))
    out = {}
    for c in scales:
        y, cache = ln.forward(c * x)
        out[float(c)] = (float(np.abs(y - y1).max()), float(np.linalg.norm(ln.backward(dy, cache)) / g1))
    return out


# =====================================================================================
# 3. Pre-LN and post-LN
# =====================================================================================
ARRANGEMENTS = {"pre-LN": True, "post-LN": False}  # name -> ModelConfig.norm_first


class InitGradients(NamedTuple):
    """Each block's parameter gradient at initialisation (:func:`init_gradient_norms`)."""

    norm_first: bool
    encoder: np.ndarray  # (L_enc,) |gradient of block l's parameters|, bottom block first
    decoder: np.ndarray  # (L_dec,)
    decoder_rstd: np.ndarray  # (L_dec,) mean 1/sigma of the inputs of decoder block l's three LayerNorms:
    #                           the factor their backward multiplies the gradient by (with gamma = 1)
    loss: float  # the teacher-forced loss of the untrained model on the batch
    decoder_rstd_by_norm: np.ndarray  # (L_dec, 3) the same, each of block l's LayerNorms on its own

    def residual_path_tilt(self) -> float:
        """What 1/sigma alone predicts for ``decoder[-1] / decoder[0]`` in post-LN: between the top
        block and the bottom one the gradient crosses the three LayerNorms of every block above the
        bottom one, each multiplying it by its 1/sigma (mean over the real positions), so the
        bottom block would get prod(1/sigma) of the top's.  This counts the residual path only:
        each sub-layer's branch adds a term J_f^T dy of its own (section 1), and each LayerNorm
        also projects two directions out; neither is in the product."""
        return float(1.0 / np.prod(self.decoder_rstd_by_norm[1:]))


def init_gradient_norms(norm_first: bool, seed: int = 0, n_layers: int = 6, batch_size: int = 32) -> InitGradients:
    """One teacher-forced forward and backward of an untrained model of the lesson's
    configuration with ``n_layers`` encoder and decoder blocks, in the arrangement
    ``norm_first`` says, on ``batch_size`` pairs of the lesson's task (drawn with ``seed``).
    Everything but the arrangement is the same: the same initial weights and batch."""
    task = lesson5_task()
    model = EncoderDecoder(lesson5_model_config(task, seed, norm_first=norm_first, n_encoder_layers=n_layers,
                                                n_decoder_layers=n_layers))
    batch = task.batch(task.dataset(batch_size, seed=seed + 30_000))
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    loss, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    grads = model.gradients()

    def block_norm(prefix: str) -> float:
        return norm([g for name, g in grads.items() if name.startswith(prefix)])

    real = batch.labels != IGNORE_INDEX  # (B, T) the rstd of real target positions only
    rstd = np.array([[sub.norm.rstd[..., 0][real].mean() for sub in (c.self_attn, c.cross_attn, c.ff)]
                     for c in cache.decoder.layers])  # (L_dec, 3)
    return InitGradients(norm_first, np.array([block_norm(f"encoder_layers.{l}.") for l in range(n_layers)]),
                         np.array([block_norm(f"decoder_layers.{l}.") for l in range(n_layers)]), rstd.mean(1),
                         float(loss), rstd)


HIGH_LR = 1.5e-2  # the peak learning rate of the warm-up runs: high for this model, on purpose
WARMUP = 30  # warm-up steps of the runs "with warm-up" (0 for the others)
WARMUP_STEPS = 150  # training steps of every warm-up run


@once_per_process
def warmup_runs(seed: int = 0) -> dict[tuple[str, int], Trained]:
    """The lesson's model (two encoder and two decoder blocks) trained four times on the
    lesson's task, ``(arrangement, warm-up steps)`` -> run: pre-LN and post-LN, each with
    :data:`WARMUP` warm-up steps and with none, then cosine decay from :data:`HIGH_LR`
    over :data:`WARMUP_STEPS` steps.  Same seed, so the same initial weights (up to the
    arrangement) and the same batches; gradient clipping at norm 1 as always."""
    task = lesson5_task()
    runs = {}
    for name, norm_first in ARRANGEMENTS.items():
        for warmup in (WARMUP, 0):
            runs[name, warmup] = train_fresh(task, lesson5_model_config(task, seed, norm_first=norm_first),
                                             lesson5_train_config(seed, steps=WARMUP_STEPS, lr=HIGH_LR, warmup=warmup))
    return runs


def unigram_loss(task: Task | None = None, n: int = 4000, seed: int = 0) -> float:
    """The loss of the best model that ignores its input: the entropy of the target
    tokens' frequencies (``<eos>`` included) over ``n`` pairs.  A run stuck near it has
    learnt letter frequencies and nothing else."""
    task = lesson5_task() if task is None else task
    labels = task.batch(task.dataset(n, seed=seed)).labels
    counts = np.bincount(labels[labels != IGNORE_INDEX])
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


# =====================================================================================
# 4. The feed-forward network
# =====================================================================================
def ffn_is_per_position(seed: int = 0, B: int = 2, T: int = 6, D: int = 32, F: int = 64, position: int = 2) -> dict:
    """Change the FFN's input at one ``position`` only: ``{"changed": max |dy| there,
    "elsewhere": max |dy| at every other position}`` (0: no position sees another)."""
    rng = np.random.default_rng(seed)
    ff = FeedForward(D, F, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, T, D))
    y, _ = ff.forward(x)
    x2 = x.copy()
    x2[:, position] = rng.standard_normal((B, D))
    y2, _ = ff.forward(x2)
    diff = np.abs(y2 - y)  # (B, T, D)
    others = np.delete(diff, position, axis=1)
    return {"changed": float(diff[:, position].max()), "elsewhere": float(others.max())}


def ffn_parameter_counts(d_model: int = 32, widths=(8, 32, 128), n_heads: int = 2) -> dict[int, dict]:
    """F -> the parameters of minitf's FeedForward (D, F) and of the other parts of an encoder
    block and of a decoder block (which has a second attention, the cross-attention, and a third
    LayerNorm), counted by ``num_parameters()``: ``{"ffn", "attention", "norms", "ffn_share",
    "decoder_attention", "decoder_norms", "decoder_ffn_share"}``."""
    rng = np.random.default_rng(0)
    out = {}
    for F in widths:
        block = EncoderBlock(d_model, n_heads, F, rng=rng, dtype=np.float64)
        ffn, attn = block.ff.num_parameters(), block.self_attn.num_parameters()
        norms = block.norm1.num_parameters() + block.norm2.num_parameters()
        dec = DecoderBlock(d_model, n_heads, F, rng=rng, dtype=np.float64)
        dec_attn = dec.self_attn.num_parameters() + dec.cross_attn.num_parameters()
        dec_norms = sum(n.num_parameters() for n in (dec.norm1, dec.norm2, dec.norm3))
        out[int(F)] = {"ffn": ffn, "attention": attn, "norms": norms, "ffn_share": ffn / block.num_parameters(),
                       "decoder_attention": dec_attn, "decoder_norms": dec_norms,
                       "decoder_ffn_share": dec.ff.num_parameters() / dec.num_parameters()}
    return out


class ActivationStats(NamedTuple):
    """ReLU and GELU on a real layer's pre-activations (:func:`activation_stats`)."""

    n: int  # pre-activations a = x W_1 + b_1 looked at
    negative_share: float  # share of a < 0
    zero_grad: dict  # activation -> share of entries whose derivative act'(a) is exactly 0
    max_gelu_minus_relu: float  # max |GELU(z) - ReLU(z)| over z: where the two differ most
    argmax_gelu_minus_relu: float  # at this z
    max_gelu_tanh_error: float  # max |gelu_tanh(z) - gelu(z)|: the tanh form against the exact one


def activation_stats(seed: int = 0) -> ActivationStats:
    """The first encoder block's FFN pre-activations of an untrained lesson model on a
    batch of the lesson's task; the activations' derivatives there; and the largest gaps
    between ReLU, GELU and its tanh approximation on a fine grid of z in [-6, 6]."""
    task = lesson5_task()
    model = EncoderDecoder(lesson5_model_config(task, seed))
    batch = task.batch(task.dataset(32, seed=seed + 30_000))
    _, cache = model.encode(batch.input_ids)
    a = cache.layers[0].ff.f.act  # (B, S, F) the pre-activation cached for act'(a)
    real = batch.input_ids != model.config.pad_id  # (B, S)
    a = a[real]  # (N, F) real positions only
    zero = {}
    for name in ("relu", "gelu", "gelu_tanh"):
        _, backward = get_activation(name)
        zero[name] = float(np.mean(backward(np.ones_like(a), a) == 0.0))
    z = np.linspace(-6.0, 6.0, 12001)
    gelu = get_activation("gelu")[0](z)[0]
    gap = np.abs(gelu - get_activation("relu")[0](z)[0])
    return ActivationStats(int(a.size), float(np.mean(a < 0)), zero, float(gap.max()), float(z[gap.argmax()]),
                           float(np.abs(get_activation("gelu_tanh")[0](z)[0] - gelu).max()))


FFN_VARIANTS = (("relu", 32), ("relu", 128), ("gelu_tanh", 32))
"""(activation, F) of :func:`ffn_runs`: F = D and the customary 4D with ReLU, and GELU at F = D."""


@once_per_process
def ffn_runs(seed: int = 0) -> dict[tuple[str, int], Trained]:
    """One encoder and one decoder block (else the lesson's model), trained by
    :func:`lesson5_train_config` on the lesson's task with each FFN of :data:`FFN_VARIANTS`:
    ``(activation, F)`` -> run.  Same seed: the same batches; the weights outside the
    FFN start the same too only when F is the same."""
    task = lesson5_task()
    return {(act, F): train_fresh(task, lesson5_model_config(task, seed, n_encoder_layers=1, n_decoder_layers=1,
                                                             d_ff=F, activation=act), lesson5_train_config(seed))
            for act, F in FFN_VARIANTS}


def inactive_units(model: EncoderDecoder, batch: Batch) -> dict[str, float]:
    """Share of each FFN's F hidden units whose pre-activation is <= 0 at every real
    position of ``batch`` (teacher-forced forward, eval mode): under ReLU such a unit passes
    no gradient to its first-layer weights on these data.  ``{"encoder_layers.0.ff": share, ...}``."""
    check_model(model)
    check_batch(batch)
    with model.evaluating():
        _, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    src_real = batch.input_ids != model.config.pad_id  # (B, S)
    tgt_real = batch.labels != IGNORE_INDEX  # (B, T)
    out = {}
    for side, layers, real in (("encoder_layers", cache.encoder.layers, src_real),
                               ("decoder_layers", cache.decoder.layers, tgt_real)):
        for l, c in enumerate(layers):
            a = c.ff.f.act[real]  # (N, F) the pre-activations at real positions
            out[f"{side}.{l}.ff"] = float(np.mean((a <= 0).all(axis=0)))
    return out


# =====================================================================================
# 5. Positions: positions.py, re-exported above
# =====================================================================================
