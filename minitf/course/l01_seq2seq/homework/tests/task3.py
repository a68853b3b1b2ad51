"""Homework 1, task 1.3 (the conditioning vector: initial state vs input at every step): the public tests.

minitf's answer is ``minitf.models.RNNSeq2Seq`` built with ``conditioning`` = "init",
"concat" or "both", a linear bridge and L decoder layers: its ``initial_state`` (every
decoder layer starts from the bridged vector) and ``initial_state_backward``, and its
decoder input made of ``input_parts`` in order (the embedding, then the conditioning
vector), whose gradient ``RNNSeq2Seq.backward`` sums over the steps.  The classic mistakes
are recognised by computing what each one gives (:func:`conditioning_variant`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from minitf.grading.asserts import as_array, call, close, expect_close, fail
from minitf.grading.problems import shapes
from minitf.models import RNNSeq2Seq
from minitf.models.rnn_seq2seq import DecoderState, EncoderMemory
from minitf.rnn import RNNConfig

from .common import (BACKWARD_TOL, FORWARD_TOL, READ_ONLY, gradient_dict, load, pair, rng_for, uniform_params,
                     wrong_keys)

HOMEWORK = "hw01"
task3 = pytest.mark.hw01_task3
FORWARD_ARGS = ["h_enc", "embeddings", "params", "conditioning"]
BACKWARD_ARGS = ["dh0", "dX", "h_enc", "params", "conditioning"]
MODES = ("init", "concat", "both")


class Problem(NamedTuple):
    h_enc: np.ndarray  # (B, De) the conditioning vector
    embeddings: np.ndarray  # (B, T, E)
    params: dict  # W_bridge (De, Dr), b_bridge (Dr,)
    L: int  # decoder layers

    @property
    def dims(self) -> tuple:
        """(B, T, E, De, Dr)"""
        B, T, E = self.embeddings.shape
        return B, T, E, self.h_enc.shape[1], self.params["W_bridge"].shape[1]

    def args(self, conditioning: str) -> tuple:
        return self.h_enc, self.embeddings, self.params, conditioning

    def describe(self, conditioning: str) -> str:
        B, T, E, De, Dr = self.dims
        return f"conditioning={conditioning!r}, B={B}, T={T}, E={E}, De={De}, Dr={Dr}, L={self.L} decoder layers"


def make_problem(seed: int, *, B=3, T=4, E=3, De=5, Dr=4, L=2, dtype=np.float64) -> Problem:
    rng = rng_for(seed)
    params = uniform_params(rng, {"W_bridge": (De, Dr), "b_bridge": (Dr,)}, 0.7, dtype)
    h_enc = rng.uniform(-0.9, 0.9, size=(B, De)).astype(dtype)
    embeddings = rng.normal(size=(B, T, E)).astype(dtype)
    return Problem(h_enc, embeddings, params, L)


def upstream(problem: Problem, conditioning: str, seed: int) -> tuple:
    """(dh0 (L, B, Dr), dX (B, T, E [+ De])), random."""
    B, T, E, De, Dr = problem.dims
    rng = rng_for(seed)
    width = E + (De if conditioning != "init" else 0)
    return rng.normal(size=(problem.L, B, Dr)), rng.normal(size=(B, T, width))


# ---- minitf's answers ----------------------------------------------------------------------------------------
def minitf_model(problem: Problem, conditioning: str) -> RNNSeq2Seq:
    """A tanh-RNN encoder-decoder with the problem's widths, bridge and decoder depth."""
    B, T, E, De, Dr = problem.dims
    config = RNNConfig(src_vocab_size=8, tgt_vocab_size=8, cell="rnn", embedding_size=E, hidden_size=Dr,
                       encoder_hidden_size=De, n_decoder_layers=problem.L, conditioning=conditioning,
                       bridge="linear", dtype=np.dtype(problem.h_enc.dtype).name)
    model = RNNSeq2Seq(config)
    if config.uses_bridge:
        load(model.bridge_h, {"W": problem.params["W_bridge"], "b": problem.params["b_bridge"]})
    return model


