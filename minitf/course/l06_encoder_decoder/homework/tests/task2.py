"""Homework 6, task 6.2 (counting parameters, part by part, against num_parameters()): the public tests."""
from __future__ import annotations

import pytest

from minitf.config import ModelConfig

from .common import (PARAMETER_PARTS, Problem, as_counts, call_on_config, check_parts, describe_config, draw_problem,
                     minitf_parameters)

HOMEWORK = "hw06"
task2 = pytest.mark.hw06_task2


# =====================================================================================
# Task 6.2 -- counting parameters
# =====================================================================================
def parameter_mistakes(c: ModelConfig) -> dict:
    """``{part: [(wrong - right, the mistake), ...]}`` for the classic mistakes of each part."""
    D, F, V_src, V_tgt = c.d_model, c.d_ff, c.src_vocab_size, c.tgt_vocab_size
    Le, Ld, n = c.n_encoder_layers, c.n_decoder_layers, c.max_len
    attention = 4 * D * D + 4 * D
    ln = ("a LayerNorm has two vectors of D parameters, gamma (the gain) and beta (the bias): 2 D, not D")
    no_ln = "forgot the LayerNorm parameters (gamma and beta, 2 D per LayerNorm)"
    no_bias = ("forgot the biases: every Linear of minitf has one, b_q, b_k, b_v, b_o (D each) in an attention, "
               "b_1 (F) and b_2 (D) in the feed-forward")
    out = {
        "W_U": [],
        "tgt_embed": [],
        "positions": [],
        "src_embed": [(D * (V_tgt - V_src), "the source table has one row per SOURCE token: V_src x D")],
        "encoder_layers": [
            (-Le * 4 * D, f"{no_ln}; an encoder block has two of them, one per sub-layer (4 D per block) -- or the "
                          f"attention's four biases are missing (also 4 D)"),
            (-Le * 2 * D, ln),
            (-Le * (5 * D + F), no_bias),
            (-Le * (9 * D + F), "forgot the biases and the LayerNorms: only the weight matrices are counted"),
        ],
        "decoder_layers": [
            (-Ld * attention, "forgot the cross-attention in the decoder blocks: each decoder block has a "
                              "self-attention AND a cross-attention (W_q, W_k, W_v, W_o and their biases: "
                              "4 D^2 + 4 D), and a third LayerNorm in front of it"),
            (-Ld * (attention + 2 * D), "forgot the cross-attention in the decoder blocks, and its LayerNorm: a "
                                        "decoder block is self-attention + cross-attention + feed-forward, three "
                                        "sub-layers with three LayerNorms"),
            (-Ld * 6 * D, f"{no_ln}; a decoder block has three of them (6 D per block)"),
            (-Ld * 2 * D, "a decoder block has three LayerNorms, one per sub-layer (self-attention, "
                          "cross-attention, feed-forward), not two"),
            (-Ld * 3 * D, ln),
            (-Ld * (9 * D + F), no_bias),
            (-Ld * (15 * D + F), "forgot the biases and the LayerNorms: only the weight matrices are counted"),
        ],
        "encoder_norm": [(-2 * D, "forgot the final norms: each stack ends with its own LayerNorm "
                                  "(encoder_norm, 2 D parameters), after its last block"), (-D, ln)],
        "decoder_norm": [(-2 * D, "forgot the final norms: each stack ends with its own LayerNorm "
                                  "(decoder_norm, 2 D parameters), after its last block"), (-D, ln)],
    }
    if c.tie_output:
        out["W_U"] += [(D * V_tgt, "the tied output matrix was counted twice: with tie_output, W_U is the target "
                                   "embedding's W_E transposed, one array read twice, counted once (in tgt_embed, "
                                   "or src_embed when shared); W_U has no parameters of its own")]
    else:
        out["W_U"] += [(-D * V_tgt, "the untied head has its own matrix W_U, D x V_tgt"),
                       (D * (V_src - V_tgt), "W_U maps to the TARGET vocabulary: D x V_tgt")]
    if not c.tie_output:
        out["W_U"] += [(V_tgt, "W_U has no bias in minitf: logits = H_dec @ W_U")]
    if c.share_embeddings:
        out["tgt_embed"] += [(V_tgt * D, "the shared embedding table was counted twice: with share_embeddings, "
                                         "source and target read one table, owned by src_embed")]
    else:
        if V_src == V_tgt:
            out["tgt_embed"] += [(-V_tgt * D, f"sharing is the config's share_embeddings flag, not equal vocabulary "
                                              f"sizes: here share_embeddings=False, so the target side has its own "
                                              f"table (V_tgt x D) although V_src = V_tgt = {V_tgt}")]
        elif c.tie_output:
            out["tgt_embed"] += [(-V_tgt * D, "tying removes W_U, not the target embedding table: the table stays "
                                              "(V_tgt x D) and the head reads it transposed")]
        else:
            out["tgt_embed"] += [(-V_tgt * D, "the target side has its own embedding table, V_tgt x D, unless "
                                              "share_embeddings")]
        out["tgt_embed"] += [(D * (V_src - V_tgt), "the target table has one row per TARGET token: V_tgt x D")]
    if c.positional == "learned":
        out["positions"] += [(-n * D, "learned positions: one table (max_len x D) per side, src_pos and tgt_pos"),
                             (-2 * n * D, "learned positions are parameters: a max_len x D table per side")]
    else:
        out["positions"] += [(2 * n * D, "sinusoidal positions are a fixed table, computed, not learned: 0 "
                                         "parameters"),
                             (n * D, "sinusoidal positions are a fixed table, computed, not learned: 0 parameters")]
    return out


