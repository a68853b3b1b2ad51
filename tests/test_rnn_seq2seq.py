"""The RNN encoder-decoder: its hand-written backward against float64 finite differences (each
attention type, each place the context goes, each conditioning, each cell), what backward hands
back for inspection, scheduled sampling, free-running decoding through minitf.decoding,
minitf's training loop, checkpoints, and the errors bad input gets.

Tolerance as in tests/test_model_gradcheck.py: relative error 1e-6 for every sampled entry
above 1e-6 in size, 1e-12 absolute below (finite differences cannot resolve six digits there).
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.checkpoint import copy_params_into, load_checkpoint, save_checkpoint
from minitf.decoding import beam_search, decode_step, greedy_search, reorder_cache, sample, start_decoding
from minitf.gradcheck import numerical_gradient, sample_indices
from minitf.layers.softmax import log_softmax
from minitf.loss import cross_entropy
from minitf.models import RNNSeq2Seq
from minitf.models.rnn_seq2seq import EncoderMemory, default_rnn_config
from minitf.rnn import (ConstantProbability, ExponentialDecay, InverseSigmoidDecay, LinearDecay, LSTMState,
                        RNNConfig, ScheduledSampling, get_teacher_forcing_schedule)
from minitf.data.tasks import get_task
from minitf.training import TrainConfig, evaluate, train

REL_TOL = 1e-6
FLOOR = 1e-6
MAX_ENTRIES = 6
PAD, BOS, EOS = 0, 1, 2
SRC = np.array([[3, 4, 5, 6, 7], [8, 9, 0, 0, 0], [10, 3, 5, 4, 0]])
DEC_IN = np.array([[1, 3, 4, 5], [1, 6, 0, 0], [1, 7, 8, 9]])
LABELS = np.array([[3, 4, 5, 2], [6, 2, -100, -100], [7, 8, 9, 2]])


def config(**overrides) -> RNNConfig:
    base = dict(src_vocab_size=11, tgt_vocab_size=13, embedding_size=4, hidden_size=6, max_len=8,
                dtype="float64", seed=3)
    base.update(overrides)
    return RNNConfig(**base)


def floored_rel_error(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(FLOOR, np.abs(a) + np.abs(b)), initial=0.0))


def loss_and_grads(model, **forward_kwargs):
    logits, cache = model.forward(SRC, DEC_IN, **forward_kwargs)
    loss, dlogits = cross_entropy(logits, LABELS)
    model.zero_grad()
    extra = model.backward(dlogits, cache)
    return loss, {k: g.copy() for k, g in model.gradients().items()}, extra, cache


def check_every_tensor(f, model, analytic, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    report, n_resolved, n_total = {}, 0, 0
    for name, p in model.parameters().items():
        idx = sample_indices(p.shape, MAX_ENTRIES, rng)
        num = numerical_gradient(f, p, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        a, n = analytic[name][picked], num[picked]
        report[name] = floored_rel_error(a, n)
        n_resolved += int(np.sum(np.abs(a) + np.abs(n) >= FLOOR))
        n_total += len(idx)
    worst = max(report, key=report.get)
    assert report[worst] <= REL_TOL, (f"worst: {worst} {report[worst]:.2e}; " + ", ".join(
        f"{k}={v:.1e}" for k, v in sorted(report.items(), key=lambda kv: -kv[1])[:6]))
    assert n_resolved >= 0.8 * n_total, f"only {n_resolved} of {n_total} sampled entries above {FLOOR}"
    return report


# ---- the whole model against finite differences ---------------------------------------------------------
MODEL_CASES = {
    "lstm_init_identity_2dec": dict(cell="lstm", conditioning="init", bridge="identity", n_decoder_layers=2),
    "gru_concat_bidirectional": dict(cell="gru", conditioning="concat", bidirectional=True, encoder_hidden_size=3),
    "rnn_both_bridge_reversed": dict(cell="rnn", conditioning="both", bidirectional=True, reverse_source=True,
                                     n_encoder_layers=2),
    "lstm_additive_input": dict(cell="lstm", attention="additive", attention_feed="input", bidirectional=True,
                                attention_size=3),
    "gru_additive_output_no_conditioning": dict(cell="gru", attention="additive", attention_feed="output",
                                                conditioning="none"),
    "lstm_dot_both_reversed": dict(cell="lstm", attention="dot", attention_feed="both", conditioning="both",
                                   reverse_source=True, n_decoder_layers=2),
    "rnn_general_output_concat": dict(cell="rnn", attention="general", attention_feed="output",
                                      conditioning="concat", bidirectional=True),
    "lstm_general_input_shared_2enc": dict(cell="lstm", attention="general", attention_feed="input",
                                           share_embeddings=True, src_vocab_size=13, n_encoder_layers=2),
    "gru_dot_input_bidirectional_half_width": dict(cell="gru", attention="dot", attention_feed="input",
                                                   bidirectional=True, encoder_hidden_size=3),
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_model_gradients_match_finite_differences(case):
    model = RNNSeq2Seq(config(**MODEL_CASES[case]))

    def f() -> float:
        logits, _ = model.forward(SRC, DEC_IN)
        return cross_entropy(logits, LABELS)[0]

    _, analytic, _, _ = loss_and_grads(model)
    report = check_every_tensor(f, model, analytic)
    assert set(report) == set(model.parameters())


@pytest.mark.parametrize("case", ["lstm_additive_input", "lstm_dot_both_reversed", "rnn_general_output_concat"])
def test_dH_enc_and_dconditioning_match_finite_differences(case):
    """What backward hands back: dL/dH_enc (through the keys and the values) and dL/d(the encoder's
    final state) -- checked by perturbing a memory fed straight to the decoder."""
    model = RNNSeq2Seq(config(**MODEL_CASES[case]))
    _, _, grads, cache = loss_and_grads(model)
    memory, _ = model.encode(SRC)
    states = memory.states.copy()
    lstm = isinstance(memory.conditioning, LSTMState)
    cond = tuple(a.copy() for a in (memory.conditioning if lstm else (memory.conditioning,)))  # (h, c) or (h,)

    def f() -> float:
        keys, _ = model.attention.project_keys(states)
        c = LSTMState(*cond) if lstm else cond[0]
        logits, _ = model.decode(DEC_IN, EncoderMemory(states, memory.mask, keys, c))
        return cross_entropy(logits, LABELS)[0]

    assert floored_rel_error(grads.dH_enc, numerical_gradient(f, states)) <= REL_TOL
    pad = SRC == PAD
    assert np.all(grads.dH_enc[pad] == 0.0) and np.abs(grads.dH_enc[~pad]).min() > 0
    dcond = grads.dconditioning if lstm else (grads.dconditioning,)
    for d, c in zip(dcond, cond):
        assert floored_rel_error(d, numerical_gradient(f, c)) <= REL_TOL


def test_source_embedding_gradients_are_the_positions_summed():
    """dsrc_embeddings (B, S, E), source order, scattered into the table's rows is the table's gradient."""
    model = RNNSeq2Seq(config(cell="lstm", reverse_source=True, bidirectional=True, attention="additive"))
    _, analytic, grads, _ = loss_and_grads(model)
    table = np.zeros_like(analytic["src_embed.W_E"])
    real = SRC != PAD
    np.add.at(table, SRC[real], grads.dsrc_embeddings[real])
    np.testing.assert_allclose(analytic["src_embed.W_E"], table, rtol=1e-12, atol=1e-15)
    assert np.all(grads.dsrc_embeddings[~real] == 0.0)


# ---- padding and reversal --------------------------------------------------------------------------------
def test_a_row_gives_the_same_logits_alone_and_in_a_padded_batch():
    model = RNNSeq2Seq(config(cell="gru", bidirectional=True, attention="additive", attention_feed="both",
                              reverse_source=True))
    logits, cache = model.forward(SRC, DEC_IN)
    alone, _ = model.forward(SRC[1:2, :2], DEC_IN[1:2])
    np.testing.assert_allclose(logits[1], alone[0], rtol=1e-12, atol=1e-14)
    weights = RNNSeq2Seq.attention_weights(cache)  # (B, T, S)
    assert weights.shape == (3, 4, 5) and np.all(weights[SRC[:, None, :].repeat(4, 1) == PAD] == 0.0)


def test_reverse_source_reads_each_rows_real_tokens_backwards():
    """H_enc (source order) of a model reading reversed = the same weights reading the reversed
    source forwards, put back in source order; padding stays at the end."""
    reversed_model = RNNSeq2Seq(config(cell="lstm", reverse_source=True, attention="dot"))
    plain = RNNSeq2Seq(config(cell="lstm", reverse_source=False, attention="dot"))
    by_hand = np.array([[7, 6, 5, 4, 3], [9, 8, 0, 0, 0], [4, 5, 3, 10, 0]])
    memory, _ = reversed_model.encode(SRC)
    memory_plain, _ = plain.encode(by_hand)
    for b, n in enumerate((5, 2, 4)):
        np.testing.assert_array_equal(memory.states[b, :n], memory_plain.states[b, :n][::-1])
    np.testing.assert_array_equal(memory.conditioning.h, memory_plain.conditioning.h)


# ---- scheduled sampling ----------------------------------------------------------------------------------
def test_teacher_forcing_probability_one_is_teacher_forcing_exactly():
    model = RNNSeq2Seq(config(attention="additive", attention_feed="both"))
    loss, grads, _, _ = loss_and_grads(model)
    for kwargs in (dict(teacher_forcing=1.0, rng=0), dict(teacher_forcing=1.0, choice="sample", rng=1)):
        loss_1, grads_1, _, cache = loss_and_grads(model, **kwargs)
        assert loss_1 == loss and cache.decoder.gold.all()
        for k in grads:
            np.testing.assert_array_equal(grads_1[k], grads[k], err_msg=k)
    model.scheduled_sampling = ScheduledSampling(ConstantProbability(1.0), rng=5)  # the policy, in training mode
    loss_p, grads_p, _, _ = loss_and_grads(model)
    assert loss_p == loss and model.scheduled_sampling.step == 1
    for k in grads:
        np.testing.assert_array_equal(grads_p[k], grads[k], err_msg=k)


def test_scheduled_sampling_feeds_gold_or_the_previous_argmax():
    model = RNNSeq2Seq(config(cell="gru", attention="general"))
    logits, cache = model.forward(SRC, DEC_IN, teacher_forcing=0.5, rng=0)
    fed, gold = cache.decoder.fed, cache.decoder.gold
    own = logits[:, :-1].argmax(-1)  # (B, T-1): what step t-1 predicted
    np.testing.assert_array_equal(fed[:, 1:], np.where(gold[:, 1:], DEC_IN[:, 1:], own))
    assert (fed[:, 0] == BOS).all() and gold[:, 0].all() and 0 < gold[:, 1:].mean() < 1
    logits0, cache0 = model.forward(SRC, DEC_IN, teacher_forcing=0.0, rng=0)
    np.testing.assert_array_equal(cache0.decoder.fed[:, 1:], logits0[:, :-1].argmax(-1))  # eps = 0: all its own


@pytest.mark.parametrize("choice", ["argmax", "sample"])
def test_no_gradient_flows_through_the_sampled_choice(choice):
    """With eps < 1 the gradient is exactly that of a teacher-forced run fed the tokens that were
    chosen: the choice is a constant to the backward.  And it is the finite-difference gradient of
    the loss with the coins (and draws) held fixed."""
    model = RNNSeq2Seq(config(cell="lstm", attention="additive", attention_feed="input"))
    loss, grads, _, cache = loss_and_grads(model, teacher_forcing=0.3, choice=choice, rng=7)
    fed = cache.decoder.fed
    assert (fed != DEC_IN)[LABELS != -100].any(), "the model's own tokens should differ from the gold somewhere"

    logits_tf, cache_tf = model.forward(SRC, fed)  # teacher forcing on the chosen tokens
    loss_tf, dlogits = cross_entropy(logits_tf, LABELS)
    model.zero_grad()
    model.backward(dlogits, cache_tf)
    assert loss_tf == loss
    for k, g in model.gradients().items():
        np.testing.assert_allclose(grads[k], g, rtol=1e-13, atol=1e-16, err_msg=k)

    def f() -> float:
        logits, c = model.forward(SRC, DEC_IN, teacher_forcing=0.3, choice=choice, rng=7)
        assert (c.decoder.fed == fed).all()  # the same choices at every perturbation
        return cross_entropy(logits, LABELS)[0]

    check_every_tensor(f, model, grads)


def test_the_policy_steps_in_training_mode_only():
    policy = ScheduledSampling(LinearDecay(c=0.25), rng=0)
    model = RNNSeq2Seq(config(), scheduled_sampling=policy)
    eps = []
    for _ in range(3):
        _, cache = model.forward(SRC, DEC_IN)
        eps.append(policy.schedule(policy.step))
    assert eps == [1.0, 0.75, 0.5] and policy.step == 3
    with model.evaluating():
        _, cache = model.forward(SRC, DEC_IN)
    assert policy.step == 3 and cache.decoder.gold.all()  # evaluation is teacher-forced


def test_teacher_forcing_schedules():
    lin, exp, inv = LinearDecay(c=0.1, k=0.9, eps_min=0.2), ExponentialDecay(k=0.5), InverseSigmoidDecay(k=10)
    assert [lin(s) for s in (1, 2, 8, 100)] == pytest.approx([0.9, 0.8, 0.2, 0.2])
    assert [exp(s) for s in (1, 2, 4)] == [1.0, 0.5, 0.125]
    assert inv(1) == pytest.approx(10 / 11) and inv(25) == pytest.approx(10 / (10 + np.exp(2.4)))
    assert inv(10 ** 6) == 0.0  # no overflow
    for s in (lin, exp, inv, ConstantProbability(0.3)):
        assert get_teacher_forcing_schedule(**s.to_dict()) == s
    with pytest.raises(ValueError, match=r"^step: expected a positive integer, got 0"):
        exp(0)
    with pytest.raises(ValueError, match=r"^k: expected a finite number in \(0, 1\), got 1.5"):
        ExponentialDecay(k=1.5)
    with pytest.raises(ValueError, match=r"^choice: expected one of 'argmax', 'sample', got 'beam'"):
        ScheduledSampling(0.5, choice="beam")


# ---- free-running decoding through minitf.decoding -------------------------------------------------------
def decoding_model(**overrides) -> RNNSeq2Seq:
    base = dict(cell="lstm", attention="additive", attention_feed="both", bidirectional=True,
                reverse_source=True, n_decoder_layers=2, tgt_vocab_size=7, hidden_size=8, embedding_size=6,
                seed=5)
    base.update(overrides)
    return RNNSeq2Seq(config(**base)).eval()


def teacher_forced_log_prob(model, src_row, tokens) -> float:
    """Sum of the model's log-probs of ``tokens`` (generated, no start token) given the source."""
    dec_in = np.array([[BOS] + list(tokens[:-1])])
    logits, _ = model.forward(src_row[None], dec_in)
    logp = log_softmax(logits[0].astype(np.float64))
    return float(logp[np.arange(len(tokens)), tokens].sum())