def _memory(problem: Problem) -> EncoderMemory:
    B = problem.h_enc.shape[0]
    return EncoderMemory(states=None, mask=np.zeros((B, 1), dtype=problem.h_enc.dtype), keys=None,
                         conditioning=problem.h_enc)


def minitf_forward(problem: Problem, conditioning: str) -> tuple:
    """(h0 (B, Dr), X (B, T, width)): minitf's initial state (every layer's is the same) and decoder input."""
    model = minitf_model(problem, conditioning)
    state, _ = model.initial_state(_memory(problem))
    B, T, E, De, Dr = problem.dims
    parts = {"embedding": problem.embeddings,
             "conditioning": np.broadcast_to(problem.h_enc[:, None, :], (B, T, De))}  # the same h_enc at every step
    X = np.concatenate([parts[name] for name in model.input_parts], axis=-1)  # minitf's order of the input's parts
    return state.layers[0], X


def minitf_backward(problem: Problem, conditioning: str, dh0, dX) -> dict:
    model = minitf_model(problem, conditioning)
    _, cache = model.initial_state(_memory(problem))
    model.zero_grad()
    dcond = model.initial_state_backward(DecoderState(tuple(dh0), None), cache)  # None without "init"
    widths = list(model.input_parts.values())
    dparts = dict(zip(model.input_parts, np.split(dX, np.cumsum(widths)[:-1], axis=-1)))
    if "conditioning" in dparts:  # RNNSeq2Seq.backward: every step's share, summed
        share = dparts["conditioning"].sum(axis=1)
        dcond = share if dcond is None else dcond + share
    B, T, E, De, Dr = problem.dims
    bridge = model.bridge_h.grads if model.config.uses_bridge else {"W": np.zeros((De, Dr)), "b": np.zeros(Dr)}
    return {"dh_enc": dcond, "dW_bridge": bridge["W"].copy(), "db_bridge": bridge["b"].copy()}


# ---- what the classic mistakes compute -----------------------------------------------------------------------
def conditioning_variant(problem: Problem, conditioning: str, dh0=None, dX=None, *, transposed: bool = False,
                         tanh_prime: bool = True, layers: str = "sum", steps: str = "sum", paths: str = "both"):
    """Task 1.3 with one thing changed: (h0, X, grads or None).

    transposed: the bridge used as h_enc W^T (torch's layout; needs De = Dr), its gradients
    transposed too; tanh_prime: the bridge's tanh differentiated (right) or not; layers: how
    the L layers' dh0 combine ("sum" right, "first", "last", "mean"); steps: how the T steps'
    shares of dX combine ("sum" right, "first", "last", "mean"); paths: for "both", the two
    paths added ("both", right) or only "init" or "concat".
    """
    p = problem.params
    B, T, E, De, Dr = problem.dims
    W = p["W_bridge"].T if transposed else p["W_bridge"]
    init, concat = conditioning in ("init", "both"), conditioning in ("concat", "both")
    h0 = np.tanh(problem.h_enc @ W + p["b_bridge"]) if init else np.zeros((B, Dr))
    X = problem.embeddings
    if concat:
        X = np.concatenate([X, np.broadcast_to(problem.h_enc[:, None, :], (B, T, De))], axis=-1)
    if dh0 is None:
        return h0, X, None
    dh_enc, dW, db = np.zeros((B, De)), np.zeros((De, Dr)), np.zeros(Dr)
    if init and paths != "concat":
        dh = {"sum": dh0.sum(axis=0), "first": dh0[0], "last": dh0[-1], "mean": dh0.mean(axis=0)}[layers]
        da = dh * (1.0 - h0 ** 2) if tanh_prime else dh
        dh_enc = dh_enc + da @ W.T
        dW, db = (da.T @ problem.h_enc if transposed else problem.h_enc.T @ da), da.sum(axis=0)
    if concat and paths != "init":
        share = dX[:, :, E:]  # (B, T, De)
        dh_enc = dh_enc + {"sum": share.sum(axis=1), "first": share[:, 0], "last": share[:, -1],
                           "mean": share.mean(axis=1)}[steps]
    return h0, X, {"dh_enc": dh_enc, "dW_bridge": dW, "db_bridge": db}


