"""Lesson 3 (*The causal mask*): the runs and measurements.

Everything here runs minitf's own masks (:mod:`minitf.masks`), softmax
(:mod:`minitf.layers.softmax`), attention (:mod:`minitf.attention`) and models; the notebook
prints what these functions return and :mod:`minitf.course.l03_causal_mask.figures` draws it.

======================================  ===================================================
section of Lesson 3                     what is measured, and where
======================================  ===================================================
1  why a decoder must not see the       :func:`future_influence` (change the inputs after
   future                               position t: how much the logits at t move, with and
                                        without the mask, same weights); :func:`leak_runs`
                                        (a short honest run and a short unmasked run,
                                        :func:`~minitf.course.kit.leakage.train_variant`, as Lesson 8);
                                        :func:`leak_batch`
2  masking before the softmax           :func:`mask_value_rows` (-1e9 vs -inf, float32 vs
                                        float64, a partly and a fully masked row);
                                        :func:`after_softmax_mistake` (a 0/1 mask applied
                                        after the softmax: row sums, leak, renormalising)
3  padding masks, fully-masked rows     :func:`padded_example` (causal + key padding on a
                                        left-padded batch, through the real attention
                                        forward and backward)
4  the mask in the backward             :func:`mask_backward_check` (dL/dscores, read by
                                        name from minitf's backward: exact zeros on masked
                                        scores; finite differences in float64)
======================================  ===================================================

Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...attention import scaled_dot_product_attention, scaled_dot_product_attention_backward
from ...checks import check_int
from ...data import SPECIAL_TOKENS, Batch
from ...gradcheck import check_gradients, numerical_gradient, rel_error
from ...layers.softmax import softmax
from ...masks import MASK_VALUE, causal_mask, key_padding_mask
from ...models import EncoderDecoder
from ..kit.runs import check_batch, check_model, copy_model, once_per_process
from ..kit.leakage import reverse_model_config, reverse_task, reverse_train_config, train_variant

__all__ = [
    "LEAK_STEPS", "LEAK_EVAL_SIZE", "leak_batch", "future_influence", "FutureInfluence", "leak_runs",
    "MaskRow", "mask_value_rows", "AfterSoftmax", "after_softmax_mistake",
    "PAD_ID", "PaddedExample", "padded_example",
    "MaskBackward", "mask_backward_check",
]

LEAK_STEPS = 300  # training steps of each run of :func:`leak_runs` (about a second each)
LEAK_EVAL_SIZE = reverse_train_config().eval_size  # fixed examples each run of :func:`leak_runs` is evaluated on


def leak_batch(seed: int = 0, size: int = 32) -> Batch:
    """A fixed batch of ``size`` examples of the leak runs' task (the shared
    :func:`~minitf.course.kit.leakage.reverse_task`; the same examples as Lesson 8's batch)."""
    task = reverse_task()
    return task.batch(task.dataset(check_int("size", size, low=1), seed=seed + 30_000))


# ---- section 1: the leak, measured -----------------------------------------------------------------
class FutureInfluence(NamedTuple):
    """How far the logits at each position move when the decoder inputs after it change."""

    masked: np.ndarray  # (T,) max |delta logits| at position t, model as trained (causal mask)
    unmasked: np.ndarray  # (T,) the same weights, decoder built with causal=False
    n_examples: int  # B


def future_influence(model: EncoderDecoder, batch: Batch, seed: int = 0) -> FutureInfluence:
    """For each position t: replace every decoder input *after* t by a random token and
    measure ``max |logits[:, t] - logits'[:, t]|`` over the batch and the vocabulary.

    Done twice with the same weights: the model as it is (causal mask) and its copy built
    with ``causal=False`` (:func:`~minitf.course.kit.runs.copy_model`).  Eval mode.
    """
    check_model(model)
    check_batch(batch)
    rng = np.random.default_rng(seed)
    src, dec = batch.input_ids, batch.decoder_input_ids  # (B, S), (B, T)
    B, T = dec.shape
    n_special = len(SPECIAL_TOKENS)  # <pad> <bos> <eos> <unk>: replacements are ordinary tokens
    out = {}
    for name, m in (("masked", model), ("unmasked", copy_model(model, causal=False))):
        with m.evaluating():
            base, _ = m.forward(src, dec)  # (B, T, V)
            moved = np.zeros(T)
            for t in range(T - 1):
                changed = dec.copy()
                changed[:, t + 1:] = rng.integers(n_special, model.config.tgt_vocab_size, size=(B, T - t - 1))
                logits, _ = m.forward(src, changed)  # (B, T, V)
                moved[t] = np.max(np.abs(logits[:, t] - base[:, t]))
        out[name] = moved  # the last position has no future: 0 by construction
    return FutureInfluence(out["masked"], out["unmasked"], B)