def test_greedy_search_is_the_step_function_run_free():
    """greedy_search = the training step function fed its own argmax; decode_step = that step."""
    model = decoding_model()
    out = greedy_search(model, SRC, max_new_tokens=6, eos_id=None)
    memory, _ = model.encode(SRC)
    state, _ = model.initial_state(memory)
    decoding = start_decoding(model, SRC)
    token = np.full(3, BOS)
    for t in range(6):
        logits, state, _ = model.step_forward(token, state, memory)
        step_logits, decoding = decode_step(model, token[:, None], decoding)
        np.testing.assert_array_equal(step_logits[:, 0], logits)
        token = logits.argmax(-1)
        np.testing.assert_array_equal(out.sequences[:, t], token)
    for b in range(3):
        assert out.log_probs[b] == pytest.approx(teacher_forced_log_prob(model, SRC[b], out.sequences[b]), rel=1e-10)


def test_beam_search_reorders_the_recurrent_state():
    """Every returned hypothesis's score is the model's own teacher-forced log-prob of it: the
    state followed its beam.  One beam is greedy search."""
    model = decoding_model()
    beams = beam_search(model, SRC, num_beams=3, num_return_sequences=3, max_new_tokens=6, length_penalty=0.0)
    for b in range(3):
        hyps = beams.hypotheses(b)
        assert len(hyps) == 3 and len({h.tokens for h in hyps}) == 3
        for h in hyps:
            assert h.log_prob == pytest.approx(teacher_forced_log_prob(model, SRC[b], list(h.tokens)), rel=1e-10)
    greedy = greedy_search(model, SRC, max_new_tokens=6)
    one = beam_search(model, SRC, num_beams=1, max_new_tokens=6)
    np.testing.assert_array_equal(one.sequences, greedy.sequences)


