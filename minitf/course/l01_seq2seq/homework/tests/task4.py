"""Homework 1, task 1.4 (scheduled sampling): the public tests.

minitf's answer is ``minitf.models.RNNSeq2Seq.decode`` run with ``teacher_forcing=eps``:
a tiny GRU encoder-decoder (fixed weights), a batch of random targets, and a Generator
whose draws are the coins -- minitf draws step t's coins, ``rng.random(B)``, for t = 1 ..
T-1 in turn, so the test hands the student exactly the coins minitf used, the tokens the
model chose at every step of that run, and compares the inputs the student mixes with the
ones minitf fed (``DecoderCache.fed`` and ``.gold``).  The backward is compared with
minitf's ``Embedding.backward`` and with the loss's own gradient, which is all that reaches
the logits: the choice of a token is an integer, and nothing flows back through it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from minitf.data import shift_right
from minitf.grading.asserts import as_array, call, close, expect_close, expect_equal_ids, fail
from minitf.grading.problems import shapes
from minitf.layers import Embedding, softmax
from minitf.layers.embedding import EmbeddingCache
from minitf.models import RNNSeq2Seq
from minitf.rnn import RNNConfig

from .common import BACKWARD_TOL, READ_ONLY, gradient_dict, pair, rng_for

HOMEWORK = "hw01"
task4 = pytest.mark.hw01_task4
INPUT_ARGS = ["labels", "own_tokens", "coins", "eps", "bos_id"]
BACKWARD_ARGS = ["dlogits", "dX", "logits", "fed", "gold", "W_E"]
V, E, H, PAD, BOS = 9, 4, 6, 0, 1  # the tiny model's vocabulary, widths and special ids


class Run(NamedTuple):
    """One scheduled-sampling forward of minitf's model, and what the student is given of it."""
    labels: np.ndarray  # (B, T) the gold targets
    own_tokens: np.ndarray  # (B, T) argmax of the logits at every step of minitf's run
    coins: np.ndarray  # (B, T) the coins minitf drew (column 0 unused)
    eps: float
    fed: np.ndarray  # (B, T) what minitf fed
    gold: np.ndarray  # (B, T) bool, where minitf fed the gold token
    logits: np.ndarray  # (B, T, V)
    W_E: np.ndarray  # (V, E) the decoder's embedding table

    def args(self) -> tuple:
        return self.labels, self.own_tokens, self.coins, self.eps, BOS

    def describe(self) -> str:
        B, T = self.labels.shape
        return f"B={B}, T={T}, eps={self.eps}"


def tiny_model() -> RNNSeq2Seq:
    """A GRU encoder-decoder, fixed weights, its output layer scaled up so that its choices vary from step to step."""
    config = RNNConfig(src_vocab_size=V, tgt_vocab_size=V, cell="gru", embedding_size=E, hidden_size=H,
                       max_len=16, pad_id=PAD, bos_id=BOS, eos_id=2, dtype="float64", seed=0)
    model = RNNSeq2Seq(config)
    model.params["W_U"][...] *= 6.0
    return model


def minitf_run(seed: int, eps: float, *, B=4, S=5, T=7) -> Run:
    """minitf's scheduled-sampling forward on random sources and targets (tokens 3 .. V-1)."""
    model = tiny_model()
    rng = rng_for(seed)
    src_ids = rng.integers(3, V, size=(B, S))
    labels = rng.integers(3, V, size=(B, T))
    memory, _ = model.encode(src_ids)
    decoder_input_ids = shift_right(labels, BOS, PAD)  # (B, T) the gold y_{t-1}, <bos> first
    logits, cache = model.decode(decoder_input_ids, memory, teacher_forcing=eps, rng=np.random.default_rng(seed + 1))
    coins = np.empty((B, T))
    coins[:, 0] = rng.random(B)  # not used: step 0 reads the start token
    draws = np.random.default_rng(seed + 1)  # minitf's coins, step by step (argmax draws nothing)
    if eps < 1.0:
        for t in range(1, T):
            coins[:, t] = draws.random(B)
    else:
        coins[:, 1:] = rng.random((B, T - 1))  # eps = 1: minitf draws none; any coin is < 1
    return Run(labels, logits.argmax(axis=-1), coins, eps, cache.fed, cache.gold, logits,
               model.tgt_embed.params["W_E"].copy())