@once_per_process
def leak_runs(seed: int = 0) -> dict:
    """Two short runs of Lesson 8's task with the same small model (one encoder block, one
    decoder block), seed and :data:`LEAK_STEPS` steps: ``{"teacher_forced": Run,
    "no_causal_mask": Run}`` (:func:`~minitf.course.kit.leakage.train_variant`, as Lesson 8;
    the second decoder is built with ``causal=False``).  Each is evaluated once, at the
    end: teacher-forced loss and free-running exact match on 128 examples."""
    task = reverse_task()
    model_config = reverse_model_config(task, seed, n_encoder_layers=1, n_decoder_layers=1)
    train_config = reverse_train_config(seed, steps=LEAK_STEPS, eval_every=0)
    return {v: train_variant(v, task, model_config, train_config) for v in ("teacher_forced", "no_causal_mask")}


# ---- section 2: masking before the softmax ---------------------------------------------------------
class MaskRow(NamedTuple):
    """One row of scores, masked additively and pushed through minitf's softmax."""

    dtype: str
    mask_value: float
    row: str  # "partly masked" or "fully masked"
    weights: np.ndarray  # (S,) the softmax output
    masked_weight: float  # the largest weight on a blocked key (nan if any nan)
    row_sum: float
    has_nan: bool


# one row of S = 4 scores; "partly masked" blocks the last two keys, "fully masked" all four
_SCORES = np.array([0.5, -1.2, 2.0, 0.3])
_PARTLY = np.array([False, False, True, True])


def mask_value_rows(mask_values=(MASK_VALUE, -np.inf)) -> list[MaskRow]:
    """softmax(scores + mask) for each dtype (float32, float64), each mask value, a partly and a
    fully masked row.  (minitf's attention refuses -inf masks, so this calls the softmax itself.)"""
    rows = []
    for dtype in ("float32", "float64"):
        for value in mask_values:
            for kind, blocked in (("partly masked", _PARTLY), ("fully masked", np.ones(4, bool))):
                mask = np.where(blocked, value, 0.0).astype(dtype)  # (S,)
                with np.errstate(invalid="ignore"):  # -inf - (-inf) = nan: that is the point
                    p = softmax(_SCORES.astype(dtype) + mask)  # (S,)
                rows.append(MaskRow(dtype, float(value), kind, p, float(np.max(p[blocked])), float(p.sum()),
                                    bool(np.isnan(p).any())))
    return rows


class AfterSoftmax(NamedTuple):
    """A 0/1 mask multiplied in after the softmax, against the additive mask before it."""

    right: np.ndarray  # (T, T) softmax(scores + causal mask): the right weights
    wrong: np.ndarray  # (T, T) softmax(scores) * keep: future weights zeroed after normalising
    row_sums: np.ndarray  # (T,) of `wrong`
    leak_wrong: float  # max |change of the outputs at 0..T-2| when only the last key changes, 0/1 after
    leak_right: float  # the same with the additive mask before the softmax (minitf's attention)
    renorm_gaps: np.ndarray  # (n,) how far a future score sits above the kept ones
    renorm_error: np.ndarray  # (n,) max |renormalised wrong - right| on such a row, float32
    renorm_nan: np.ndarray  # (n,) bool: renormalising divided 0 by 0