def test_sampling_is_seeded_and_decoding_functions_reach_the_model():
    model = decoding_model(attention="dot", encoder_hidden_size=4, attention_feed="input")
    a = sample(model, SRC, rng=3, num_return_sequences=2, max_new_tokens=5)
    b = sample(model, SRC, rng=3, num_return_sequences=2, max_new_tokens=5)
    np.testing.assert_array_equal(a.sequences, b.sequences)
    state = start_decoding(model, SRC, group_size=2)
    assert state.batch_rows == 6 and state.group_size == 2
    logits, state = decode_step(model, np.full((6, 2), BOS), state)  # two tokens in one call
    assert logits.shape == (6, 2, 7) and state.length == 2
    moved = reorder_cache(state, np.array([1, 1, 2, 3, 5, 4]))
    np.testing.assert_array_equal(moved.state.layers[0].h[0], state.state.layers[0].h[1])
    with pytest.raises(ValueError, match=r"beam_idx: expected each row to continue a row of its own example"):
        reorder_cache(state, np.array([2, 1, 2, 3, 5, 4]))
    with pytest.raises(ValueError, match=r"^use_cache: expected None or True for an RNNSeq2Seq"):
        greedy_search(model, SRC, use_cache=False)


# ---- training with minitf's loop, checkpoints ---------------------------------------------------------------
def test_trains_with_minitf_training_loop_and_evaluates_free_running():
    task = get_task("copy", min_len=2, max_len=4, n_symbols=4)
    policy = ScheduledSampling(InverseSigmoidDecay(k=5), rng=0)
    model = RNNSeq2Seq(default_rnn_config(task, hidden_size=16, embedding_size=8, attention="additive"),
                       scheduled_sampling=policy)
    hist = train(model, task, TrainConfig(steps=40, batch_size=16, eval_every=0, eval_size=16, lr=1e-2,
                                          warmup=5, progress=False))
    assert np.mean(hist.loss[-5:]) < np.mean(hist.loss[:5])
    assert policy.step == 40  # one schedule step per update; evaluation is teacher-forced
    assert {"free_running_exact_match", "free_running_token_accuracy"} <= set(hist.evals[-1])
    metrics = evaluate(model, task.batch(task.dataset(4, seed=1)))
    assert metrics["predictions"].shape[0] == 4