# ---- what the classic mistakes compute -----------------------------------------------------------------------
def inputs_variant(run: Run, *, own_at: str = "t-1", gold_at: str = "t-1", prob: str = "eps", start: bool = True):
    """(fed, gold) with one thing changed.  own_at / gold_at: the model's token / the gold token of
    position t-1 (right) or t fed at step t; prob: the gold token where coins < eps (right) or where
    coins >= eps (mixed with probability 1 - eps); start: step 0 reads the start token (right) or
    is mixed like any other step."""
    labels, own, coins, eps = run.labels, run.own_tokens, run.coins, run.eps
    B, T = labels.shape
    bos = np.full((B, 1), BOS, dtype=labels.dtype)
    teacher = labels if gold_at == "t" else np.concatenate([bos, labels[:, :-1]], axis=1)
    mine = own if own_at == "t" else np.concatenate([bos, own[:, :-1]], axis=1)
    gold = coins < eps if prob == "eps" else coins >= eps
    if start:
        gold = gold.copy()
        gold[:, 0] = True
        teacher = np.concatenate([bos, teacher[:, 1:]], axis=1) if gold_at == "t" else teacher
    return np.where(gold, teacher, mine), gold


def discriminating_run(seed: int, eps: float, **kw) -> Run:
    """A run on which each classic mistake gives inputs different from the right ones (the
    untrained model's choices can coincide with the gold tokens or with each other; then the
    next seed is taken, deterministically)."""
    for k in range(20):
        run = minitf_run(seed + 7919 * k, eps, **kw)
        right = run.fed
        variants = [inputs_variant(run, own_at="t")[0]] if eps < 1.0 else []
        variants += [inputs_variant(run, gold_at="t")[0]] if eps > 0.0 else []
        variants += [inputs_variant(run, prob="1-eps")[0]] if 0.0 < eps < 1.0 else []
        if all((v != right).any() for v in variants):
            return run
    return run


# =====================================================================================
# Task 1.4 -- scheduled sampling
# =====================================================================================
def check_inputs(out, run: Run) -> None:
    B, T = run.labels.shape
    fed, gold = pair(out, "scheduled_sampling_inputs", "(fed, gold)")
    fed = as_array("fed", fed, shape=(B, T), kind="i")
    gold = as_array("gold", gold, shape=(B, T))
    if gold.dtype != np.bool_:
        fail(f"gold: expected a boolean array (True where the gold token was fed), received dtype {gold.dtype}")
    if (fed == run.fed).all() and (gold == run.gold).all():
        return
    if (fed[:, 0] != BOS).any():
        fail(f"step 0 was not fed the start token {BOS}: step 0 has no previous step, so no coin is tossed for it -- "
             f"it reads <bos> (id {BOS}) whatever eps; received {fed[:, 0].tolist()}")
    if not gold[:, 0].all():
        fail("gold[:, 0] is False: step 0 is fed the start token, which counts as the gold input (minitf's "
             "DecoderCache.gold is True there)")
    fed_v, gold_v = inputs_variant(run, prob="1-eps")
    if (gold == gold_v)[:, 1:].all() or (fed == fed_v).all():
        fail(f"mixed with probability 1 - eps: eps is the probability of the GOLD token (teacher forcing), so "
             f"step t is fed y_{{t-1}} where coins[:, t] < eps and the model's own token elsewhere; you fed the gold "
             f"token where coins[:, t] >= eps ({run.describe()})")
    if not (gold == run.gold).all():
        b, t = np.argwhere(gold != run.gold)[0]
        fail(f"gold[{b}, {t}] is {bool(gold[b, t])}, but coins[{b}, {t}] = {run.coins[b, t]:.4f} and eps = {run.eps}: "
             f"the gold token is fed where coins[:, t] < eps, one coin per row and step ({run.describe()})")
    if (fed == inputs_variant(run, own_at="t")[0]).all():
        fail("the one-position misalignment: step t was fed own_tokens[:, t], the model's prediction for position t, "
             "which it makes AT step t -- from this very input. The input at step t is the token for position "
             "t-1: the gold y_{t-1}, or the model's own token chosen at step t-1, own_tokens[:, t-1]")
    if (fed == inputs_variant(run, gold_at="t")[0]).all():
        fail("label leakage: step t was fed labels[:, t], the very token it must predict. The gold input of step t "
             "is labels[:, t-1] (the targets shifted right, <bos> at step 0)")
    expect_equal_ids("fed", fed, run.fed, hint=f"step t > 0: labels[:, t-1] where coins[:, t] < eps, else "
                                               f"own_tokens[:, t-1]; step 0: the start token ({run.describe()})")


