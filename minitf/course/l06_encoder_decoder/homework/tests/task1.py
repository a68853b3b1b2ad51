"""Homework 6, task 6.1 (from source ids to logits: every shape on the way): the public tests."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.grading.asserts import fail

from .common import Problem, call_on_config, draw_problem, minitf_shapes

HOMEWORK = "hw06"
task1 = pytest.mark.hw06_task1
SHAPE_NAMES = ("src_ids", "src_mask", "src_embed", "enc_self_q", "enc_self_scores", "enc_ff_hidden", "enc_out",
               "tgt_ids", "causal_mask", "tgt_embed", "dec_self_scores", "cross_q", "cross_k", "cross_scores",
               "cross_merged", "dec_ff_hidden", "dec_out", "W_U", "logits")
SCORES = ("enc_self_scores", "dec_self_scores", "cross_scores")


# =====================================================================================
# Task 6.1 -- from source ids to logits: every shape on the way
# =====================================================================================
def as_shapes(out) -> dict:
    """The student's dict, every value a tuple of ints."""
    if not isinstance(out, dict):
        fail(f"shapes: expected a dict {{name: shape}} with the names of SHAPE_NAMES, received {type(out).__name__}")
    missing = [n for n in SHAPE_NAMES if n not in out]
    if missing:
        fail(f"shapes: the dict lacks {missing}; expected every name of SHAPE_NAMES")
    shapes = {}
    for name in SHAPE_NAMES:
        value = out[name]
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in value):
            fail(f"shapes(...)[{name!r}]: expected a tuple of ints, e.g. (B, S), received {value!r}"[:300])
        shapes[name] = tuple(int(n) for n in value)
    return shapes


def diagnose_shape(name: str, got: tuple, want: tuple, problem: Problem) -> str:
    """The classic mistake that gives ``got`` for ``name``, as a sentence; "" if none is recognised."""
    x = problem.letters
    B, S, T, D, H, Dh, F = (x[k] for k in ("B", "S", "T", "D", "H", "Dh", "F"))
    V_src, V_tgt = x["V_src"], x["V_tgt"]
    if name in SCORES and len(want) == 4 and got == (want[0],) + want[2:]:
        return ("the heads dimension is forgotten: every head computes its own scores, so the scores are "
                f"(B, H, queries, keys) = {want}, one matrix per example AND per head")
    if name == "cross_scores" and got == (B, H, S, T):
        return ("the cross-attention scores have (T, S) swapped: their rows are the T queries, which come from the "
                "decoder, and their columns the S keys, which come from the encoder: (B, H, T, S)")
    if name == "dec_self_scores" and got == (B, H, T, S):
        return ("the decoder's self-attention is T x T, not T x S: its queries AND its keys are the T decoder "
                "positions; only cross-attention meets the S source positions")
    if name == "cross_scores" and got == (B, H, T, T):
        return ("the cross-attention scores are T x S, not T x T: the keys come from the encoder output H_enc "
                "(S positions), not from the decoder")
    if name == "cross_k" and got == (B, H, T, Dh):
        return ("the cross-attention keys come from the encoder output H_enc: S positions, (B, H, S, Dh); only the "
                "queries come from the decoder")
    if name == "cross_q" and got == (B, H, S, Dh):
        return "the cross-attention queries come from the decoder: T positions, (B, H, T, Dh)"
    if name in ("enc_self_q", "cross_q", "cross_k") and len(got) == 4 and got[-1] == D and got[:3] == want[:3]:
        return f"each head has width Dh = D / H = {Dh}, not D = {D}: the heads split D between them"
    if name in ("enc_self_q", "cross_q", "cross_k") and got == (want[0], want[2], D):
        return ("not split into heads: minitf's attention works on (B, H, length, Dh), the projection "
                "(B, length, D) reshaped to (B, length, H, Dh) and transposed")
    if name in ("logits", "W_U") and V_src != V_tgt and V_src in got and got == tuple(V_src if n == V_tgt else n
                                                                                      for n in want):
        return (f"the logits range over the TARGET vocabulary (V_tgt = {V_tgt}), not the source's (V_src = "
                f"{V_src}): the decoder predicts target tokens")
    if name == "W_U" and got == (V_tgt, D):
        return (f"W_U is (D, V_tgt) = {want} in minitf's layout, logits = H_dec @ W_U (tied, it is the "
                f"embedding's (V_tgt, D) table transposed)")
    if name in ("enc_ff_hidden", "dec_ff_hidden") and got == want[:-1] + (D,):
        return f"the feed-forward hidden layer is F = d_ff = {F} wide, not D"
    if name == "src_mask" and got in ((B, S), (B, 1, S), (B, S, S), (B, H, S, S), (B, 1, S, 1)):
        return ("minitf's source mask is (B, 1, 1, S): one row per example, broadcast over the heads (axis 1) "
                "and the queries (axis 2), masking the keys (the last axis); model.source_mask builds it")
    if name == "causal_mask" and got in ((B, T, T), (B, 1, T, T), (B, H, T, T)):
        return "the causal mask is the same for every example and head: (T, T), broadcast over B and H"
    if len(got) == len(want) and got == tuple(T if n == S else S if n == T else n for n in want):
        return ("S and T are swapped: every encoder array has the S source positions, every decoder array the T "
                "target positions")
    return ""


def check_shapes(out, problem: Problem) -> None:
    got = as_shapes(out)
    want = minitf_shapes(problem)
    wrong = [n for n in SHAPE_NAMES if got[n] != tuple(want[n])]
    if not wrong:
        return
    for name in wrong:
        why = diagnose_shape(name, got[name], tuple(want[name]), problem)
        if why:
            fail(f"shapes(...)[{name!r}]: expected {tuple(want[name])}, received {got[name]} "
                 f"({problem.describe()}): {why}")
    listed = "; ".join(f"{n}: expected {tuple(want[n])}, received {got[n]}" for n in wrong)
    fail(f"shapes: {len(wrong)} of {len(SHAPE_NAMES)} shapes are wrong ({problem.describe()}): {listed}")


@task1
def test_every_shape_from_source_ids_to_logits(submission, homework_seed):
    """Three random models; S != T, V_src != V_tgt, F != D, H > 1."""
    shapes = submission.function("shapes")
    for k in range(3):
        problem = draw_problem(homework_seed + 100 + k, share_embeddings=False)
        check_shapes(call_on_config(shapes, *problem.args()), problem)


@task1
def test_shapes_of_a_short_source_and_a_long_target(submission, homework_seed):
    """A source much shorter than the target, then much longer (tied and shared embeddings, post-LN,
    learned positions, B = 1): the letters must not mix."""
    shapes = submission.function("shapes")
    problem = draw_problem(homework_seed + 110, S=2, T=11, share_embeddings=True, tie_output=True)
    check_shapes(call_on_config(shapes, *problem.args()), problem)
    problem = draw_problem(homework_seed + 111, B=1, S=12, T=3, norm_first=False, positional="learned")
    check_shapes(call_on_config(shapes, *problem.args()), problem)
