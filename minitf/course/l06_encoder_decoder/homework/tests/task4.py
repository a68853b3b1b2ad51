"""Homework 6, task 6.4 (counting FLOPs: the forward's matrix products, and a training step): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import fail

from .common import (OVERFLOW, Problem, STACK_PARTS, as_counts, call_on_config, check_parts, diagnose, draw_problem,
                     minitf_forward_flops, wrapped_int64)

HOMEWORK = "hw06"
task4 = pytest.mark.hw06_task4
KEYS = STACK_PARTS + ("total",)


# =====================================================================================
# Task 6.4 (a) -- the forward's matrix products
# =====================================================================================
def flop_mistakes(problem: Problem, expected: dict) -> dict:
    """``{part: [(wrong - right, the mistake), ...]}`` in FLOPs, for the classic mistakes."""
    c, B, S, T = problem
    D, H, F, V_src, V_tgt = c.d_model, c.n_heads, c.d_ff, c.src_vocab_size, c.tgt_vocab_size
    Le, Ld = c.n_encoder_layers, c.n_decoder_layers
    two = ("forgot the factor 2: a matrix product (m x k) @ (k x n) is m n k multiplications AND m n k additions, "
           "2 m k n FLOPs")
    no_attention = ("forgot the attention's own products: in every head the scores Q K^T and the weighted sum A V, "
                    "two products of 2 x queries x keys x Dh FLOPs each")
    per_head = ("the scores and the weighted sum are made per head with width Dh = D / H: H heads x 2 x queries x "
                "keys x Dh = 2 x queries x keys x D each, not H times that")
    out = {part: [(-expected[part] // 2, two), (wrapped_int64(expected[part]) - expected[part], OVERFLOW)]
           for part in STACK_PARTS}
    out["encoder"] += [
        (-Le * 4 * B * S * S * D, no_attention),
        (Le * 4 * B * S * S * D * (H - 1), per_head),
        (-Le * 2 * B * S * D * F, "the feed-forward makes two products, x @ W_1 (D -> F) and h @ W_2 (F -> D)"),
        (-Le * 4 * B * S * D * D, "an attention makes four projections, x_q W_q, x_kv W_k, x_kv W_v and o W_o"),
    ]
    out["decoder"] += [
        (-Ld * 4 * B * D * (T * T + T * S), no_attention),
        (-Ld * 4 * B * T * S * D, no_attention + " (the cross-attention's are missing)"),
        (-Ld * 4 * B * T * T * D, no_attention + " (the self-attention's are missing)"),
        (Ld * 4 * B * D * (T * T + T * S) * (H - 1), per_head),
        (Ld * 4 * B * D * (T * S - T * T), "the decoder's self-attention is T x T: its products Q K^T and A V are "
                                           "over T queries and T keys, not T x S"),
        (Ld * 4 * B * D * D * (T - S), "the cross-attention's K and V project H_enc: S rows, not T (x_kv W_k and "
                                       "x_kv W_v are (B S x D) @ (D x D))"),
        (-Ld * (4 * B * T * D * D + 4 * B * S * D * D + 4 * B * T * S * D),
         "forgot the cross-attention of the decoder blocks: its four projections and its T x S products"),
        (-Ld * 2 * B * T * D * F, "the feed-forward makes two products, x @ W_1 (D -> F) and h @ W_2 (F -> D)"),
    ]
    head = 2 * B * T * D * V_tgt
    out["head"] += [
        (-head, "the output projection was forgotten (a tied W_U is still multiplied: tying shares the matrix, not "
                "the product)" if c.tie_output else "the output projection H_dec @ W_U was forgotten"),
        (2 * B * T * D * (V_src - V_tgt), "the output projection is V_tgt wide: (B T x D) @ (D x V_tgt), the "
                                          "TARGET vocabulary"),
        (2 * B * T * D * D - head, "the output projection is (B T x D) @ (D x V_tgt), V_tgt wide, not D x D"),
        (2 * B * S * D * V_tgt - head, "the output projection is made at the T decoder positions, not the S source "
                                       "positions"),
    ]
    return out


def check_forward_flops(out, problem: Problem) -> dict:
    got = as_counts("forward_flops", out, KEYS)
    expected = minitf_forward_flops(problem)
    check_parts("forward_flops", got, expected, STACK_PARTS, flop_mistakes(problem, expected), problem.describe(),
                hints={"encoder": "Per encoder block: an attention (S queries, S keys) and a feed-forward",
                       "decoder": "Per decoder block: a self-attention (T x T), a cross-attention (T queries, S keys "
                                  "and values) and a feed-forward",
                       "head": "The head: H_dec @ W_U"})
    return expected


@task4
def test_forward_flops_per_part(submission, homework_seed):
    forward_flops = submission.function("forward_flops")
    for k in range(3):
        problem = draw_problem(homework_seed + 400 + k, share_embeddings=False)
        check_forward_flops(call_on_config(forward_flops, *problem.args()), problem)


@task4
def test_forward_flops_of_a_tied_head(submission, homework_seed):
    """A tied head still makes its product."""
    forward_flops = submission.function("forward_flops")
    problem = draw_problem(homework_seed + 410, tie_output=True)
    check_forward_flops(call_on_config(forward_flops, *problem.args()), problem)


@task4
def test_forward_flops_as_lengths_grow(submission, homework_seed):
    """One model: S, then T doubled (the attention products grow with the square)."""
    forward_flops = submission.function("forward_flops")
    base = draw_problem(homework_seed + 420, max_len=40)
    for problem in (base, base._replace(S=2 * base.S), base._replace(T=2 * base.T)):
        check_forward_flops(call_on_config(forward_flops, *problem.args()), problem)


# =====================================================================================
# Task 6.4 (b) -- a training step
# =====================================================================================
def check_training_flops(out, problem: Problem) -> None:
    got = as_counts("training_flops", out, ("forward", "backward", "total"))
    forward = minitf_forward_flops(problem)["total"]
    if got["forward"] != forward:
        diagnose("training_flops(...)['forward']", got["forward"], forward,
                 [(wrapped_int64(forward) - forward, OVERFLOW)], problem.describe(),
                 "It is the whole forward pass, forward_flops(...)['total']")
    diagnose_backward = [
        (-forward, "the backward costs about twice the forward, not the same: every forward product C = X @ W "
                   "has two backward products of its size, dX = dC @ W^T and dW = X^T @ dC"),
        (-2 * forward, "the backward makes products too: two per forward product (dX and dW)"),
        (wrapped_int64(2 * forward) - 2 * forward, OVERFLOW)]
    if got["backward"] != 2 * forward:
        diagnose("training_flops(...)['backward']", got["backward"], 2 * forward, diagnose_backward,
                 problem.describe())
    if got["total"] != got["forward"] + got["backward"]:
        fail(f"training_flops(...)['total']: expected forward + backward = {got['forward'] + got['backward']:,}, "
             f"received {got['total']:,} ({problem.describe()})"
             + (f": {OVERFLOW}" if got["total"] == wrapped_int64(got["forward"] + got["backward"]) else ""))


@task4
def test_training_step_flops(submission, homework_seed):
    training_flops = submission.function("training_flops")
    for k in range(2):
        problem = draw_problem(homework_seed + 430 + k)
        check_training_flops(call_on_config(training_flops, *problem.args()), problem)


# =====================================================================================
# A large model: counts past int64
# =====================================================================================
def draw_large_problem(seed: int) -> Problem:
    """A large model on a large batch, counted by formula only (no model is built): H in 96..128
    heads of width 256 (D = 24,576 to 32,768), F = 4 D + a little, vocabularies of 32,000 to
    256,000 (distinct), 32 to 64 blocks per stack, B in 4,096..16,384, S and T in
    16,384..65,536 (distinct).  Each stack's forward FLOPs are above 3e19, past the int64
    maximum (about 9.2e18): NumPy's integers wrap around there, Python's ints are exact."""
    rng = np.random.default_rng(seed)
    H = int(rng.integers(96, 129))
    D = 256 * H
    V_src = int(rng.integers(32_000, 256_001))
    S = int(rng.integers(16_384, 65_537))
    T = int(rng.integers(16_384, 65_536))
    T = T + 1 if T >= S else T  # T != S
    fixed = dict(n_heads=H, d_model=D, d_ff=4 * D + int(rng.integers(1, D)), src_vocab_size=V_src,
                 tgt_vocab_size=V_src + int(rng.integers(1, 20_000)), share_embeddings=False,
                 n_encoder_layers=int(rng.integers(32, 65)), n_decoder_layers=int(rng.integers(32, 65)),
                 max_len=max(S, T))
    return draw_problem(seed + 1, B=int(rng.integers(4_096, 16_385)), S=S, T=T, **fixed)


@task4
def test_flops_of_a_large_model(submission, homework_seed):
    """The forward and a training step of a large model: counts past int64, exact."""
    problem = draw_large_problem(homework_seed + 440)
    check_forward_flops(call_on_config(submission.function("forward_flops"), *problem.args()), problem)
    check_training_flops(call_on_config(submission.function("training_flops"), *problem.args()), problem)
