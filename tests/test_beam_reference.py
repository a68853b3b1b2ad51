"""minitf.decoding.beam_search against a deliberately simple reference of Hugging Face's
beam search as transformers runs it today (``GenerationMixin._beam_search`` with
``_get_running_beams_for_next_iteration``, ``_update_finished_beams`` and
``_check_early_stop_heuristic``: the rewrite of 4.50, settled from 4.54), and, when
transformers is installed, against transformers itself (last run against 5.24.0, with
torch 2.13 on the CPU: same hypotheses, scores within float32 rounding).

The reference below is written for clarity, not speed: plain Python loops over examples,
beams and candidate ranks, and no KV cache (every step runs ``model.decode`` on the whole
prefix), so it shares neither the vectorised bookkeeping nor the cache with the code it
checks.  The two must return the same hypotheses, in the same order, with the same
finished flags and scores.

Beam search's stopping rules only matter when hypotheses finish, and randomly initialised
models rarely emit ``<eos>``.  The models here do, early and often:

* *eos-biased*: a random model whose decoder output has a constant feature (coordinate 0
  of the final LayerNorm: gamma 0, beta 1), so row 0 of W_U is an output bias; that bias
  is raised for ``<eos>`` only, making ``<eos>`` likely at every step but never certain;
* *briefly trained*: 80 to 120 Adam steps on a copy task (letters, then ``<eos>``), so
  ``<eos>`` becomes likely where the output should end and the pool fills with early,
  poor hypotheses before the good one finishes -- the situation the stopping rules decide.
"""
from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.decoding import beam_search
from minitf.layers.softmax import log_softmax
from minitf.loss import cross_entropy
from minitf.models.encoder_decoder import EncoderDecoder
from minitf.optim import Adam

V = 9  # target vocabulary: <pad> <bos> <eos> and six letters; V >= 2K for every K below
SRC_V = 11  # source vocabulary: specials, then letters 4..10
T_MAX = 12  # max_new_tokens, the models' max_len
SCORE_TOL = 1e-9
START_ID, EOS_ID = ModelConfig().bos_id, ModelConfig().eos_id  # the models' own: beam_search's defaults


# =====================================================================================
# The reference
# =====================================================================================
class RefHypothesis(NamedTuple):
    tokens: tuple  # generated ids (no start token), ending with <eos> when finished
    log_prob: float  # sum of the model's log-probs of the tokens
    score: float  # the length-normalised score hypotheses are ranked by
    finished: bool


def reference_score(log_prob: float, length: int, length_penalty: float, style: str) -> float:
    """``log_prob / length ** lp`` (Hugging Face) or ``log_prob / ((5 + length) / 6) ** lp`` (GNMT)."""
    if style == "hf":
        return log_prob / length ** length_penalty
    return log_prob / ((5 + length) / 6) ** length_penalty


def reference_banned(prefix: list, n: int) -> set:
    """Tokens that would complete an n-gram already in ``prefix`` (start token included)."""
    if n == 0 or len(prefix) < n:
        return set()
    last = prefix[len(prefix) - (n - 1):]
    return {prefix[i + n - 1] for i in range(len(prefix) - n + 1) if prefix[i:i + n - 1] == last}


def hf_is_done(pool_scores, top, n, *, num_beams, max_new_tokens, length_penalty, length_penalty_style,
               early_stopping) -> bool:
    """Rule 5 of :func:`reference_beam_search`: is the example done after step n?

    ``pool_scores``: the scores of the pool; ``top``: the step's top 2K candidates
    ``(sum, beam, token)``, best first; ``n``: the generated length after the step.
    """
    if len(pool_scores) < num_beams:
        return False
    if early_stopping is True:
        return True
    lp = length_penalty
    length = max_new_tokens if early_stopping == "never" and lp > 0 else n
    best_live = next(c[0] for c in top if c[2] != EOS_ID)  # the best running beam of the next step
    return min(pool_scores) >= reference_score(best_live, length, lp, length_penalty_style)