def after_softmax_mistake(seed: int = 0, T: int = 5, Dh: int = 8) -> AfterSoftmax:
    """Measure what goes wrong when the causal mask is a 0/1 factor after the softmax.

    Random Q, K, V (1, 1, T, Dh) in float64.  ``wrong = softmax(scores) * keep``: its rows sum
    to less than 1, and the output at t still depends on the keys after t (through the
    softmax's denominator).  Renormalising (``wrong / wrong.sum()``) is the right answer in exact
    arithmetic, but not in floating point once a future score dominates: a float32 row
    ``[0, 1, gap]`` with the last key blocked, for growing ``gap``.  (The leak is measured by
    changing only the last key, which rows 0 .. T-2 must not see.)
    """
    T, Dh = check_int("T", T, low=2), check_int("Dh", Dh, low=1)
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((1, 1, T, Dh)) for _ in range(3))  # (B, H, T, Dh)
    keep = (causal_mask(T, dtype=np.float64) == 0).astype(np.float64)  # (T, T) 1 = may attend

    def outputs(K_):
        scores = Q @ K_.swapaxes(-1, -2) / np.sqrt(Dh)  # (1, 1, T, T)
        wrong = softmax(scores) * keep  # the mistake: normalise over every key, then zero the future
        right_out, cache = scaled_dot_product_attention(Q, K_, V, causal_mask(T, dtype=np.float64))
        return wrong[0, 0], wrong @ V, cache.A[0, 0], right_out

    wrong, wrong_out, right, right_out = outputs(K)
    K_new = K.copy()
    K_new[..., -1, :] = rng.standard_normal(Dh)  # only the last key changes: rows 0..T-2 must not move
    _, wrong_out_new, _, right_out_new = outputs(K_new)
    leak_wrong = float(np.max(np.abs(wrong_out_new - wrong_out)[..., :-1, :]))
    leak_right = float(np.max(np.abs(right_out_new - right_out)[..., :-1, :]))

    gaps = np.array([10.0, 80.0, 90.0, 95.0, 100.0, 105.0, 110.0])
    errors, nans = [], []
    blocked = np.array([False, False, True])
    for gap in gaps:
        row = np.array([0.0, 1.0, gap], dtype=np.float32)  # (S,) the blocked key scores highest
        good = softmax(row + np.where(blocked, MASK_VALUE, 0.0).astype(np.float32))
        p = softmax(row) * ~blocked
        with np.errstate(invalid="ignore"):
            renorm = p / p.sum()
        nans.append(bool(np.isnan(renorm).any()))
        errors.append(float(np.nanmax(np.abs(renorm - good))) if not nans[-1] else np.nan)
    return AfterSoftmax(right, wrong, wrong.sum(axis=-1), leak_wrong, leak_right, gaps, np.array(errors),
                        np.array(nans))


# ---- section 3: padding masks and fully-masked rows ---------------------------------------------------
PAD_ID = 0  # minitf's <pad>


class PaddedExample(NamedTuple):
    """Causal + key padding attention on a left-padded batch (:func:`padded_example`)."""

    ids: np.ndarray  # (B, T) token ids, PAD_ID = padding (left-padded)
    causal: np.ndarray  # (T, T) additive
    padding: np.ndarray  # (B, 1, 1, T) additive
    mask: np.ndarray  # (B, 1, T, T) their sum
    dead_rows: np.ndarray  # (B, T) bool: queries with no key left to attend to
    A: np.ndarray  # (B, H, T, T) attention weights from minitf's forward
    out: np.ndarray  # (B, H, T, Dh)
    dQ: np.ndarray  # (B, H, T, Dh) from minitf's backward, for a random upstream gradient
    dK: np.ndarray
    dV: np.ndarray
    plain_softmax: np.ndarray  # (B, H, T, T) softmax(scores + mask) without minitf's zeroing


def padded_example(seed: int = 0, dtype: str = "float64", H: int = 1, Dh: int = 4) -> PaddedExample:
    """Two sequences of T = 5: ``[a b c d e]`` and a left-padded ``[<pad> <pad> a b c]``.

    Each query may attend to keys at or before it (causal) that are not padding: the padded
    sequence's first two queries have *no* key left.  Random Q, K, V and a random upstream
    gradient go through :func:`minitf.attention.scaled_dot_product_attention` and its
    backward.
    """
    rng = np.random.default_rng(seed)
    ids = np.array([[4, 5, 6, 7, 8], [PAD_ID, PAD_ID, 4, 5, 6]])  # (B, T)
    B, T = ids.shape
    causal = causal_mask(T, dtype=dtype)  # (T, T)
    padding = key_padding_mask(ids, pad_id=PAD_ID, dtype=dtype)  # (B, 1, 1, T)
    mask = causal + padding  # (B, 1, T, T): both blocks add, -2e9 where both apply
    Q, K, V = (rng.standard_normal((B, H, T, Dh)).astype(dtype) for _ in range(3))
    out, cache = scaled_dot_product_attention(Q, K, V, mask)
    dout = rng.standard_normal(out.shape).astype(dtype)
    dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(dout, cache)
    dead = (mask.max(axis=-1) <= MASK_VALUE / 2)[:, 0]  # (B, T) every key blocked
    plain = softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(Dh) + mask)  # (B, H, T, T), no zeroing of dead rows
    return PaddedExample(ids, causal, padding, mask, dead, cache.A, out, dQ, dK, dV, plain)


