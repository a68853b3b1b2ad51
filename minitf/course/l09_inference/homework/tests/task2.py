"""Homework 9, task 9.2 (one step of beam search with length normalisation): the public tests.

The expected step is minitf's ``beam_search`` step (``minitf.decoding.beam``), written out
here for one step: the same ranking (a stable sort over all K * V candidates), the same 2K,
the same rule for what finishes and what goes on, and minitf's own
``length_normalized_score``.  One test also replays steps of minitf's ``beam_search`` on a
tiny model, from its trace."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.decoding import beam_search, length_normalized_score
from minitf.grading.asserts import as_array, call, close, expect_close, expect_equal_ids, fail
from minitf.grading.problems import shapes
from minitf.layers.softmax import log_softmax

from .common import first_index

HOMEWORK = "hw09"
task2 = pytest.mark.hw09_task2
EOS = 2
NAMES = ("next_beam", "next_token", "next_scores", "finished_beam", "finished_scores")
TOL = {"rtol": 1e-12, "atol": 1e-12}  # a sum and one division in float64


# =====================================================================================
# Task 9.2 -- problems and minitf's step
# =====================================================================================
def beam_problem(seed: int, B=4, K=3, V=9, first_step=False, eos_boost=2.0, eos_id=EOS):
    """beam_scores (B, K) best first (or only beam 0 alive at the first step) and log_probs (B, K, V),
    <eos> made likely enough to reach the K best in most examples."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 1.5, size=(B, K, V))
    logits[..., eos_id] += rng.uniform(0.0, eos_boost, size=(B, K))  # some beams want to stop
    log_probs = log_softmax(logits)
    if first_step:
        beam_scores = np.full((B, K), -np.inf)
        beam_scores[:, 0] = 0.0
    else:
        beam_scores = -np.sort(rng.uniform(0.5, 6.0, size=(B, K)), axis=1)  # (B, K) best first
    return beam_scores, log_probs


TIE_DRAWS = 1000
"""At most this many draws of :func:`tied_beam_problem` (one in a few holds a tie: logits of five values
among at least four tokens; tests/course/l09/test_homework.py counts the draws on the public and a
secret seed)."""


def tied_beam_problem(seed: int, B=3, K=3, V=9, first_step=False, eos_id=EOS, draws: int = TIE_DRAWS):
    """A model whose logits tie (small integers): a beam's equal logits give it equal log-probs, bit for
    bit, so its candidates tie; redrawn until some example holds a tie among its K best candidates (where
    the order of equal scores decides what goes on and what finishes), at most ``draws`` times."""
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        logits = rng.integers(-2, 3, size=(B, K, V)).astype(np.float64)
        logits[..., eos_id] += rng.integers(0, 3, size=(B, K))  # some beams want to stop
        log_probs = log_softmax(logits)
        if first_step:
            beam_scores = np.full((B, K), -np.inf)
            beam_scores[:, 0] = 0.0
        else:
            beam_scores = -np.sort(rng.uniform(0.5, 3.0, size=(B, K)), axis=1)  # (B, K) best first
        cand = (beam_scores[:, :, None] + log_probs).reshape(B, K * V)
        best = -np.sort(-cand, axis=1)[:, :K]  # (B, K) the K best scores
        if (np.diff(best, axis=1) == 0).any():
            return beam_scores, log_probs
    raise RuntimeError(f"tied_beam_problem: no tie among the K best candidates in {draws} draws (B={B}, K={K}, "
                       f"V={V}, first_step={first_step}): the grader's problem, not the submission's; widen the "
                       f"sizes or the bound")


def minitf_step(beam_scores, log_probs, length, alpha, eos_id=EOS, norm=None):
    """One step of minitf's beam_search, for arrays (``norm``: how a finished sum is scored)."""
    norm = norm or (lambda s: length_normalized_score(s, length, alpha))
    B, K, V = log_probs.shape
    cand = (beam_scores.reshape(B * K, 1) + log_probs.reshape(B * K, V)).reshape(B, K * V)
    top = np.argsort(-cand, axis=1, kind="stable")[:, :2 * K]
    top_scores = np.take_along_axis(cand, top, axis=1)
    top_beam, top_token = np.divmod(top, V)
    is_eos = top_token == eos_id
    finishing = (is_eos & np.isfinite(top_scores))[:, :K]
    finished_beam = np.where(finishing, top_beam[:, :K], -1)
    finished_scores = np.where(finishing, norm(np.where(finishing, top_scores[:, :K], -np.inf)), -np.inf)
    cont = np.argsort(is_eos, axis=1, kind="stable")[:, :K]
    return (np.take_along_axis(top_beam, cont, axis=1), np.take_along_axis(top_token, cont, axis=1),
            np.take_along_axis(top_scores, cont, axis=1), finished_beam, finished_scores)