def reference_beam_search(model, src_ids, *, num_beams, num_return_sequences, max_new_tokens, length_penalty,
                          length_penalty_style, early_stopping, no_repeat_ngram_size, is_done=hf_is_done):
    """Hugging Face's beam search, one example at a time, written out rule by rule.

    For each example, at step n = 1, 2, ..., ``max_new_tokens`` (n is the generated length
    once this step's token is appended):

    1. Candidates.  Each live beam is extended by every token; a candidate's score is the
       beam's sum of log-probs plus the token's log-prob (-inf for a token that would
       repeat an n-gram).  The top 2K of these K * V candidates are kept, best first
       (equal scores by beam, then token: a stable sort; ``torch.topk`` leaves that open).
    2. Stopping.  A candidate ending in ``<eos>`` ranked among the first K (rank < K, not
       < 2K) becomes a finished hypothesis of generated length n, ``<eos>`` counted;
       one ranked lower is dropped.  At n = ``max_new_tokens`` every candidate ranked
       among the first K stops (the max-length criterion hits them all) and enters the
       pool, unfinished unless it ends in ``<eos>``.
    3. Continuing.  The first K candidates not ending in ``<eos>`` become the next beams.
    4. The pool.  The example keeps at most K hypotheses: a newcomer enters when the pool
       has fewer than K or its score beats the worst strictly; if the pool then holds K + 1,
       the worst leaves (the oldest of equals).  Scores are :func:`reference_score`.
    5. Done?  Never with fewer than K in the pool.  With K: ``early_stopping=True`` stops
       at once; ``False`` stops when the worst pool score is at least the best *live beam*'s
       sum (the first beam of rule 3: the best candidate not ending in ``<eos>``) scored at
       length n; ``"never"`` does the same but, when ``length_penalty > 0``, scores that sum
       at ``max_new_tokens`` instead of n (the largest possible denominator).  A done
       example stops searching.  (:func:`hf_is_done`; ``is_done`` replaces it, for
       :func:`misread_is_done`.)
    6. The end.  The R best of the pool (sorted by score; of equals, the one added later
       first, as popping a stable sort does) are returned.  Exact ties between hypotheses
       do not occur in the cases below.

    (Up to 4.49 only ``<eos>`` candidates stopped at ``max_new_tokens``, and the live beams
    of rule 3 then joined the pool.  The pool comes out the same: the live beams ranked K or
    lower are worse than all K candidates that enter today, so none of them could be kept.)

    Hugging Face starts with K copies of ``<bos>``, all but the first scored -1e9; with
    V >= 2K every step-1 candidate comes from the first, so one starting beam is the same.

    Returns
    -------
    list of (list of RefHypothesis, int)
        For each example its R hypotheses, best first, and the number of steps it ran.
    """
    K, R, T = num_beams, num_return_sequences, max_new_tokens
    lp, style = length_penalty, length_penalty_style
    vocab = model.config.tgt_vocab_size
    assert vocab >= 2 * K, "the single starting beam stands for Hugging Face's K only when V >= 2K"
    results = []
    for src_row in np.asarray(src_ids):
        H_enc, _ = model.encode(src_row[None])  # (1, S, D)
        src_mask = model.source_mask(src_row[None])  # (1, 1, 1, S)
        beams = [((), 0.0)]  # live beams: (tokens, sum of log-probs)
        pool = []  # RefHypothesis, in the order they entered

        def offer(tokens, log_prob, length, finished):
            score = reference_score(log_prob, length, lp, style)
            if len(pool) < K or score > min(h.score for h in pool):
                pool.append(RefHypothesis(tokens, log_prob, score, finished))
                if len(pool) > K:
                    pool.remove(min(pool, key=lambda h: h.score))  # min() returns the oldest of equals

        done = False
        for n in range(1, T + 1):
            prefixes = np.array([[START_ID, *tokens] for tokens, _ in beams])  # (k, n) the whole prefix
            k = len(beams)
            logits, _ = model.decode(prefixes, np.repeat(H_enc, k, axis=0), np.repeat(src_mask, k, axis=0))
            log_probs = log_softmax(logits[:, -1].astype(np.float64))  # (k, V)
            candidates = []
            for i, (tokens, beam_sum) in enumerate(beams):
                banned = reference_banned([START_ID, *tokens], no_repeat_ngram_size)
                for v in range(vocab):
                    candidates.append((-np.inf if v in banned else beam_sum + log_probs[i, v], i, v))
            top = sorted(candidates, key=lambda c: -c[0])[:2 * K]  # stable: ties stay in (beam, token) order
            last = n == T
            next_beams = []
            for rank, (cand_sum, i, v) in enumerate(top):
                tokens = beams[i][0] + (v,)
                if rank < K and np.isfinite(cand_sum) and (v == EOS_ID or last):
                    offer(tokens, cand_sum, n, v == EOS_ID)
                if v != EOS_ID and len(next_beams) < K:
                    next_beams.append((tokens, cand_sum))
            beams = next_beams
            done = is_done([h.score for h in pool], top, n, num_beams=K, max_new_tokens=T, length_penalty=lp,
                           length_penalty_style=style, early_stopping=early_stopping)
            if done:
                break
        ranked = sorted(pool, key=lambda h: h.score)[::-1]
        results.append((ranked[:R], n))
    return results