def test_checkpoint_round_trip(tmp_path):
    model = RNNSeq2Seq(config(cell="gru", attention="general", bidirectional=True))
    path = tmp_path / "rnn.npz"
    save_checkpoint(path, config={"model": model.config.to_dict()}, params=model.parameters())
    ckpt = load_checkpoint(path)
    again = RNNSeq2Seq(RNNConfig.from_dict(ckpt.config["model"]).replace(seed=99))
    copy_params_into(again.parameters(), ckpt.params)
    np.testing.assert_array_equal(again.forward(SRC, DEC_IN)[0], model.forward(SRC, DEC_IN)[0])


# ---- bad input ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("overrides,error,message", [
    (dict(cell="transformer"), ValueError, r"^cell: expected one of 'rnn', 'lstm', 'gru', got 'transformer'"),
    (dict(bridge="identity", bidirectional=True), ValueError,
     r"^bridge: 'identity' hands the encoder's final state \(2 direction\(s\) x 6 = 12 wide\) to the decoder"
     r".*hidden_size=6"),
    (dict(bridge="identity", encoder_hidden_size=4), ValueError, r"^bridge: 'identity' .*4 = 4 wide"),
    (dict(attention="dot", bidirectional=True), ValueError,
     r"^attention: 'dot' scores s \. h_j, so the encoder states \(12 wide\)"),
    (dict(conditioning="none"), ValueError,
     r"^conditioning: expected 'init', 'concat' or 'both' when attention='none'"),
    (dict(attention="luong"), ValueError, r"^attention: expected one of 'none', 'additive', 'dot', 'general'"),
    (dict(attention_feed="sideways"), ValueError, r"^attention_feed: expected one of 'output', 'input', 'both'"),
])
def test_bad_configs_are_refused(overrides, error, message):
    with pytest.raises(error, match=message):
        config(**overrides)


