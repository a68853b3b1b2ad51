"""Homework 2, task 2.3 (the attention backward, line by line): the public tests."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.attention import (
    AttentionCache,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)
from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.layers.softmax import softmax as minitf_softmax
from minitf.layers.softmax import softmax_backward as minitf_softmax_backward
from minitf.masks import key_padding_mask

from .common import (
    BACKWARD64,
    FLOAT32,
    ROUGH,
    SHAPES_HINT,
    attention_inputs,
    expect_untouched,
    python_loops,
    submission_source,
)

HOMEWORK = "hw02"
task3 = pytest.mark.hw02_task3


# =====================================================================================
# Task 2.3 -- the attention backward
# =====================================================================================
def _backward_with(dout, Q, K, V, A, *, scale=None, softmax_backward=minitf_softmax_backward):
    """The attention backward, with the scale and the softmax backward as given."""
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    dA = dout @ V.swapaxes(-1, -2)  # (B, H, T, S)
    dscores = softmax_backward(dA, A) * scale  # (B, H, T, S)
    return dscores @ K, dscores.swapaxes(-1, -2) @ Q, A.swapaxes(-1, -2) @ dout


def backward_candidates(dout, Q, K, V, A) -> dict:
    """The classic wrong gradients, by the mistake's description: {description: {name: array}}."""
    Dh = Q.shape[-1]
    T, S = Q.shape[-2], K.shape[-2]
    out = {}
    if T == S:
        out["dV = A dout: the transpose is missing. out = A V, so dV = A^T dout, (S, T) @ (T, Dh) -> (S, Dh) like V: "
            "each value collects the gradient of every query that attended to it"] = {"dV": A @ dout}
        dscores = minitf_softmax_backward(dout @ V.swapaxes(-1, -2), A) / math.sqrt(Dh)
        out["dK = dscores Q: the transpose is missing. scores = Q K^T, so dK = dscores^T Q / sqrt(Dh), "
            "(S, T) @ (T, Dh) -> (S, Dh) like K"] = {"dK": dscores @ Q}
        dQ, dK, _ = _backward_with(dout, Q, K, V, A)
        out["dQ and dK are swapped: dQ = dscores K / sqrt(Dh) (the queries' gradient comes through the keys), "
            "dK = dscores^T Q / sqrt(Dh)"] = {"dQ": dK, "dK": dQ}
    dQ, dK, _ = _backward_with(dout, Q, K, V, A, scale=1.0)
    out[f"dQ and dK miss the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh)): they come out sqrt(Dh) = "
        f"{math.sqrt(Dh):.4g} times too large"] = {"dQ": dQ, "dK": dK}
    dQ, dK, _ = _backward_with(dout, Q, K, V, A, scale=1.0 / Dh)
    out[f"dQ and dK are scaled by 1/Dh = 1/{Dh}; the forward scales the scores by 1/sqrt(Dh), and so does the "
        f"backward, once"] = {"dQ": dQ, "dK": dK}
    dQ, dK, _ = _backward_with(dout, Q, K, V, A, softmax_backward=lambda dA, A: dA)
    out["the softmax backward was skipped (dscores = dA): A = softmax(scores), so dscores = A * (dA - <dA, A>), "
        "the inner product over each row"] = {"dQ": dQ, "dK": dK}
    dQ, dK, _ = _backward_with(dout, Q, K, V, A, softmax_backward=lambda dA, A: A * dA)
    out["the softmax backward keeps only the diagonal of the Jacobian (dscores = A * dA): the off-diagonal terms "
        "give dscores = A * (dA - <dA, A>)"] = {"dQ": dQ, "dK": dK}
    dQ, dK, _ = _backward_with(dout, Q, K, V, A, softmax_backward=lambda dA, A: A * (1 - A) * dA)
    out["the softmax backward is the elementwise A(1-A) (the sigmoid's), only the diagonal of the Jacobian: "
        "dscores = A * (dA - <dA, A>), the inner product over each row"] = {"dQ": dQ, "dK": dK}
    dQ, dK, dV = _backward_with(dout, Q, K, V, minitf_softmax(Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)))
    if not np.allclose(minitf_softmax(Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)), A, rtol=1e-9, atol=1e-12):
        out["the weights were recomputed from Q and K: use the A you are given, the forward's own weights (here some "
            "were set to 0 by a mask, as Lesson 3's masks do)"] = {"dQ": dQ, "dK": dK, "dV": dV}
    return out