# =====================================================================================
# Models that emit <eos> early and often
# =====================================================================================
def _config(seed, norm_first):
    return ModelConfig(src_vocab_size=SRC_V, tgt_vocab_size=V, d_model=16, n_heads=4, d_ff=32,
                       n_encoder_layers=2, n_decoder_layers=2, max_len=T_MAX, norm_first=norm_first,
                       dtype="float64", seed=seed)


def eos_biased_model(seed, norm_first, eos_bias=1.0):
    """A random model with an output bias of ``eos_bias`` on <eos> and 0 elsewhere."""
    model = EncoderDecoder(_config(seed, norm_first)).eval()
    norm = model.decoder_norm.params
    norm["gamma"][0], norm["beta"][0] = 0.0, 1.0  # coordinate 0 of H_dec is the constant 1
    W_U = model.params["W_U"]  # (D, V); row 0 now acts as an output bias
    W_U[0] = 0.0
    W_U[0, EOS_ID] = eos_bias
    return model


def copy_task_batch(rng, n, lengths=(1, 7)):
    """n sources of letters 4..10, right-padded to 6; target: the letters mapped into 3..8, then <eos>."""
    S = 6
    src = np.zeros((n, S), dtype=np.int64)  # (B, S)
    labels = np.full((n, S + 1), -100, dtype=np.int64)  # (B, T)
    for i in range(n):
        L = int(rng.integers(*lengths))
        letters = rng.integers(4, SRC_V, size=L)
        src[i, :L] = letters
        labels[i, :L] = (letters - 4) % (V - 3) + 3
        labels[i, L] = EOS_ID
    return src, labels


def briefly_trained_model(seed, norm_first, steps=100, lr=0.01):
    """A model trained for ``steps`` Adam steps (batches of 16) on :func:`copy_task_batch`."""
    model = EncoderDecoder(_config(seed, norm_first))
    rng = np.random.default_rng(seed)
    opt = Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        src, labels = copy_task_batch(rng, 16)
        dec_in = np.concatenate([np.full((16, 1), START_ID), np.where(labels == -100, 0, labels)[:, :-1]], axis=1)
        logits, cache = model.forward(src, dec_in)
        _, dlogits = cross_entropy(logits, labels)
        model.zero_grad()
        model.backward(dlogits, cache)
        opt.step(model.gradients())
    return model.eval()


def build_cases():
    """(name, model, src_ids): right-padded batches of 2 and 3 sources, pre-LN and post-LN."""
    long3 = np.array([[5, 9, 4, 8, 6, 0, 0], [7, 7, 10, 5, 6, 4, 9], [6, 10, 0, 0, 0, 0, 0]])
    long2 = np.array([[8, 4, 10, 0, 0], [9, 5, 6, 7, 0]])
    # short outputs: the pool fills with early, poor hypotheses before the good one ends
    short_a = np.array([[7, 7, 0, 0, 0, 0], [5, 9, 8, 0, 0, 0], [6, 0, 0, 0, 0, 0]])
    short_b = np.array([[7, 4, 9, 0, 0, 0], [9, 5, 4, 0, 0, 0], [4, 7, 4, 0, 0, 0]])
    return [("eos-biased pre-LN", eos_biased_model(3, True), long3),
            ("eos-biased post-LN", eos_biased_model(4, False), long2),
            ("trained pre-LN", briefly_trained_model(0, True, steps=80), short_a),
            ("trained post-LN", briefly_trained_model(5, False, steps=120), short_b)]


@pytest.fixture(scope="module")
def cases():
    return build_cases()