TRANSPOSED = ("the bridge weights were transposed: h_enc W_bridge^T is torch's layout (its weight is (Dr, De)). "
              "minitf stores every linear map (D_in, D_out) for x @ W, so h0 = tanh(h_enc @ W_bridge + b_bridge), "
              "dh_enc = da @ W_bridge^T and dW_bridge = h_enc^T da, shaped (De, Dr) like W_bridge")


# =====================================================================================
# Task 1.3 -- the conditioning vector: initial state vs input at every step
# =====================================================================================
def check_forward(out, problem: Problem, conditioning: str) -> None:
    B, T, E, De, Dr = problem.dims
    dtype = problem.h_enc.dtype
    tol = FORWARD_TOL[np.dtype(dtype)]
    h0, X = pair(out, "condition_decoder", "(h0, X)")
    width = E + (De if conditioning != "init" else 0)
    h0 = as_array("h0", h0, shape=(B, Dr), kind="f", dtype=dtype)
    if getattr(X, "shape", None) == (B, T, E + De) and conditioning == "init":
        fail("with conditioning='init' the decoder's input is the embedding alone, (B, T, E): h_enc reaches the "
             "decoder once, through its initial state")
    if getattr(X, "shape", None) == (B, T, E) and conditioning != "init":
        fail(f"with conditioning={conditioning!r} h_enc is concatenated to the decoder's input at every step: X is "
             f"(B, T, E + De) = {(B, T, E + De)}, [e_t; h_enc]")
    X = as_array("X", X, shape=(B, T, width), kind="f", dtype=dtype)
    h0_e, X_e = minitf_forward(problem, conditioning)
    if not close(h0, h0_e, **tol):
        if De == Dr and close(h0, conditioning_variant(problem, conditioning, transposed=True)[0], **tol):
            fail(TRANSPOSED)
        if conditioning == "concat":
            fail("with conditioning='concat' the decoder starts from zeros (h0 = 0): h_enc reaches it through the "
                 "input of every step instead")
        if close(h0, 0.0 * h0_e, **tol):
            fail(f"h0 is zero, but with conditioning={conditioning!r} the decoder starts from the bridged vector "
                 f"h0 = tanh(h_enc W_bridge + b_bridge)")
        expect_close("h0", h0, h0_e, **tol,
                     hint=f"h0 = tanh(h_enc W_bridge + b_bridge) ({problem.describe(conditioning)})")
    if not close(X, X_e, **tol) and conditioning != "init":
        swapped = np.concatenate([X_e[..., E:], X_e[..., :E]], axis=-1)
        if close(X, swapped, **tol):
            fail("X puts h_enc before the embedding: the input is [e_t; h_enc], the embedding first (minitf's order)")
        if close(X[:, 0], X_e[:, 0], **tol) and not close(X[:, 1:, E:], X_e[:, 1:, E:], **tol):
            fail("h_enc was concatenated to the first step's input only: with 'concat' it is part of the input at "
                 "EVERY step, x_t = [e_t; h_enc] for t = 0 .. T-1")
    expect_close("X", X, X_e, **tol, hint=f"X[:, t] = [e_t; h_enc] for 'concat' and 'both', e_t for 'init' "
                                          f"({problem.describe(conditioning)})")