def call_step(fn, beam_scores, log_probs, length, alpha, eos_id=EOS):
    out = call(fn, beam_scores, log_probs, length, alpha, eos_id, names=["beam_scores", "log_probs"], returns=5)
    B, K = beam_scores.shape
    kinds = ("i", "i", "f", "i", "f")
    return tuple(as_array(n, x, shape=(B, K), kind=k) for n, x, k in zip(NAMES, out, kinds))


# ---- what classic mistakes compute ----------------------------------------------------------------------
def diagnose(got, beam_scores, log_probs, length, alpha) -> str | None:
    nb, nt, ns, fb, fs = got
    exp = minitf_step(beam_scores, log_probs, length, alpha)
    B, K, _ = log_probs.shape
    if (nt[np.isfinite(ns)] == EOS).any():
        b, k = first_index(np.isfinite(ns) & (nt == EOS))
        return (f"next beam {k} of example {b} ends in <eos> (token {EOS}): an <eos> candidate is finished, it "
                f"leaves the beam; the next beams are the K best candidates that do not end in <eos> (that is why "
                f"the step looks at 2K)")
    if np.array_equal(fb, exp[3]):
        fin = exp[3] >= 0
        raw = np.where(fin, beam_scores[np.arange(B)[:, None], np.maximum(exp[3], 0)] + 0.0, 0.0)
        eos_lp = np.where(fin, log_probs[np.arange(B)[:, None], np.maximum(exp[3], 0), EOS], 0.0)
        total = raw + eos_lp
        if fin.any() and alpha != 0 and length > 1:
            if close(fs[fin], total[fin], **TOL):
                return (f"no length normalisation: the finished hypotheses' scores are their plain sums of "
                        f"log-probs; with length_penalty = {alpha:g} and length = {length} each must be divided by "
                        f"length ** length_penalty = {float(length) ** alpha:.4g}. Without it a short hypothesis "
                        f"(fewer negative terms) beats a longer, better one")
            if close(fs[fin], (raw + eos_lp / float(length) ** alpha)[fin], **TOL):
                return ("the length penalty is applied to the log-prob of the last step only (the <eos>): "
                        "score = sum_before + log p(<eos>) / length**alpha. It divides the whole sum of the "
                        "hypothesis's log-probs, once: score = (sum_before + log p(<eos>)) / length**alpha")
            if close(fs[fin], (total / float(length + 1) ** alpha)[fin], **TOL):
                return ("the length counts the start token (length + 1): Hugging Face and minitf count the "
                        "generated tokens only, the final <eos> included")
    if not np.array_equal(nb, exp[0]) or not np.array_equal(nt, exp[1]):
        # ranking within each beam instead of over all K * V candidates
        per_beam = np.argsort(-log_probs, axis=-1, kind="stable")[..., :1]  # each beam's best token
        if np.array_equal(nb, np.broadcast_to(np.arange(K), (B, K))) and \
                np.array_equal(nt, per_beam[..., 0]) and not np.array_equal(nb, exp[0]):
            return ("each beam is extended by its own best token: all K * V candidates of an example compete "
                    "together, and one good beam may supply several of the next beams while others die")
    return None


def check_step(fn, beam_scores, log_probs, length, alpha, what: str):
    got = call_step(fn, beam_scores, log_probs, length, alpha)
    mistake = diagnose(got, beam_scores, log_probs, length, alpha)
    if mistake:
        fail(f"beam_step ({what}): {mistake}")
    exp = minitf_step(beam_scores, log_probs, length, alpha)
    live = np.isfinite(exp[2])
    for i in (0, 1):
        if not np.array_equal(np.where(live, got[i], -1), np.where(live, exp[i], -1)):
            b, k = first_index(live & (got[i] != exp[i]))
            fail(f"beam_step ({what}): next beam {k} of example {b} should extend beam {exp[0][b, k]} with token "
                 f"{exp[1][b, k]} (running sum {exp[2][b, k]:.6g}), received beam {got[0][b, k]}, token "
                 f"{got[1][b, k]}: the next beams are the K best candidates (by running sum, over all K * V) "
                 f"that do not end in <eos>, best first")
    expect_close(f"next_scores ({what})", np.where(live, got[2], 0.0), np.where(live, exp[2], 0.0), **TOL,
                 hint="a new beam's score is its running sum, beam_scores[b, k] + log_probs[b, k, v]")
    if not np.array_equal(got[3], exp[3]):
        b, i = first_index(got[3] != exp[3])
        fail(f"beam_step ({what}): finished_beam[{b}, {i}] = {got[3][b, i]}, expected {exp[3][b, i]}: the i-th "
             f"best candidate of the example (i < K) finishes when it ends in <eos> (-1 otherwise); candidates "
             f"ranked K or lower never finish at this step")
    fin = exp[3] >= 0
    if not (np.isneginf(got[4]) == ~fin).all():
        b, i = first_index(np.isneginf(got[4]) != ~fin)
        fail(f"beam_step ({what}): finished_scores[{b}, {i}] = {got[4][b, i]}: -inf exactly where nothing finishes")
    expect_close(f"finished_scores ({what})", np.where(fin, got[4], 0.0), np.where(fin, exp[4], 0.0), **TOL,
                 hint="score = (sum of the hypothesis's log-probs) / length ** length_penalty")