# num_beams K, num_return_sequences R, no_repeat_ngram_size
BEAMS = [(2, 2, 0), (2, 1, 2), (3, 3, 2), (3, 2, 0), (4, 4, 0), (4, 3, 2)]
STOPPING = [(es, lp, "hf") for es, lp in itertools.product([True, False, "never"], [-1.0, 0.0, 1.0, 2.0])] + \
           [(es, 0.6, "gnmt") for es in (True, False, "never")]


def _search_kwargs(K, R, ngram, early_stopping, length_penalty, style):
    return dict(num_beams=K, num_return_sequences=R, max_new_tokens=T_MAX, length_penalty=length_penalty,
                length_penalty_style=style, early_stopping=early_stopping, no_repeat_ngram_size=ngram)


def _compare(out, ref, what):
    for b, (expected, _) in enumerate(ref):
        got = out.hypotheses(b)
        where = f"{what}, example {b}"
        assert [h.tokens for h in got] == [h.tokens for h in expected], where
        assert [h.finished for h in got] == [h.finished for h in expected], where
        np.testing.assert_allclose([h.score for h in got], [h.score for h in expected], rtol=0, atol=SCORE_TOL,
                                   err_msg=where)
        np.testing.assert_allclose([h.log_prob for h in got], [h.log_prob for h in expected], rtol=0,
                                   atol=SCORE_TOL, err_msg=where)


@pytest.mark.parametrize("early_stopping, length_penalty, style", STOPPING,
                         ids=[f"{es}-{style}-lp{lp:g}" for es, lp, style in STOPPING])
def test_beam_search_matches_the_hugging_face_reference(early_stopping, length_penalty, style, cases):
    for (name, model, src), (K, R, ngram) in itertools.product(cases, BEAMS):
        kw = _search_kwargs(K, R, ngram, early_stopping, length_penalty, style)
        out = beam_search(model, src, **kw)
        ref = reference_beam_search(model, src, **kw)
        _compare(out, ref, f"{name}, K={K}, R={R}, no_repeat_ngram_size={ngram}")


# =====================================================================================
# Guards: the cases above reach the rules they are meant to check
# =====================================================================================
def misread_is_done(misreading):
    """A plausible misreading of :func:`hf_is_done`, for the guard below."""
    def is_done(pool_scores, top, n, *, num_beams, max_new_tokens, length_penalty, length_penalty_style,
                early_stopping):
        if len(pool_scores) < num_beams:
            return False
        if early_stopping is True:
            return True
        lp = length_penalty
        length = max_new_tokens if early_stopping == "never" and lp > 0 else n
        best = next(c[0] for c in top if c[2] != EOS_ID)
        worst = min(pool_scores)
        if misreading == "length n - 1":  # the prefix's length, before this step's token
            length = max_new_tokens if early_stopping == "never" and lp > 0 else max(n - 1, 1)
        elif misreading == "best pool score":  # the best finished hypothesis, not the worst
            worst = max(pool_scores)
        elif misreading == "best of all 2K candidates":  # <eos> ones included: transformers <= 4.49
            best = top[0][0]
        elif misreading == "never always at max_new_tokens":  # also when length_penalty <= 0
            length = max_new_tokens if early_stopping == "never" else n
        return worst >= reference_score(best, length, lp, length_penalty_style)
    return is_done


# each misreading, and the settings of the test above where it should change some output
MISREADINGS = {
    "length n - 1": [(False, 1.0, "hf"), (False, 2.0, "hf")],
    "best pool score": [(False, 1.0, "hf"), ("never", 2.0, "hf")],
    "best of all 2K candidates": [(False, 1.0, "hf"), (False, 2.0, "hf"), ("never", 1.0, "hf")],
    "never always at max_new_tokens": [("never", -1.0, "hf")],
}


def _tokens(results):
    return [[h.tokens for h in hyps] for hyps, _ in results]


@pytest.mark.parametrize("misreading", list(MISREADINGS))
def test_the_cases_tell_each_stopping_rule_from_a_misreading(misreading, cases):
    # If beam_search read a rule this way, the test above would catch it only if some
    # case's output depends on the difference: check that one does.
    for (_, model, src), (K, R, ngram), (es, lp, style) in itertools.product(cases, BEAMS, MISREADINGS[misreading]):
        kw = _search_kwargs(K, R, ngram, es, lp, style)
        right = reference_beam_search(model, src, **kw)
        wrong = reference_beam_search(model, src, is_done=misread_is_done(misreading), **kw)
        if _tokens(right) != _tokens(wrong):
            return
    pytest.fail(f"no case distinguishes the stopping rule from the misreading {misreading!r}")