@task3
def test_condition_decoder_square_bridge(submission, homework_seed):
    """De = Dr: every mode, with a bridge that a transposition would not break by shape alone."""
    condition_decoder = submission.function("condition_decoder")
    problem = make_problem(homework_seed + 200, De=4, Dr=4)
    for conditioning in MODES:
        check_forward(call(condition_decoder, *problem.args(conditioning), names=FORWARD_ARGS, why=READ_ONLY), problem, conditioning)


@task3
def test_condition_decoder_init_concat_both(submission, homework_seed):
    """De != Dr, and float32 in every mode."""
    condition_decoder = submission.function("condition_decoder")
    for k, (B, T, E, De, Dr) in enumerate(shapes(homework_seed, [(3, 5, 2, 6, 3), (1, 3, 2, 4, 3)], B=(1, 5), T=(1, 6),
                                                 E=(1, 5), De=(1, 6), Dr=(1, 6))):  # a batch of one too
        problem = make_problem(homework_seed + 210 + 7 * k, B=B, T=T, E=E, De=De, Dr=Dr)
        for conditioning in MODES:
            check_forward(call(condition_decoder, *problem.args(conditioning), names=FORWARD_ARGS, why=READ_ONLY),
                          problem, conditioning)
    problem = make_problem(homework_seed + 211, B=2, T=3, E=2, De=3, Dr=5, dtype=np.float32)
    for conditioning in MODES:  # float32 in every mode: h0 and X keep h_enc's dtype
        check_forward(call(condition_decoder, *problem.args(conditioning), names=FORWARD_ARGS, why=READ_ONLY), problem,
                      conditioning)


def backward(fn, problem: Problem, conditioning: str, seed: int):
    B, T, E, De, Dr = problem.dims
    dh0, dX = upstream(problem, conditioning, seed)
    out = call(fn, dh0, dX, problem.h_enc, problem.params, conditioning, names=BACKWARD_ARGS, why=READ_ONLY)
    shapes = {"dh_enc": (B, De), "dW_bridge": (De, Dr), "db_bridge": (Dr,)}
    return (gradient_dict(out, "condition_decoder_backward", shapes), minitf_backward(problem, conditioning, dh0, dX),
            (dh0, dX))


def diagnose_backward(g: dict, e: dict, problem: Problem, conditioning: str, dh0, dX) -> None:
    wrong = wrong_keys(g, e)
    if not wrong:
        return
    B, T, E, De, Dr = problem.dims

    def variant(**kw):
        return conditioning_variant(problem, conditioning, dh0, dX, **kw)[2]

    def matches(v) -> bool:
        return all(close(g[k], v[k], **BACKWARD_TOL) for k in wrong)

    if conditioning != "init":
        for steps, how in (("first", "from the first step only"), ("last", "from the last step only"),
                           ("mean", "averaged over the T steps")):
            if matches(variant(steps=steps)):
                fail(f"concat's gradient was taken {how}: h_enc was part of the input of every one of the T = {T} "
                     f"steps, so dL/dh_enc gets every step's share, summed: dh_enc += dX[:, t, E:] for t = 0 .. T-1 "
                     f"(the chain rule adds the contributions of every use of a value, as for a shared weight)")
    if conditioning == "both":
        for path, other in (("init", "concat"), ("concat", "init")):
            if matches(variant(paths=path)):
                fail(f"with conditioning='both' h_enc reaches the decoder twice, through the initial state (init) "
                     f"and through every step's input (concat): dh_enc is the sum of the two; yours has only the "
                     f"{path} path, the {other} one is missing")
    if conditioning != "concat":
        if De == Dr and matches(variant(transposed=True)):
            fail(TRANSPOSED)
        if "dW_bridge" in wrong and De == Dr and close(g["dW_bridge"], e["dW_bridge"].T, **BACKWARD_TOL):
            fail("dW_bridge is transposed: with W_bridge stored (De, Dr) for h_enc @ W_bridge, dW_bridge = h_enc^T da, "
                 "(De, Dr) like W_bridge")
        for layers, how in (("first", "the first decoder layer's"), ("last", "the last decoder layer's"),
                            ("mean", "the mean of the layers'")):
            if matches(variant(layers=layers)):
                fail(f"dh0 was reduced to {how} gradient: every one of the L = {problem.L} decoder layers starts "
                     f"from the same h0, so dL/dh0 = sum over l of dh0[l] (as minitf's initial_state_backward adds "
                     f"them)")
        if matches(variant(tanh_prime=False)):
            fail("the tanh of the bridge was not differentiated: h0 = tanh(a), a = h_enc W_bridge + b_bridge, so "
                 "da = dh0 * (1 - h0^2) before the matrix product")
    if conditioning == "concat" and ("dW_bridge" in wrong or "db_bridge" in wrong):
        fail("with conditioning='concat' there is no bridge (the decoder starts from zeros): dW_bridge and "
             "db_bridge are zero, and dh0 reaches nothing")