def test_bad_inputs_are_refused():
    model = RNNSeq2Seq(config(attention="additive"))
    with pytest.raises(ValueError, match=r"^src_ids: expected at least one real token per row, got row 1 all padding"):
        model.forward(np.array([[3, 4], [0, 0]]), DEC_IN[:2])
    with pytest.raises(ValueError, match=r"^src_ids: expected right padding \(pad_id=0 only after a row's real "
                                         r"tokens\), got row 0 = \[0, 3, 4\]"):
        model.forward(np.array([[0, 3, 4]]), DEC_IN[:1])
    with pytest.raises(ValueError, match=r"^src_ids: expected at most max_len=8 positions, got 9"):
        model.forward(np.full((1, 9), 3), DEC_IN[:1])
    with pytest.raises(ValueError, match=r"^decoder_input_ids: expected batch size B=3 \(as src_ids\), got 2"):
        model.forward(SRC, DEC_IN[:2])
    memory, _ = model.encode(SRC)
    with pytest.raises(ValueError, match=r"^memory: attention='additive' needs the encoder states"):
        model.decode(DEC_IN, memory._replace(states=None))
    with pytest.raises(ValueError, match=r"^teacher_forcing: expected a finite number in \[0, 1\], got 1.5"):
        model.forward(SRC, DEC_IN, teacher_forcing=1.5)
    with pytest.raises(TypeError, match=r"^rng: expected a np.random.Generator or a non-negative integer seed"):
        model.forward(SRC, DEC_IN, teacher_forcing=0.5)
    with pytest.raises(TypeError, match=r"^config: expected an RNNConfig, got dict"):
        RNNSeq2Seq({"cell": "lstm"})
