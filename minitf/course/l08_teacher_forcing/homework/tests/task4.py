"""Homework 8, task 8.4 (cross-attention backward): the public tests."""
from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import pytest

from minitf.attention import (AttentionCache, MultiHeadAttention, MultiHeadAttentionCache, merge_heads,
                              scaled_dot_product_attention_backward, split_heads)
from minitf.grading.asserts import as_array, close, expect_close, fail, returned_arg, same_array
from minitf.grading.problems import shapes
from minitf.loss import cross_entropy as minitf_cross_entropy
from minitf.masks import key_padding_mask

from .common import tiny_model, tiny_task

HOMEWORK = "hw08"
# float64 throughout: a backward written out agrees with minitf's to about 1e-15; finite
# differences of the forward reach only about 1e-10, and fail -- the task is the backward itself
TOL = dict(rtol=1e-11, atol=1e-13)
task4 = pytest.mark.hw08_task4


# =====================================================================================
# Task 8.4 -- through cross-attention into the encoder
# =====================================================================================
def cross_attention_problem(seed: int, B=2, T=3, S=5, D=8, H=2, dtype=np.float64):
    """A cross-attention of ``dtype``, its forward on random inputs with source padding, and dy."""
    rng = np.random.default_rng(seed)
    attn = MultiHeadAttention(D, H, rng=rng, dtype=dtype)
    for name in ("b_q", "b_k", "b_v", "b_o"):  # nonzero biases, so that they are not silently 0
        attn.params[name][:] = rng.normal(0, 0.5, size=D)
    x_q = rng.normal(size=(B, T, D)).astype(dtype)
    H_enc = rng.normal(size=(B, S, D)).astype(dtype)
    mask = key_padding_mask(lengths=np.array([S] + [S - 2] * (B - 1)), max_len=S, dtype=dtype)
    _, cache = attn.forward(x_q, H_enc, mask)
    dy = rng.normal(size=(B, T, D)).astype(dtype)
    return attn, dy, cache


def snapshot(cache) -> list:
    if not isinstance(cache, MultiHeadAttentionCache) or not isinstance(cache.attn, AttentionCache):
        return [None] * 7
    return [cache.x_q.copy(), cache.x_kv.copy(), cache.o.copy()] + [a.copy() for a in cache.attn]


def call_cross_backward(fn, attn, dy, cache):
    before = snapshot(cache)
    dy_before = dy.copy()
    out = fn(attn, dy, cache)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"cross_attention_backward: expected a pair (dx_q, dH_enc), received {type(out).__name__}")
    after = snapshot(returned_arg(fn, 2))  # the cache as the call left it
    for name, a, b in zip(["x_q", "x_kv", "o", "attn.Q", "attn.K", "attn.V", "attn.A"], before, after):
        if not same_array(a, b):
            fail(f"cross_attention_backward changed cache.{name} in place: a cache is read-only "
                 f"(compute new arrays instead of writing into it)")
    if not same_array(returned_arg(fn, 1), dy_before):
        fail("cross_attention_backward changed dy in place; work on new arrays")
    B, T, D = cache.x_q.shape
    S = cache.x_kv.shape[1]
    dx_q, dH_enc = out
    if getattr(dx_q, "shape", None) == (B, S, D) and getattr(dH_enc, "shape", None) == (B, T, D) and S != T:
        fail(f"the two gradients come back swapped: dx_q should be (B, T, D) = {(B, T, D)} like the decoder "
             f"stream, dH_enc (B, S, D) = {(B, S, D)} like the encoder output")
    dx_q = as_array("dx_q", dx_q, shape=(B, T, D), kind="f")
    dH_enc = as_array("dH_enc", dH_enc, shape=(B, S, D), kind="f")
    return dx_q, dH_enc


def cross_attention_parts(attn, dy, cache):
    """minitf's answer, and the pieces a wrong answer is often made of."""
    p, H = attn.params, attn.n_heads
    dheads = split_heads(dy @ p["W_o"].T, H)  # (B, H, T, Dh)
    dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(dheads, cache.attn)
    return {
        "dx_q": merge_heads(dQ) @ p["W_q"].T,
        "through_K": merge_heads(dK) @ p["W_k"].T,
        "through_V": merge_heads(dV) @ p["W_v"].T,
        "Dh": cache.attn.Q.shape[-1],
    }