@task4
def test_scheduled_sampling_inputs(submission, homework_seed):
    """The inputs minitf's decoder was fed, at eps = 0.7 and 0.3."""
    scheduled_sampling_inputs = submission.function("scheduled_sampling_inputs")
    for k, eps in enumerate((0.7, 0.3)):
        B, S, T = shapes(homework_seed, [(4, 5, 7)], B=(1, 5), S=(1, 6), T=(2, 9))[0]
        run = discriminating_run(homework_seed + 300 + k, eps, B=B, S=S, T=T)
        check_inputs(call(scheduled_sampling_inputs, *run.args(), names=INPUT_ARGS, why=READ_ONLY), run)


@task4
def test_scheduled_sampling_inputs_at_the_ends(submission, homework_seed):
    """eps = 1 is plain teacher forcing (the targets shifted right); eps = 0 feeds the model its own tokens only."""
    scheduled_sampling_inputs = submission.function("scheduled_sampling_inputs")
    for k, eps in enumerate((1.0, 0.0)):
        run = discriminating_run(homework_seed + 310 + k, eps, B=3, T=6)
        check_inputs(call(scheduled_sampling_inputs, *run.args(), names=INPUT_ARGS, why=READ_ONLY), run)


@task4
def test_scheduled_sampling_inputs_with_another_start_token(submission, homework_seed):
    """``bos_id`` at another value than the tiny model's <bos> (1): step 0 reads the token given; a
    batch of one row too."""
    scheduled_sampling_inputs = submission.function("scheduled_sampling_inputs")
    for k, (B, bos_id) in enumerate(((3, 7), (1, 0))):
        run = discriminating_run(homework_seed + 330 + k, 0.5, B=B, T=6)
        args = run.args()[:-1] + (bos_id,)
        fed, gold = pair(call(scheduled_sampling_inputs, *args, names=INPUT_ARGS, why=READ_ONLY),
                         "scheduled_sampling_inputs", "(fed, gold)")
        expected = run.fed.copy()
        expected[:, 0] = bos_id
        expect_equal_ids(f"fed (bos_id={bos_id}, B={B})", as_array("fed", fed, shape=expected.shape, kind="i"),
                         expected, hint=f"step 0 reads the bos_id given ({bos_id}), not a constant; the other steps "
                                        f"as before")
        expect_equal_ids("gold", as_array("gold", gold, shape=expected.shape), run.gold)


def minitf_embedding_gradient(fed: np.ndarray, dX: np.ndarray) -> np.ndarray:
    emb = Embedding(V, E, rng=np.random.default_rng(0), dtype=np.float64)
    emb.zero_grad()
    emb.backward(dX, EmbeddingCache(fed))
    return emb.grads["W_E"].copy()