# =====================================================================================
# Task 9.2 -- the tests
# =====================================================================================
@task2
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 2.0])
def test_beam_step_matches_minitf(submission, homework_seed, alpha):
    """A middle step (length 5) with K = 3 live beams; float64, rtol 1e-12."""
    step = submission.function("beam_step")
    (B, K, V), = shapes(homework_seed, [(4, 3, 9)], B=(1, 5), K=(1, 4), V=(3, 12), rule=lambda B, K, V: V >= K + 2)
    beam_scores, log_probs = beam_problem(homework_seed + 200 + int(10 * alpha), B=B, K=K, V=V)
    check_step(step, beam_scores, log_probs, 5, alpha, f"length 5, length_penalty {alpha:g}")


@task2
def test_beam_step_first_step_has_one_live_beam(submission, homework_seed):
    """The first step: beams 1 .. K-1 are -inf copies of beam 0; all next beams extend beam 0."""
    step = submission.function("beam_step")
    beam_scores, log_probs = beam_problem(homework_seed + 210, K=4, V=10, first_step=True)
    check_step(step, beam_scores, log_probs, 1, 1.0, "the first step, only beam 0 alive")


@task2
def test_beam_step_length_normalisation_divides_the_whole_sum(submission, homework_seed):
    """Every beam's <eos> is likely: several hypotheses finish, their scores sum / length**alpha."""
    step = submission.function("beam_step")
    beam_scores, log_probs = beam_problem(homework_seed + 220, B=5, K=4, V=10, eos_boost=6.0)
    check_step(step, beam_scores, log_probs, 7, 0.8, "length 7, length_penalty 0.8, many <eos>")


@task2
def test_beam_step_replays_minitf_beam_search(submission, homework_seed):
    """minitf's beam_search on a tiny float64 model, traced; each step is fed to beam_step with the
    model's log-probs for the traced beams: the same beams go on and the same hypotheses finish."""
    step = submission.function("beam_step")
    from minitf.config import ModelConfig
    from minitf.models import EncoderDecoder
    rng = np.random.default_rng(homework_seed + 230)
    V, K = 10, 3
    for _ in range(20):  # an untrained model: take one under which some hypotheses finish early
        cfg = ModelConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                          n_decoder_layers=1, max_len=16, dtype="float64", seed=int(rng.integers(1 << 30)))
        model = EncoderDecoder(cfg)
        src = rng.integers(3, V, size=(2, 5))
        out = beam_search(model, src, num_beams=K, max_new_tokens=6, length_penalty=1.0, start_id=1, eos_id=EOS,
                          trace=True)
        if sum(c.status == "finished" for s in out.trace for c in s.candidates) >= 2:
            break
    with model.evaluating():
        for s in out.trace:
            beam_scores = np.full((1, K), -np.inf)
            log_probs = np.zeros((1, K, V))
            beam_scores[0, s.beam_rows] = s.beam_scores
            prefixes = np.array([[1, *tokens] for tokens in s.beams])  # (n_live, t+1)
            logits, _ = model.forward(np.repeat(src[s.example:s.example + 1], len(s.beams), axis=0), prefixes)
            log_probs[0, s.beam_rows] = log_softmax(logits[:, -1])
            got = call_step(step, beam_scores, log_probs, s.step + 1, 1.0)
            kept = [(c.beam, c.token) for c in s.candidates if c.status == "kept"]
            finished = [(c.beam, c.token) for c in s.candidates if c.status == "finished"]
            live = np.isfinite(got[2][0])
            mine = list(zip(got[0][0][live].tolist(), got[1][0][live].tolist()))
            if mine != kept:
                fail(f"replaying minitf's beam_search (example {s.example}, step {s.step}): minitf continued the "
                     f"beams {kept} (beam, token), best first; beam_step gives {mine}")
            mine_fin = [(int(k), EOS) for k in got[3][0] if k >= 0]
            if mine_fin != finished:
                fail(f"replaying minitf's beam_search (example {s.example}, step {s.step}): minitf finished "
                     f"{finished} (beam, token); beam_step finishes {mine_fin}")