@task4
def test_cross_attention_backward(submission, homework_seed):
    cross_attention_backward = submission.function("cross_attention_backward")
    sizes = shapes(homework_seed, [(2, 3, 5, 2, 4), (1, 4, 3, 1, 4)], B=(1, 4), T=(1, 6), S=(3, 8), H=(1, 4), Dh=(1, 4),
                   rule=lambda B, T, S, H, Dh: S != T)
    for k, (B, T, S, H, Dh) in enumerate(sizes):
        attn, dy, cache = cross_attention_problem(homework_seed + k, B=B, T=T, S=S, D=H * Dh, H=H)
        dx_q, dH_enc = call_cross_backward(cross_attention_backward, attn, dy, cache)
        parts = cross_attention_parts(attn, dy, cache)
        expected_enc = parts["through_K"] + parts["through_V"]
        tol = TOL
        if not close(dH_enc, expected_enc, **tol):
            if close(dH_enc, parts["through_K"], **tol):
                fail("dH_enc is only the gradient through the keys: the values are computed from H_enc too, so "
                     "dH_enc = dK W_k^T + dV W_v^T (merged over heads)")
            if close(dH_enc, parts["through_V"], **tol):
                fail("dH_enc is only the gradient through the values: the keys are computed from H_enc too, so "
                     "dH_enc = dK W_k^T + dV W_v^T (merged over heads)")
            scale = math.sqrt(parts["Dh"])
            if close(dH_enc, parts["through_K"] * scale + parts["through_V"], **tol):
                fail("the gradient through the scores misses the 1/sqrt(Dh) of the forward "
                     "(scores = Q K^T / sqrt(Dh)): dK is sqrt(Dh) times too large")
        expect_close("dH_enc", dH_enc, expected_enc, **tol,
                     hint="dH_enc = merge(dK) W_k^T + merge(dV) W_v^T, with dK, dV from the attention backward")
        if not close(dx_q, parts["dx_q"], **tol) and close(dx_q, parts["dx_q"] * math.sqrt(parts["Dh"]), **tol):
            fail("dx_q misses the 1/sqrt(Dh) of the forward (scores = Q K^T / sqrt(Dh))")
        expect_close("dx_q", dx_q, parts["dx_q"], **tol, hint="dx_q = merge(dQ) W_q^T")


@contextlib.contextmanager
def recording_cross_attention(model, record):
    """Record, for every decoder block, the gradient arriving at its cross-attention and its cache."""
    for l, block in enumerate(model.decoder_layers):
        attn = block.cross_attn

        def backward(dy, cache, _attn=attn, _l=l):
            record.append((_l, dy.copy(), cache))
            return type(_attn).backward(_attn, dy, cache)

        attn.backward = backward  # an instance attribute shadows the method
    try:
        yield record
    finally:
        for block in model.decoder_layers:
            del block.cross_attn.backward


@contextlib.contextmanager
def plugged_cross_attention(model, fn):
    """Every decoder block's cross-attention backward replaced by ``fn(attn, dy, cache)``."""
    for block in model.decoder_layers:
        attn = block.cross_attn
        attn.backward = lambda dy, cache, _attn=attn: tuple(fn(_attn, dy, cache))
    try:
        yield
    finally:
        for block in model.decoder_layers:
            del block.cross_attn.backward


@pytest.fixture
def three_block_model(homework_seed):
    return _three_block_model(int(homework_seed))


@functools.lru_cache(maxsize=None)
def _three_block_model(homework_seed: int) -> dict:
    """A float64 encoder-decoder with 3 decoder blocks, its cache, and minitf's backward through it
    (built once per seed)."""
    task = tiny_task()
    model = tiny_model(task, d_model=16, n_encoder_layers=2, n_decoder_layers=3, dtype="float64", seed=5,
                       share_embeddings=False, tie_output=False)
    batch = task.batch(task.sample(3, np.random.default_rng(homework_seed + 4)))
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    _, dlogits = minitf_cross_entropy(logits, batch.labels)
    model.zero_grad()
    record: list = []
    with recording_cross_attention(model, record):
        out = model.backward(dlogits, cache)
    grads = {k: v.copy() for k, v in model.gradients().items()}
    record.sort(key=lambda r: r[0])
    return {"model": model, "cache": cache, "dlogits": dlogits, "out": out, "grads": grads,
            "douts": [r[1] for r in record], "caches": [r[2] for r in record]}