def check_backward(attention_backward, dout, Q, K, V, A) -> None:
    names = ("dout", "Q", "K", "V", "A")
    sent = {i: (name, x.copy()) for i, (name, x) in enumerate(zip(names, (dout, Q, K, V, A)))}
    result = call(attention_backward, dout, Q, K, V, A, shape_hint=SHAPES_HINT)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        fail(f"attention_backward: expected a triple (dQ, dK, dV), received {type(result).__name__}")
    B, H, T, Dh = Q.shape
    S = K.shape[2]
    shapes = {"dQ": (B, H, T, Dh), "dK": (B, H, S, Dh), "dV": (B, H, S, Dh)}
    received = dict(zip(shapes, result))
    if S != T:
        if getattr(received["dV"], "shape", None) == (B, H, T, Dh):
            fail(f"dV has the shape of Q, (B, H, T, Dh) = {(B, H, T, Dh)}, not of V, (B, H, S, Dh) = {(B, H, S, Dh)}: "
                 f"dV = A dout misses the transpose; out = A V, so dV = A^T dout, (S, T) @ (T, Dh) -> (S, Dh)")
        if getattr(received["dK"], "shape", None) == (B, H, T, Dh):
            fail(f"dK has the shape of Q, (B, H, T, Dh) = {(B, H, T, Dh)}, not of K, (B, H, S, Dh) = {(B, H, S, Dh)}: "
                 f"dK = dscores Q misses the transpose; dK = dscores^T Q / sqrt(Dh)")
    for name, shape in shapes.items():
        received[name] = as_array(name, received[name], shape=shape, kind="f")
    expect_untouched(attention_backward, sent)
    for name, x in received.items():
        if x.dtype != Q.dtype:
            fail(f"{name}: expected dtype {Q.dtype} (the dtype of Q), received {x.dtype}"
                 + (". np.sqrt(Dh) is a float64 NumPy scalar, which turns float32 arrays into float64 under NumPy 2: "
                    "use math.sqrt(Dh), a Python float" if Q.dtype == np.float32 else ""))
    dout, Q, K, V, A = (x[1] for x in sent.values())
    tol = BACKWARD64 if Q.dtype == np.float64 else FLOAT32
    expected = dict(zip(("dQ", "dK", "dV"), scaled_dot_product_attention_backward(dout, AttentionCache(Q, K, V, A))[:3]))
    wrong = [name for name in ("dV", "dQ", "dK") if not close(received[name], expected[name], **tol)]
    if wrong and Q.dtype == np.float64:
        for mistake, candidate in backward_candidates(dout, Q, K, V, A).items():
            if all(close(received[n], c, **tol) and not close(c, expected[n], **tol) for n, c in candidate.items()
                   if n in wrong) and any(n in wrong for n in candidate):
                fail(mistake)
        if all(close(received[n], expected[n], **ROUGH) for n in wrong):
            worst = max(float(np.abs(received[n] - expected[n]).max()) for n in wrong)
            names = " and ".join([", ".join(wrong[:-1]), wrong[-1]] if len(wrong) > 1 else wrong)
            fail(f"{names} {'agree' if len(wrong) > 1 else 'agrees'} with the backward only to about {worst:.1g}: "
                 f"the accuracy of finite differences (or of float32 arithmetic somewhere), not of a backward written "
                 f"out, which in float64 is exact to about 1e-15 (tolerance rtol {tol['rtol']:g}). Write the backward "
                 f"line by line")
    hints = {"dV": "dV = A^T dout", "dQ": "dQ = dscores K / sqrt(Dh), dscores = A * (dA - <dA, A>), dA = dout V^T",
             "dK": "dK = dscores^T Q / sqrt(Dh), dscores = A * (dA - <dA, A>), dA = dout V^T"}
    for name in ("dV", "dQ", "dK"):
        expect_close(name, received[name], expected[name], **tol, hint=hints[name])