def test_the_cases_finish_early_and_mix_finished_with_unfinished(cases):
    # Examples must stop before max_new_tokens (but not all of them), and some must
    # return unfinished hypotheses beside finished ones.
    stopped_early = ended_unfinished = examples = 0
    settings = [(False, 1.0, "hf"), ("never", 2.0, "hf")]
    for (_, model, src), (K, _, ngram), (es, lp, style) in itertools.product(cases, BEAMS[::2], settings):
        ref = reference_beam_search(model, src, **_search_kwargs(K, K, ngram, es, lp, style))
        examples += len(ref)
        stopped_early += sum(steps < T_MAX for _, steps in ref)
        ended_unfinished += sum(any(not h.finished for h in hyps) for hyps, _ in ref)
    assert examples // 4 <= stopped_early <= examples - examples // 4, (stopped_early, examples)
    assert ended_unfinished >= 5, ended_unfinished


# =====================================================================================
# transformers itself, when installed
# =====================================================================================
HF_SCORE_TOL = 2e-5  # transformers scores in float32 (log_softmax of float32 logits, float32 sums)


def _hf_bridge(model, src_ids):
    """The model as a transformers ``GenerationMixin`` model: its ``forward`` reruns minitf's
    decoder on the whole prefix of every row (no cache), row r reading source r // G.  The
    start token is the one-token prompt, so transformers' lengths count generated tokens,
    <eos> included, as minitf's do."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from transformers.modeling_outputs import CausalLMOutput

    class BridgeConfig(transformers.PretrainedConfig):
        model_type = "minitf_bridge"

    class Bridge(transformers.PreTrainedModel, transformers.GenerationMixin):
        config_class = BridgeConfig

        def __init__(self):
            super().__init__(BridgeConfig(vocab_size=model.config.tgt_vocab_size))
            self.anchor = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))  # the device and dtype

        def forward(self, input_ids, **kwargs):
            ids = input_ids.numpy()
            src = np.repeat(src_ids, ids.shape[0] // src_ids.shape[0], axis=0)  # (N, S)
            H_enc, _ = model.encode(src)
            return CausalLMOutput(logits=torch.from_numpy(model.decode(ids, H_enc, model.source_mask(src))[0]))

        def prepare_inputs_for_generation(self, input_ids, **kwargs):
            return {"input_ids": input_ids}

    return Bridge(), torch


HF_STOPPING = [s for s in STOPPING if s[2] == "hf" and s[1] >= 0]


@pytest.mark.parametrize("early_stopping, length_penalty, style", HF_STOPPING,
                         ids=[f"{es}-lp{lp:g}" for es, lp, _ in HF_STOPPING])
def test_beam_search_matches_transformers_itself(early_stopping, length_penalty, style, cases):
    for (name, model, src), (K, R, ngram) in itertools.product(cases, BEAMS[1::3]):
        bridge, torch = _hf_bridge(model, src)
        hf = bridge.generate(input_ids=torch.full((len(src), 1), START_ID), num_beams=K, num_return_sequences=R,
                             max_new_tokens=T_MAX, length_penalty=length_penalty, early_stopping=early_stopping,
                             no_repeat_ngram_size=ngram, eos_token_id=EOS_ID, pad_token_id=0, do_sample=False,
                             use_cache=False, output_scores=True, return_dict_in_generate=True)
        out = beam_search(model, src, **_search_kwargs(K, R, ngram, early_stopping, length_penalty, style))
        want = []
        for row in hf.sequences[:, 1:].tolist():  # after <eos> transformers fills with <eos>
            want.append(tuple(row[:row.index(EOS_ID) + 1]) if EOS_ID in row else tuple(row))
        got = [h.tokens for b in range(len(src)) for h in out.hypotheses(b)]
        where = f"{name}, K={K}, R={R}, no_repeat_ngram_size={ngram}"
        assert got == want, where
        np.testing.assert_allclose(out.scores, hf.sequences_scores.numpy(), rtol=0, atol=HF_SCORE_TOL, err_msg=where)