# ---- section 4: the mask in the backward --------------------------------------------------------------
class MaskBackward(NamedTuple):
    """The backward under a mask (:func:`mask_backward_check`)."""

    dscores: np.ndarray  # (B, H, T, S) dL/dscores, minitf's backward's own (AttentionGrads.dscores); = dL/dmask
    blocked: np.ndarray  # (B, 1, T, S) bool, broadcastable to dscores
    max_abs_dscores_blocked: float  # exactly 0.0
    n_blocked_nonzero: int  # entries of dscores on blocked cells that are not exactly 0
    max_abs_dscores_allowed: float  # the allowed cells, for scale
    fd_dscores_error: float  # rel_error of dscores against finite differences w.r.t. the mask
    fd_blocked_max: float  # the finite-difference gradient on blocked cells: exactly 0 too
    dq_from_dscores_error: float  # max |dQ - scale * dscores @ K|: dscores is the backward's own
    fd_errors: dict  # rel_error of dQ, dK, dV against float64 finite differences


def mask_backward_check(seed: int = 0) -> MaskBackward:
    """The padded example of :func:`padded_example` (float64, H = 2): dL/dscores on blocked
    cells, and the whole attention backward against finite differences
    (:mod:`minitf.gradcheck`, every entry) for ``L = sum(out * G)`` with a random G."""
    ex = padded_example(seed, "float64", H=2, Dh=4)
    rng = np.random.default_rng(seed + 1)
    Q, K, V = (rng.standard_normal(ex.A.shape[:-1] + (4,)) for _ in range(3))  # (B, H, T, Dh)
    # (B, 1, T, T), float64, perturbed below for dL/dmask.  Shifted by -1 so that a +h step keeps
    # every value <= 0 as minitf's attention demands; a constant per row leaves the softmax unchanged.
    mask = ex.mask - 1.0
    out, cache = scaled_dot_product_attention(Q, K, V, mask)
    G = rng.standard_normal(out.shape)

    def loss() -> float:
        return float(np.sum(scaled_dot_product_attention(Q, K, V, mask)[0] * G))

    grads = scaled_dot_product_attention_backward(G, cache)
    dQ, dK, dV = grads.dQ, grads.dK, grads.dV
    # dL/dscores, before the 1/sqrt(Dh) scale (which belongs to Q K^T, not to the mask): the mask
    # is *added* to the scores, so this is also dL/dmask
    dscores = grads.dscores  # (B, H, T, T)
    blocked = mask <= MASK_VALUE / 2  # (B, 1, T, T)
    on_blocked = np.broadcast_to(blocked, dscores.shape)
    scale = 1.0 / np.sqrt(Q.shape[-1])
    # dL/dmask by finite differences: the mask is (B, 1, T, T), shared by the H heads -> sum over H
    fd_mask = numerical_gradient(loss, mask)
    fd_errors = check_gradients(loss, {"dQ": dQ, "dK": dK, "dV": dV}, {"dQ": Q, "dK": K, "dV": V},
                                max_entries=None, seed=seed)
    return MaskBackward(
        dscores, blocked, float(np.max(np.abs(dscores[on_blocked]))), int(np.count_nonzero(dscores[on_blocked])),
        float(np.max(np.abs(dscores[~on_blocked]))),
        rel_error(dscores.sum(axis=1, keepdims=True)[~blocked], fd_mask[~blocked]),
        float(np.max(np.abs(fd_mask[blocked]))),
        float(np.max(np.abs(dQ - scale * dscores @ K))), fd_errors)