def check_backward(g, e, problem, conditioning, dh0, dX) -> None:
    diagnose_backward(g, e, problem, conditioning, dh0, dX)
    hint = f"({problem.describe(conditioning)})"
    expect_close("dh_enc", g["dh_enc"], e["dh_enc"], **BACKWARD_TOL,
                 hint="dh_enc = [init] (sum_l dh0[l] * (1 - h0^2)) W_bridge^T + [concat] sum_t dX[:, t, E:] " + hint)
    expect_close("dW_bridge", g["dW_bridge"], e["dW_bridge"], **BACKWARD_TOL, hint="dW_bridge = h_enc^T da " + hint)
    expect_close("db_bridge", g["db_bridge"], e["db_bridge"], **BACKWARD_TOL,
                 hint="db_bridge = da summed over the batch " + hint)


@task3
def test_condition_decoder_backward_concat(submission, homework_seed):
    """'concat': h_enc was read at every step; its gradient is the sum of the T steps' shares."""
    condition_decoder_backward = submission.function("condition_decoder_backward")
    for k, (B, T) in enumerate(shapes(homework_seed, [(3, 5), (1, 4)], B=(1, 5), T=(1, 7))):  # a batch of one too
        problem = make_problem(homework_seed + 220 + 3 * k, B=B, T=T)
        g, e, (dh0, dX) = backward(condition_decoder_backward, problem, "concat", homework_seed + 221 + 3 * k)
        check_backward(g, e, problem, "concat", dh0, dX)


@task3
def test_condition_decoder_backward_init(submission, homework_seed):
    """'init' with L = 2 and 3 decoder layers, a square bridge and a rectangular one."""
    condition_decoder_backward = submission.function("condition_decoder_backward")
    for k, (De, Dr, L) in enumerate(shapes(homework_seed, [(4, 4, 2), (5, 3, 3)], De=(1, 6), Dr=(1, 6), L=(1, 3))):
        problem = make_problem(homework_seed + 230 + k, De=De, Dr=Dr, L=L)
        g, e, (dh0, dX) = backward(condition_decoder_backward, problem, "init", homework_seed + 235 + k)
        check_backward(g, e, problem, "init", dh0, dX)


@task3
def test_condition_decoder_backward_both(submission, homework_seed):
    """'both': the two paths add."""
    condition_decoder_backward = submission.function("condition_decoder_backward")
    for k, (B, T, De, Dr, L) in enumerate(shapes(homework_seed, [(3, 3, 4, 4, 2), (1, 2, 3, 2, 1)], B=(1, 5), T=(1, 6),
                                                 De=(1, 6), Dr=(1, 6), L=(1, 3))):  # a batch of one too
        problem = make_problem(homework_seed + 240 + 3 * k, B=B, T=T, De=De, Dr=Dr, L=L)
        g, e, (dh0, dX) = backward(condition_decoder_backward, problem, "both", homework_seed + 241 + 3 * k)
        check_backward(g, e, problem, "both", dh0, dX)