@task2
def test_beam_step_with_another_eos_id_and_one_example(submission, homework_seed):
    """``eos_id`` at another value than 2 (here a token id of the vocabulary's middle, and 0), and a
    batch of one example: the candidates that end in the eos_id given finish, and only they."""
    step = submission.function("beam_step")
    (B, K, V), = shapes(homework_seed, [(3, 3, 9)], B=(1, 5), K=(1, 4), V=(6, 12), rule=lambda B, K, V: V >= 2 * K)
    for k, (b, eos_id) in enumerate(((B, 5), (1, 0))):
        beam_scores, log_probs = beam_problem(homework_seed + 230 + k, B=b, K=K, V=V, eos_boost=3.0, eos_id=eos_id)
        got = call_step(step, beam_scores, log_probs, 4, 1.0, eos_id=eos_id)
        exp = minitf_step(beam_scores, log_probs, 4, 1.0, eos_id=eos_id)
        what = f"eos_id = {eos_id}, B = {b}"
        hint = f"a candidate finishes when its token is the eos_id given ({eos_id}), not a constant"
        live = np.isfinite(exp[2])
        for i in (0, 1, 3):
            got_i = np.where(live, got[i], -1) if i < 2 else got[i]
            exp_i = np.where(live, exp[i], -1) if i < 2 else exp[i]
            expect_equal_ids(f"{NAMES[i]} ({what})", got_i, exp_i, hint=hint)
        fin = exp[3] >= 0
        expect_close(f"finished_scores ({what})", np.where(fin, got[4], 0.0), np.where(fin, exp[4], 0.0), **TOL,
                     hint=hint)


@task2
@pytest.mark.parametrize("first_step", [False, True], ids=["middle step", "first step"])
def test_beam_step_breaks_ties_by_the_lower_index(submission, homework_seed, first_step):
    """Equal running sums (a model whose logits tie): the template's order, best first and, among equal
    scores, the lower k * V + v first (minitf's stable sort), decides which candidates go on and which finish."""
    step = submission.function("beam_step")
    (B, K, V), = shapes(homework_seed, [(3, 3, 9)], B=(1, 5), K=(2, 4), V=(4, 12), rule=lambda B, K, V: V >= 2 * K)
    beam_scores, log_probs = tied_beam_problem(homework_seed + 240 + first_step, B=B, K=K, V=V, first_step=first_step)
    length = 1 if first_step else 4
    what = f"tied scores, {'the first step' if first_step else f'length {length}'}"
    got = call_step(step, beam_scores, log_probs, length, 1.0)
    exp = minitf_step(beam_scores, log_probs, length, 1.0)
    live = np.isfinite(exp[2])
    same_ids = all(np.array_equal(np.where(live, got[i], -1), np.where(live, exp[i], -1)) for i in (0, 1)) \
        and np.array_equal(got[3], exp[3])
    if not same_ids:
        # the ranking from np.argsort(scores)[:, ::-1]: ascending, reversed (equal scores, the higher index first)
        Bx, Kx, Vx = log_probs.shape
        cand = (beam_scores[:, :, None] + log_probs).reshape(Bx, Kx * Vx)
        top = np.argsort(cand, axis=1, kind="stable")[:, ::-1][:, :2 * Kx]
        top_beam, top_token = np.divmod(top, Vx)
        is_eos = top_token == EOS
        cont = np.argsort(is_eos, axis=1, kind="stable")[:, :Kx]
        rev = (np.take_along_axis(top_beam, cont, axis=1), np.take_along_axis(top_token, cont, axis=1),
               np.where(is_eos[:, :Kx], top_beam[:, :Kx], -1))
        same_scores = close(np.where(live, got[2], 0.0), np.where(live, exp[2], 0.0), **TOL)
        if all(np.array_equal(g, r) for g, r in zip((got[0], got[1], got[3]), rev)) or same_scores:
            b = int(np.argmax((np.diff(-np.sort(-cand, axis=1)[:, :Kx], axis=1) == 0).any(axis=1)))
            fail(f"beam_step ({what}): the candidates are ranked by score, but equal scores come out in another "
                 f"order than the template asks (example {b} ties among its K best): equal running sums must be "
                 f"ranked by the lower index k * V + v first. np.argsort(scores)[:, ::-1] puts the higher index "
                 f"first, and the default kind of np.argsort is not stable: rank with a stable sort of -scores "
                 f"(np.argsort(-scores, kind=stable))")
    check_step(step, beam_scores, log_probs, length, 1.0, what)