@task4
def test_cross_attention_backward_inside_the_model(submission, three_block_model):
    """Your backward in every decoder block: the encoder must get the same gradient as with minitf's."""
    cross_attention_backward = submission.function("cross_attention_backward")
    m = three_block_model
    model = m["model"]
    call_cross_backward(cross_attention_backward, model.decoder_layers[0].cross_attn, m["douts"][0], m["caches"][0])
    model.zero_grad()
    with plugged_cross_attention(model, cross_attention_backward):
        out = model.backward(m["dlogits"], m["cache"])
    for l, (share, expected) in enumerate(zip(out.dH_enc_shares, m["out"].dH_enc_shares)):
        expect_close(f"decoder block {l}'s share of dL/dH_enc, with your backward in every block", share, expected,
                     **TOL)
    expect_close("dL/dH_enc of the model", out.dH_enc, m["out"].dH_enc, **TOL)
    for name, g in model.gradients().items():
        if ".cross_attn." in name:
            continue  # parameter gradients are not part of the task
        hint = ("the encoder learns only from dL/dH_enc" if name.startswith(("encoder", "src_"))
                else "dx_q flows on down the decoder")
        expect_close(f"the gradient of {name}", g, m["grads"][name], rtol=1e-9, atol=1e-13, hint=hint)
    model.zero_grad()


@task4
def test_encoder_output_gradient_sums_every_block(submission, three_block_model):
    encoder_output_gradient = submission.function("encoder_output_gradient")
    m = three_block_model
    model = m["model"]
    attns = [block.cross_attn for block in model.decoder_layers]
    dH_enc = encoder_output_gradient(attns, list(m["douts"]), list(m["caches"]))
    expected = m["out"].dH_enc
    dH_enc = as_array("dH_enc", dH_enc, shape=expected.shape, kind="f")
    shares = m["out"].dH_enc_shares
    tol = TOL
    if not close(dH_enc, expected, **tol):
        for l, share in enumerate(shares):
            if close(dH_enc, share, **tol):
                fail(f"dH_enc is decoder block {l}'s share alone (of {len(shares)} blocks): every decoder block's "
                     f"cross-attention reads H_enc, so the encoder's gradient is the SUM of all {len(shares)} "
                     f"blocks' shares")
        if close(dH_enc, expected / len(shares), **tol):
            fail(f"dH_enc is the mean of the {len(shares)} blocks' shares; the chain rule adds them: "
                 f"sum, don't average")
    expect_close("dH_enc", dH_enc, expected, **tol,
                 hint="the sum over decoder blocks of each cross-attention's dH_enc (EncoderDecoder.backward's total)")


@task4
def test_float32_backward_in_float32(submission, homework_seed):
    """A float32 cross-attention (as minitf trains), on a batch of one example (publicly): both
    functions return float32, and agree with minitf's backward to float32's precision."""
    cross_attention_backward = submission.function("cross_attention_backward")
    encoder_output_gradient = submission.function("encoder_output_gradient")
    (B, T, S, H, Dh), = shapes(homework_seed, [(1, 4, 3, 2, 3)], B=(1, 4), T=(1, 6), S=(2, 8), H=(1, 4), Dh=(1, 4),
                               rule=lambda B, T, S, H, Dh: S != T)
    problems = [cross_attention_problem(homework_seed + 30 + l, B=B, T=T, S=S, D=H * Dh, H=H, dtype=np.float32)
                for l in range(2)]
    tol = dict(rtol=1e-4, atol=1e-5)
    for attn, dy, cache in problems:
        dx_q, dH_enc = call_cross_backward(cross_attention_backward, attn, dy, cache)
        as_array("dx_q", dx_q, dtype=np.float32)
        as_array("dH_enc", dH_enc, dtype=np.float32)
        parts = cross_attention_parts(attn, dy, cache)
        expect_close("dx_q (float32)", dx_q, parts["dx_q"], **tol)
        expect_close("dH_enc (float32)", dH_enc, parts["through_K"] + parts["through_V"], **tol)
    # two blocks reading one H_enc: the caches' x_kv must be that one array
    H_enc = problems[0][2].x_kv
    caches = []
    for attn, dy, cache in problems:
        _, c = attn.forward(cache.x_q, H_enc, np.zeros((1, 1, 1, S), dtype=np.float32))
        caches.append(c)
    attns, douts = [p[0] for p in problems], [p[1] for p in problems]
    dH_enc = encoder_output_gradient(attns, douts, caches)
    dH_enc = as_array("dH_enc of encoder_output_gradient (float32)", dH_enc, shape=(B, S, H * Dh), dtype=np.float32)
    expected = sum(cross_attention_parts(a, d, c)["through_K"] + cross_attention_parts(a, d, c)["through_V"]
                   for a, d, c in zip(attns, douts, caches))
    expect_close("dH_enc of encoder_output_gradient (float32)", dH_enc, expected, **tol,
                 hint="the sum of the blocks' shares, in the model's dtype")