def through_the_choice(run: Run, dX: np.ndarray) -> np.ndarray:
    """What reaches logits[:, t-1] if the choice at step t is treated as differentiable (a soft
    embedding softmax(logits) W_E, "straight through"): (B, T, V), 0 where the gold token was fed."""
    p = softmax(run.logits)  # (B, T, V)
    dp = dX @ run.W_E.T  # (B, T, V) the gradient at each step's input, read as a distribution over tokens
    dz = p[:, :-1] * (dp[:, 1:] - (dp[:, 1:] * p[:, :-1]).sum(axis=-1, keepdims=True))  # (B, T-1, V)
    out = np.zeros_like(run.logits)
    out[:, :-1] = dz * ~run.gold[:, 1:, None]
    return out


@task4
def test_scheduled_sampling_backward(submission, homework_seed):
    """Nothing but the loss's own gradient reaches the logits; each fed token's embedding row gets
    its steps' gradients, added up over repeats (the model's own tokens included)."""
    scheduled_sampling_backward = submission.function("scheduled_sampling_backward")
    for k, (B, S, T) in enumerate(shapes(homework_seed, [(4, 5, 7), (1, 3, 4)], B=(1, 5), S=(1, 6), T=(2, 9))):
        run = discriminating_run(homework_seed + 320 + 5 * k, 0.5, B=B, S=S, T=T)
        B, T = run.labels.shape
        rng = rng_for(homework_seed + 321 + 5 * k)
        dlogits, dX = rng.normal(size=(B, T, V)) / (B * T), rng.normal(size=(B, T, E))
        out = call(scheduled_sampling_backward, dlogits, dX, run.logits, run.fed, run.gold, run.W_E,
                   names=BACKWARD_ARGS, why=READ_ONLY)
        g = gradient_dict(out, "scheduled_sampling_backward", {"dlogits": (B, T, V), "dW_E": (V, E)})
        if not close(g["dlogits"], dlogits, **BACKWARD_TOL):
            extra = g["dlogits"] - dlogits  # (B, T, V)
            after_own = np.zeros((B, T), dtype=bool)
            after_own[:, :-1] = ~run.gold[:, 1:]  # step t-1's logits chose step t's own token
            if close(g["dlogits"], dlogits + through_the_choice(run, dX), **BACKWARD_TOL) or \
                    np.abs(extra[after_own]).max(initial=0.0) > BACKWARD_TOL["atol"]:
                fail("the gradient flowed through the sampled token: at a step fed the model's own token, part of "
                     "dX went back into the logits of the step before, which the token was chosen from. The choice is "
                     "an integer (an argmax, or a draw): it has no derivative, and scheduled sampling sends nothing "
                     "through it -- the fed token is treated as if it had been given. dlogits is the loss's gradient "
                     "alone. (That ignored dependence is why its objective is biased, Lesson 1, section 5)")
            expect_close("dlogits", g["dlogits"], dlogits, **BACKWARD_TOL,
                         hint="only the loss reaches the logits: return its gradient unchanged")
        e = minitf_embedding_gradient(run.fed, dX)
        if not close(g["dW_E"], e, **BACKWARD_TOL):
            overwritten = np.zeros((V, E))
            overwritten[run.fed.reshape(-1)] += dX.reshape(-1, E)  # fancy-index +=: one of the repeats survives
            if close(g["dW_E"], overwritten, **BACKWARD_TOL):
                fail("repeated tokens lost their gradients: dW_E[fed] += dX writes each row once, so a token fed n times "
                     "keeps one of its n gradients. Use np.add.at(dW_E, fed, dX), which adds every one")
            gold_only = minitf_embedding_gradient(run.fed, dX * run.gold[:, :, None])
            if close(g["dW_E"], gold_only, **BACKWARD_TOL):
                fail("the steps fed the model's own token gave their embedding rows no gradient: the fed token, "
                     "whoever chose it, was read from W_E like any input, so its row gets that step's dX. (What gets "
                     "nothing is the logits it was chosen from)")
            expect_close("dW_E", g["dW_E"], e, **BACKWARD_TOL, hint="dW_E[v] = sum of dX[b, t] over the steps with "
                                                                      "fed[b, t] = v")