def check_parameter_count(out, config: ModelConfig) -> None:
    got = as_counts("parameter_count", out, PARAMETER_PARTS + ("total",))
    expected = minitf_parameters(config)
    check_parts("parameter_count", got, expected, PARAMETER_PARTS, parameter_mistakes(config),
                describe_config(config),
                hints={"encoder_layers": "An encoder block: self-attention, feed-forward, a LayerNorm per sub-layer",
                       "decoder_layers": "A decoder block: self-attention, cross-attention, feed-forward, a "
                                         "LayerNorm per sub-layer"})


@task2
def test_parameters_of_separate_embeddings(submission, homework_seed):
    """Two tables and an untied head; sinusoidal positions (no parameters) and learned (two tables)."""
    parameter_count = submission.function("parameter_count")
    for k, positional in enumerate(("sinusoidal", "learned")):
        problem = draw_problem(homework_seed + 200 + k, share_embeddings=False, tie_output=False, positional=positional)
        check_parameter_count(call_on_config(parameter_count, *problem.args()[:1]), problem.config)


@task2
def test_parameters_of_tied_output(submission, homework_seed):
    """tie_output: W_U is the target table transposed, counted once."""
    parameter_count = submission.function("parameter_count")
    problem = draw_problem(homework_seed + 210, share_embeddings=False, tie_output=True)
    check_parameter_count(call_on_config(parameter_count, *problem.args()[:1]), problem.config)


@task2
def test_parameters_of_shared_embeddings(submission, homework_seed):
    """share_embeddings (one table), alone and with a tied head (one table for three uses)."""
    parameter_count = submission.function("parameter_count")
    for k, tie in enumerate((False, True)):
        problem = draw_problem(homework_seed + 220 + k, share_embeddings=True, tie_output=tie)
        check_parameter_count(call_on_config(parameter_count, *problem.args()[:1]), problem.config)


@task2
def test_parameters_of_equal_vocabularies_not_shared(submission, homework_seed):
    """Two vocabularies of the same size with share_embeddings=False, untied and tied: two
    tables all the same (only the flag shares one)."""
    parameter_count = submission.function("parameter_count")
    for k, tie in enumerate((False, True)):
        problem = draw_problem(homework_seed + 240 + k, share_embeddings=False, tie_output=tie)
        config = problem.config.replace(tgt_vocab_size=problem.config.src_vocab_size)
        check_parameter_count(call_on_config(parameter_count, config.to_dict()), config)


@task2
def test_parameters_of_random_configurations(submission, homework_seed):
    """Four configurations, everything at random (post-LN among them: the same parameters)."""
    parameter_count = submission.function("parameter_count")
    for k in range(4):
        problem: Problem = draw_problem(homework_seed + 230 + k)
        check_parameter_count(call_on_config(parameter_count, *problem.args()[:1]), problem.config)
