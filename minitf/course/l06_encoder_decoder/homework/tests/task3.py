"""Homework 6, task 6.3 (where the memory goes: activation bytes per part): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import fail

from .common import (Problem, STACK_PARTS, as_counts, call_on_config, check_parts, draw_problem,
                     minitf_activation_bytes)

HOMEWORK = "hw06"
task3 = pytest.mark.hw06_task3
KEYS = STACK_PARTS + ("total",)


# =====================================================================================
# Task 6.3 -- where the memory goes
# =====================================================================================
def memory_mistakes(problem: Problem, expected: dict) -> dict:
    """``{part: [(wrong - right, the mistake), ...]}`` in bytes, for the classic mistakes."""
    c, B, S, T = problem
    D, H, F, V = c.d_model, c.n_heads, c.d_ff, c.tgt_vocab_size
    Le, Ld = c.n_encoder_layers, c.n_decoder_layers
    q = np.dtype(c.dtype).itemsize
    q_other = 8 if q == 4 else 4
    ids = {"encoder": 8 * B * S, "decoder": 8 * B * T, "head": 0}
    dtype = (f"a {c.dtype} number takes {q} bytes, not {q_other}: the activations have the model's dtype, "
             f"config['dtype'] = {c.dtype!r} (np.dtype(...).itemsize)")
    no_A = ("forgot the attention weights A: every attention keeps its (B, H, queries, keys) weights for the "
            "backward, the only terms that grow with the square of the lengths")
    heads_A = "the attention weights have one matrix per head: (B, H, queries, keys), H times more"
    out = {part: [((q_other - q) * (expected[part] - ids[part]) // q, dtype)] for part in STACK_PARTS}
    out["encoder"] += [
        (-q * Le * B * H * S * S, no_A + ": (B, H, S, S) per encoder block"),
        (-q * Le * B * (H - 1) * S * S, heads_A),
        ((q - 8) * B * S, "the token ids are int64: 8 bytes each, whatever the model's dtype"),
        (-8 * B * S, "forgot the source token ids the embedding keeps (int64, 8 bytes each)"),
        (-q * (B * S * D + B * S), "forgot the encoder's final LayerNorm (its x_hat and rstd)"),
        (-q * (2 * Le + 1) * B * S, "forgot the LayerNorms' rstd, one number per position (shape (..., 1))"),
        (q * Le * B * S * D, "in a self-attention x_kv IS x_q: one array, counted once"),
    ]
    out["decoder"] += [
        (-q * Ld * B * H * (T * T + T * S), no_A + ": (B, H, T, T) and (B, H, T, S) per decoder block"),
        (-q * Ld * B * H * T * S, no_A + ": the cross-attention's (B, H, T, S) per decoder block"),
        (-q * Ld * B * H * T * T, no_A + ": the decoder self-attention's (B, H, T, T) per decoder block"),
        (-q * Ld * B * (H - 1) * (T * T + T * S), heads_A),
        (q * Ld * B * H * (T * S - T * T), "counted the decoder's self-attention weights as T x S: its queries and "
                                           "keys are both the T decoder positions, (B, H, T, T)"),
        (q * Ld * B * H * (T * T - T * S), "counted the cross-attention weights as T x T: T queries from the "
                                           "decoder against S keys from the encoder, (B, H, T, S)"),
        *([(q * (Ld - 1) * B * S * D, "counted H_enc once per decoder block: every cross-attention reads the same "
                                      "H_enc array, counted once"),
           (-q * B * S * D, "forgot H_enc, the cross-attentions' x_kv (one array, counted once in the decoder)")]
          if Ld else
          [(q * B * S * D, "counted H_enc with no decoder block: H_enc is kept as the cross-attentions' x_kv, and "
                           "with n_decoder_layers = 0 there is no cross-attention, so the decoder keeps no H_enc")]),
        (2 * q * Ld * B * (T - S) * D, "the cross-attention's K and V are projections of H_enc: S positions, "
                                       "(B, H, S, Dh) each, not T"),
        ((q - 8) * B * T, "the token ids are int64: 8 bytes each, whatever the model's dtype"),
        (-8 * B * T, "forgot the decoder input ids the embedding keeps (int64, 8 bytes each)"),
        (-q * (B * T * D + B * T), "forgot the decoder's final LayerNorm (its x_hat and rstd)"),
        (-q * (3 * Ld + 1) * B * T, "forgot the LayerNorms' rstd, one number per position (shape (..., 1))"),
        (q * Ld * B * T * D, "in a self-attention x_kv IS x_q: one array, counted once"),
    ]
    if c.dropout > 0:
        masks = ("counted dropout masks: the model is in evaluation mode (no dropout masks, whatever "
                 f"config['dropout'] = {c.dropout} says: dropout acts, and keeps its masks, in training only)")
        out["encoder"] += [(q * (B * S * D + Le * (2 * B * S * D + B * S * F)), masks)]
        out["decoder"] += [(q * (B * T * D + Ld * (3 * B * T * D + B * T * F)), masks)]
    out["head"] += [
        (q * B * T * V, "counted the logits: they are the forward's output, not part of the cache (the head keeps "
                        "H_dec only)"),
        (-q * B * T * D, "forgot the head's H_dec (B, T, D), kept for dW_U = H_dec^T dlogits"),
    ]
    return out


def check_memory(out, problem: Problem, expected: dict | None = None) -> dict:
    got = as_counts("activation_bytes", out, KEYS)
    expected = minitf_activation_bytes(problem) if expected is None else expected
    check_parts("activation_bytes", got, expected, STACK_PARTS, memory_mistakes(problem, expected),
                problem.describe(),
                hints={"encoder": "Per encoder block: the self-attention's and the feed-forward's arrays (see the "
                                  "docstring), with L = S",
                       "decoder": "Per decoder block: self-attention (L = T), cross-attention (T queries, S keys), "
                                  "feed-forward; H_enc once; the ids and the final norm once"})
    return got


@task3
def test_activation_bytes_in_float32(submission, homework_seed):
    activation_bytes = submission.function("activation_bytes")
    for k in range(2):
        problem = draw_problem(homework_seed + 300 + k, dtype="float32")
        check_memory(call_on_config(activation_bytes, *problem.args()), problem)


@task3
def test_activation_bytes_in_float64(submission, homework_seed):
    activation_bytes = submission.function("activation_bytes")
    problem = draw_problem(homework_seed + 310, dtype="float64", n_decoder_layers=3, norm_first=False)
    check_memory(call_on_config(activation_bytes, *problem.args()), problem)


@task3
def test_activation_bytes_without_decoder_blocks(submission, homework_seed):
    """n_decoder_layers = 0 (the decoder is its embedding and its final norm): no cross-attention
    reads H_enc, so the decoder keeps none; then no block in either stack."""
    activation_bytes = submission.function("activation_bytes")
    for k, fixed in enumerate(({"n_decoder_layers": 0}, {"n_decoder_layers": 0, "n_encoder_layers": 0})):
        problem = draw_problem(homework_seed + 330 + k, **fixed)
        check_memory(call_on_config(activation_bytes, *problem.args()), problem)


@task3
def test_activation_bytes_with_dropout_configured(submission, homework_seed):
    """config["dropout"] = 0.1, the model in evaluation mode: dropout does nothing and keeps no
    mask, so the bytes are those of dropout = 0."""
    activation_bytes = submission.function("activation_bytes")
    for k, dtype in enumerate(("float32", "float64")):
        problem = draw_problem(homework_seed + 340 + k, dropout=0.1, dtype=dtype)
        check_memory(call_on_config(activation_bytes, *problem.args()), problem)


@task3
def test_activation_bytes_as_B_S_T_grow(submission, homework_seed):
    """One model; the batch, then the source, then the target doubled."""
    activation_bytes = submission.function("activation_bytes")
    base = draw_problem(homework_seed + 320, max_len=40, n_decoder_layers=2)
    got = check_memory(call_on_config(activation_bytes, *base.args()), base)
    for letter in ("B", "S", "T"):
        bigger = base._replace(**{letter: 2 * getattr(base, letter)})
        out = call_on_config(activation_bytes, *bigger.args())
        grown = as_counts("activation_bytes", out, KEYS)
        if letter == "B" and grown["total"] == got["total"]:
            fail(f"activation_bytes: doubling B from {base.B} to {bigger.B} left the total at {got['total']:,} bytes "
                 f"({base.describe()}): every array the forward keeps has one slice per example, so activation "
                 f"memory grows in proportion to the batch size")
        if letter != "B" and grown["total"] == got["total"]:
            fail(f"activation_bytes: doubling {letter} left the total at {got['total']:,} bytes "
                 f"({base.describe()}): the arrays of the {'encoder' if letter == 'S' else 'decoder'} grow with "
                 f"its length")
        check_memory(out, bigger)