@task3
def test_attention_backward_self_attention(submission, homework_seed):
    """T == S, float64: compared with minitf's backward to rtol 1e-11."""
    attention_backward = submission.function("attention_backward")
    rng = np.random.default_rng(homework_seed + 41)
    for B, H, T, Dh in shapes(homework_seed, [(2, 2, 5, 8), (1, 3, 4, 16)], B=(1, 3), H=(1, 4), T=(1, 6), Dh=(1, 16)):
        Q, K, V = attention_inputs(rng, B, H, T, T, Dh)
        _, cache = scaled_dot_product_attention(Q, K, V)
        check_backward(attention_backward, rng.standard_normal((B, H, T, Dh)), Q, K, V, cache.A)


@task3
def test_attention_backward_cross_attention_shapes(submission, homework_seed):
    """T != S (cross-attention), float64: every gradient shaped like its variable."""
    attention_backward = submission.function("attention_backward")
    rng = np.random.default_rng(homework_seed + 42)
    for B, H, T, S, Dh in shapes(homework_seed, [(2, 3, 4, 7, 8), (1, 2, 6, 3, 4)], B=(1, 3), H=(1, 4), T=(1, 6),
                                 S=(1, 7), Dh=(1, 16), rule=lambda B, H, T, S, Dh: S != T):
        Q, K, V = attention_inputs(rng, B, H, T, S, Dh)
        _, cache = scaled_dot_product_attention(Q, K, V)
        check_backward(attention_backward, rng.standard_normal((B, H, T, Dh)), Q, K, V, cache.A)


@task3
def test_attention_backward_uses_the_weights_it_is_given(submission, homework_seed):
    """A from a forward with key padding and a fully masked query (Lesson 3's masks): the
    same backward, with the A it is given; the masked entries get zero gradient, never NaN."""
    attention_backward = submission.function("attention_backward")
    rng = np.random.default_rng(homework_seed + 43)
    B, H, T, S, Dh = 2, 2, 4, 6, 8
    Q, K, V = attention_inputs(rng, B, H, T, S, Dh)
    mask = np.broadcast_to(key_padding_mask(lengths=np.array([S, S - 2]), max_len=S, dtype=np.float64),
                           (B, 1, T, S)).copy()  # (B, 1, T, S): row 1 of the second example's keys padded
    mask[1, 0, 2] = mask.min()  # query 2 of example 1 sees nothing at all
    _, cache = scaled_dot_product_attention(Q, K, V, mask)
    check_backward(attention_backward, rng.standard_normal((B, H, T, Dh)), Q, K, V, cache.A)


@task3
def test_attention_backward_float32(submission, homework_seed):
    attention_backward = submission.function("attention_backward")
    rng = np.random.default_rng(homework_seed + 44)
    Q, K, V = attention_inputs(rng, 2, 2, 3, 5, 8, np.float32)
    _, cache = scaled_dot_product_attention(Q, K, V)
    check_backward(attention_backward, rng.standard_normal((2, 2, 3, 8)).astype(np.float32), Q, K, V, cache.A)


@task3
def test_attention_backward_has_no_python_loop(submission, homework_seed, request):
    """Lesson 2, section 4: the backward is the forward's products in reverse, on whole
    (B, H, T, S) arrays: no loop over the batch, the heads or the positions."""
    attention_backward = submission.function("attention_backward")
    rng = np.random.default_rng(homework_seed + 45)
    Q, K, V = attention_inputs(rng, 2, 3, 4, 5, 8)
    _, cache = scaled_dot_product_attention(Q, K, V)
    check_backward(attention_backward, rng.standard_normal((2, 3, 4, 8)), Q, K, V, cache.A)
    loops = python_loops(submission_source(request), ("attention_backward",))
    if loops:
        fail(f"a Python loop over the batch, the heads or the positions: {'; '.join(loops)}. None is needed: each "
             f"line of the backward is one batched product on whole arrays, dV = A.swapaxes(-1, -2) @ dout, "
             f"dA = dout @ V.swapaxes(-1, -2), dscores = softmax_backward(dA, A), dQ = dscores @ K / sqrt(Dh), "
             f"dK = dscores.swapaxes(-1, -2) @ Q / sqrt(Dh)")
