"""Tests for decoding with the decoder-only model (minitf.models.DecoderOnly through
minitf.decoding), its padding, its two training layouts (minitf.training: decoder_only_batch,
causal_lm_batch) and its checkpoints.

The prompt is ``source <bos>``: start_decoding left-pads the sources and prefills them, each
step feeds one token.  The references: the whole sequence through ``model.forward`` (no
cache), and each row decoded alone, without any padding."""
from __future__ import annotations

import numpy as np
import pytest

from minitf.checkpoint import load_model, save_checkpoint
from minitf.config import ModelConfig
from minitf.data import IGNORE_INDEX, CharTokenizer, make_batch
from minitf.decoding import (beam_search, decode_step, greedy_search, init_cache, reorder_cache, sample,
                             start_decoding)
from minitf.gradcheck import randomize_norms_and_biases, rel_error
from minitf.layers.softmax import log_softmax
from minitf.models import DecoderOnly, EncoderDecoder, architecture_of
from minitf.models.decoder_only import left_pad, position_ids_from_mask
from minitf.data.tasks import get_task
from minitf.training import (TrainConfig, causal_lm_batch, causal_lm_loss, decoder_only_attention_mask,
                             decoder_only_batch, default_model_config, evaluate, forward_loss, shift_labels, train)

TOL = {"float64": 1e-12, "float32": 1e-5}  # cached vs uncached logits, absolute
PAD, BOS, EOS = 0, 1, 2
V, MAX_LEN = 11, 20


def make_model(dtype="float64", norm_first=True, seed=3, **kw) -> DecoderOnly:
    cfg = ModelConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=16, n_heads=4, d_ff=32, n_decoder_layers=2,
                      max_len=MAX_LEN, norm_first=norm_first, dtype=dtype, seed=seed, **kw)
    return randomize_norms_and_biases(DecoderOnly(cfg)).eval()


def padded_sources(rng, B=3, S=7):
    src = rng.integers(4, V, size=(B, S))  # no specials
    src[0, 5:] = PAD  # right padding, different per row
    src[B - 1, 3:] = PAD
    return src


def unpadded(src, b):
    """Row b of src without its padding, as a (1, S_b) batch."""
    return src[b:b + 1, src[b] != PAD]


def full_logits(model, src, decoder_input_ids):
    """The reference: prompt + decoder inputs through model.forward, padding masked. -> (N, T, V)
    logits of the decoder inputs' positions."""
    prompt, keep = left_pad(src, PAD)
    ids = np.concatenate([prompt, decoder_input_ids], axis=1)
    mask = np.concatenate([keep, np.ones(decoder_input_ids.shape, dtype=bool)], axis=1)
    return model.forward(ids, mask)[0][:, src.shape[1]:]


# =====================================================================================
# The cache: prefill, then one token per step, gives the uncached logits
# =====================================================================================
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("variant", [{}, {"positional": "learned", "tie_output": True}], ids=["plain", "learned-tied"])
def test_cached_logits_equal_uncached_at_every_step(dtype, norm_first, variant, rng):
    model = make_model(dtype, norm_first, **variant)
    src = padded_sources(rng)
    T = 8
    ids = np.concatenate([np.full((3, 1), BOS), rng.integers(3, V, size=(3, T - 1))], axis=1)  # <bos> y_1 ..
    ref = full_logits(model, src, ids)  # (3, T, V)
    cache = start_decoding(model, src, max_len=T)
    assert cache.length == src.shape[1] and cache.capacity == src.shape[1] + T
    for t in range(T):
        logits, cache = decode_step(model, ids[:, t:t + 1], cache)  # only the newest token
        err = np.abs(logits[:, 0] - ref[:, t]).max()
        assert err <= TOL[dtype], f"step {t}: cached and uncached logits differ by {err:.2e}"
    assert np.abs(ref).max() > 0.1  # not a vacuous comparison


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_each_padded_row_gets_the_logits_it_gets_alone(positional, rng):
    model = make_model(positional=positional)
    src = padded_sources(rng)
    ids = np.concatenate([np.full((3, 1), BOS), rng.integers(3, V, size=(3, 5))], axis=1)
    cache = start_decoding(model, src, max_len=6)
    batched, _ = decode_step(model, ids, cache)  # (3, 6, V): a chunk at once, over the padded prompt
    for b in range(3):
        alone, _ = model.forward(np.concatenate([unpadded(src, b), ids[b:b + 1]], axis=1))  # no padding, no mask
        n = int((src[b] != PAD).sum())
        assert np.abs(batched[b] - alone[0, n:]).max() <= 1e-12, f"row {b}"


def test_the_padding_would_matter_if_it_were_not_masked(rng):
    # guard for the test above: fed as ordinary tokens, the padding changes the logits
    model = make_model()
    src = padded_sources(rng)
    ids = np.full((1, 1), BOS)
    visible, _ = model.forward(np.concatenate([src[:1], ids], axis=1))
    alone, _ = model.forward(np.concatenate([unpadded(src, 0), ids], axis=1))
    assert np.abs(visible[0, -1] - alone[0, -1]).max() > 1e-3


def test_padding_anywhere_gives_the_same_logits_of_the_real_tokens(rng):
    """left, middle (decoder_only_batch's layout) or right: blocked as a key and skipped by the
    positions, padding changes nothing for the real tokens."""
    model = make_model(positional="learned")
    tokens = rng.integers(3, V, size=6)
    alone, _ = model.forward(tokens[None])
    layouts = {"left": [PAD, PAD] + list(tokens), "middle": list(tokens[:3]) + [PAD, PAD] + list(tokens[3:]),
               "right": list(tokens) + [PAD, PAD]}
    for name, row in layouts.items():
        row = np.array([row])
        keep = row != PAD
        logits, _ = model.forward(row, keep.astype(np.int64))  # 0/1 integers are accepted too
        assert np.abs(logits[keep] - alone[0]).max() <= 1e-12, name


def test_left_pad_and_positions():
    ids = np.array([[5, 6, 7, 0, 0], [8, 0, 9, 0, 0], [4, 5, 6, 7, 8]])
    out, keep = left_pad(ids, 0)
    np.testing.assert_array_equal(out, [[0, 0, 5, 6, 7], [0, 0, 0, 8, 9], [4, 5, 6, 7, 8]])
    np.testing.assert_array_equal(position_ids_from_mask(keep), [[0, 0, 0, 1, 2], [0, 0, 0, 0, 1], [0, 1, 2, 3, 4]])


def test_prefill_runs_once_per_example_and_its_rows_share_the_prompt(monkeypatch, rng):
    model = make_model()
    src = padded_sources(rng)
    calls = []
    original = model.decode_step

    def counting(ids, cache):
        calls.append(np.shape(ids))
        return original(ids, cache)

    monkeypatch.setattr(model, "decode_step", counting)
    G = 4
    cache = start_decoding(model, src, group_size=G, max_len=5)
    assert calls == [src.shape]  # one pass over the B prompts, not B * G
    assert cache.batch_rows == 3 * G and cache.group_size == G and cache.length == src.shape[1]
    for kv in cache.layers:
        assert kv.K_cross is None and kv.V_cross is None
        K = kv.K_self[:, :, :cache.length].reshape(3, G, *kv.K_self.shape[1:2], cache.length, -1)
        assert (K == K[:, :1]).all()  # every row of an example holds the same prompt
    assert cache.nbytes()["cross_attention"] == 0


def test_reordered_cache_equals_decoding_the_reordered_prefixes(rng):
    model = make_model()
    src = padded_sources(rng, B=2)
    G = 3
    ids = np.concatenate([np.full((6, 1), BOS), rng.integers(3, V, size=(6, 3))], axis=1)
    cache = start_decoding(model, src, group_size=G, max_len=6)
    _, cache = decode_step(model, ids, cache)
    beam_idx = np.array([2, 2, 0, 4, 3, 3])  # rows stay within their example
    cache = reorder_cache(cache, beam_idx)
    nxt = rng.integers(3, V, size=(6, 1))
    logits, _ = decode_step(model, nxt, cache)
    ref = full_logits(model, np.repeat(src, G, axis=0), np.concatenate([ids[beam_idx], nxt], axis=1))[:, -1]
    assert np.abs(logits[:, 0] - ref).max() <= 1e-12


# =====================================================================================
# The decoders: the same greedy_search, sample and beam_search as the encoder-decoder
# =====================================================================================
def test_greedy_cached_equals_uncached_and_picks_the_argmax(rng):
    model = make_model()
    src = padded_sources(rng)
    out = greedy_search(model, src, max_new_tokens=8, eos_id=None)
    ref = greedy_search(model, src, max_new_tokens=8, eos_id=None, use_cache=False)
    np.testing.assert_array_equal(out.sequences, ref.sequences)
    assert np.abs(out.log_probs - ref.log_probs).max() <= 1e-12
    # each token is the argmax of the uncached logits given the tokens before it
    dec_in = np.concatenate([np.full((3, 1), BOS), out.sequences[:, :-1]], axis=1)
    logits = full_logits(model, src, dec_in)
    np.testing.assert_array_equal(out.sequences, logits.argmax(-1))
    logp = log_softmax(logits)
    np.testing.assert_allclose(out.log_probs, np.take_along_axis(logp, out.sequences[..., None], -1).sum((1, 2)),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("decoder", ["greedy", "beam", "sample"])
def test_a_padded_batch_decodes_as_each_row_alone(decoder, rng):
    model = make_model(positional="learned")
    src = padded_sources(rng)

    def run(s):
        if decoder == "greedy":
            return greedy_search(model, s, max_new_tokens=6)
        if decoder == "beam":
            return beam_search(model, s, num_beams=3, num_return_sequences=2, max_new_tokens=6)
        return sample(model, s, rng=0, top_k=1, num_return_sequences=2, max_new_tokens=6)  # top-k 1: no randomness

    batched = run(src)
    R = batched.num_return
    for b in range(3):
        alone = run(unpadded(src, b))
        n = alone.sequences.shape[1]
        np.testing.assert_array_equal(batched.sequences[b * R:(b + 1) * R, :n], alone.sequences)
        assert (batched.sequences[b * R:(b + 1) * R, n:] == PAD).all()
        np.testing.assert_allclose(batched.log_probs[b * R:(b + 1) * R], alone.log_probs, rtol=0, atol=1e-12)


def test_beam_search_with_one_beam_is_greedy_and_scores_what_forward_scores(rng):
    model = make_model()
    src = padded_sources(rng)
    greedy = greedy_search(model, src, max_new_tokens=7)
    beam = beam_search(model, src, num_beams=1, max_new_tokens=7, length_penalty=0.0)
    np.testing.assert_array_equal(beam.sequences, greedy.sequences)
    wide = beam_search(model, src, num_beams=4, num_return_sequences=3, max_new_tokens=5)
    for b in range(3):
        for h in wide.hypotheses(b):
            tokens = np.array(h.tokens)
            dec_in = np.concatenate([[BOS], tokens[:-1]])[None]
            logp = log_softmax(full_logits(model, src[b:b + 1], dec_in)[0])
            assert abs(logp[np.arange(len(tokens)), tokens].sum() - h.log_prob) <= 1e-10


def test_sampling_is_reproducible_and_row_groups_share_a_prompt(rng):
    model = make_model()
    src = padded_sources(rng)
    a = sample(model, src, rng=5, num_return_sequences=4, max_new_tokens=6, temperature=1.5)
    b = sample(model, src, rng=5, num_return_sequences=4, max_new_tokens=6, temperature=1.5)
    np.testing.assert_array_equal(a.sequences, b.sequences)
    assert len({tuple(r) for r in a.sequences}) > 3  # the draws do differ


def test_decoding_uses_the_cache_exactly_when_the_model_is_causal(monkeypatch, rng):
    src = padded_sources(rng)
    causal = make_model()
    calls = []
    original = causal.forward
    monkeypatch.setattr(causal, "forward",  # counts the runs over a whole sequence (a cached step has a cache)
                        lambda *a, **k: (k.get("cache") is None and calls.append(1), original(*a, **k))[1])
    greedy_search(causal, src, max_new_tokens=4, eos_id=None)
    assert calls == []  # cached: model.forward never runs on the whole sequence
    greedy_search(causal, src, max_new_tokens=4, eos_id=None, use_cache=False)
    assert len(calls) == 4  # uncached: the whole sequence every step
    leaky = make_model(causal=False)
    with pytest.raises(ValueError, match="expected a causal decoder"):
        start_decoding(leaky, src)
    out = greedy_search(leaky, src, max_new_tokens=4, eos_id=None)  # decoded without the cache
    assert out.sequences.shape == (3, 4)


def test_output_room_and_bad_inputs(rng):
    model = make_model()
    src = padded_sources(rng)  # S = 7: MAX_LEN - 7 = 13 slots left
    assert greedy_search(model, src, eos_id=None).sequences.shape == (3, MAX_LEN - 7)
    with pytest.raises(ValueError, match=r"max_new_tokens: expected an integer in \[1, 13\].*max_len=20 minus the "
                                         r"prompt's S=7"):
        greedy_search(model, src, max_new_tokens=14)
    with pytest.raises(ValueError, match="src_ids: expected S < max_len=20"):
        beam_search(model, np.full((1, MAX_LEN), 5), num_beams=2)
    with pytest.raises(TypeError, match="init_cache reads an encoder output.*start_decoding"):
        init_cache(model, np.zeros((1, 3, 16)), np.zeros((1, 1, 1, 3)))
    enc_dec = EncoderDecoder(model.config).eval()
    with pytest.raises(ValueError, match="cache: expected one made for this DecoderOnly"):
        decode_step(model, np.full((3, 1), BOS), start_decoding(enc_dec, src, max_len=3))
    with pytest.raises(ValueError, match="cache: expected one made for this EncoderDecoder"):
        decode_step(enc_dec, np.full((3, 1), BOS), start_decoding(model, src, max_len=3))
    # the steps' attentions read the prompt's mask unchecked: decode_step checks it
    cache = start_decoding(model, src, max_len=3)
    with pytest.raises(ValueError, match="^cache.prompt_mask: expected values <= 0"):
        decode_step(model, np.full((3, 1), BOS), cache._replace(prompt_mask=-cache.prompt_mask))
    with pytest.raises(ValueError, match=r"^cache.prompt_mask: expected shape \(N, 1, 1, capacity\) = "
                                         r"\(3, 1, 1, 10\), got \(3, 1, 1, 4\)$"):
        decode_step(model, np.full((3, 1), BOS), cache._replace(prompt_mask=cache.prompt_mask[..., :4]))
    with pytest.raises(ValueError, match=r"^cache.prompt_pad: expected shape \(N,\) = \(3,\), got \(1,\)$"):
        decode_step(model, np.full((3, 1), BOS), cache._replace(prompt_pad=cache.prompt_pad[:1]))
    with pytest.raises(ValueError, match="attention_mask: expected 1 on real tokens and 0 on padding"):
        model.forward(src, np.full(src.shape, 2))
    with pytest.raises(ValueError, match="attention_mask"):
        model.forward(src, np.ones((3, 2), dtype=bool))


# =====================================================================================
# Training layouts: decoder_only_batch ("concat") and Hugging Face's causal-LM labels
# =====================================================================================
def small_batch():
    return make_batch([[5, 6, 7], [8]], [[9, 10, 2], [4, 2]], pad_id=PAD, start_id=BOS)


def test_causal_lm_batch_is_prompt_then_answer_with_unshifted_labels():
    b = causal_lm_batch(small_batch(), start_id=BOS, pad_id=PAD)
    np.testing.assert_array_equal(b.input_ids, [[5, 6, 7, 1, 9, 10, 2], [8, 1, 4, 2, 0, 0, 0]])
    np.testing.assert_array_equal(b.attention_mask, [[1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(b.labels, [[-100, -100, -100, -100, 9, 10, 2], [-100, -100, 4, 2, -100, -100, -100]])
    # the loss shifts them: position t is scored on labels[t + 1]; the last position on nothing
    np.testing.assert_array_equal(shift_labels(b.labels),
                                  [[-100, -100, -100, 9, 10, 2, -100], [-100, 4, 2, -100, -100, -100, -100]])
    np.testing.assert_array_equal(decoder_only_attention_mask(small_batch(), PAD),
                                  [[1, 1, 1, 1, 1, 1], [1, 0, 0, 1, 1, 1]])


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_both_layouts_give_the_same_loss_and_gradients(positional):
    """The same examples, the same context for every scored token: the two layouts differ in
    where the padding sits and who shifts the labels, not in what is learned."""
    model = make_model(positional=positional).train()
    batch = small_batch()
    results = {}
    for fmt in ("concat", "causal_lm"):
        loss, dlogits, cache, logits, labels = forward_loss(model, batch, decoder_only_format=fmt)
        model.zero_grad()
        model.backward(dlogits, cache)
        results[fmt] = loss, {k: g.copy() for k, g in model.gradients().items()}
        assert (labels != IGNORE_INDEX).sum() == batch.n_tokens
    (loss_a, grads_a), (loss_b, grads_b) = results["concat"], results["causal_lm"]
    assert abs(loss_a - loss_b) <= 1e-12 * abs(loss_a)
    for name in grads_a:
        if name.endswith(".b_k"):  # zero in theory (softmax shift invariance): rounding noise on both sides
            continue
        assert rel_error(grads_a[name], grads_b[name]) <= 1e-9, name
    # and the loss helper is the shift plus cross-entropy, with no gradient at the last position
    b = causal_lm_batch(batch, BOS, PAD)
    logits, _ = model.forward(b.input_ids, b.attention_mask)
    loss, dlogits = causal_lm_loss(logits, b.labels)
    assert loss == pytest.approx(loss_b, rel=1e-14) and not dlogits[:, -1].any()


def test_concat_layout_scores_each_example_as_if_alone():
    model = make_model(positional="learned")
    batch = small_batch()
    _, _, _, logits, labels = forward_loss(model, batch)
    for b, (s, y) in enumerate([([5, 6, 7], [9, 10, 2]), ([8], [4, 2])]):
        one = make_batch([s], [y], pad_id=PAD, start_id=BOS)
        _, _, _, logits_1, labels_1 = forward_loss(model, one)
        real = labels[b] != IGNORE_INDEX
        assert np.abs(logits[b][real] - logits_1[0][labels_1[0] != IGNORE_INDEX]).max() <= 1e-12
    # the old layout, unchanged: decoder_only_batch itself
    ids, lab = decoder_only_batch(batch, BOS, PAD)
    np.testing.assert_array_equal(ids, [[5, 6, 7, 1, 9, 10], [8, 0, 0, 1, 4, 2]])


def test_a_tiny_run_learns_reverse_and_evaluate_decodes_it():
    # (the "causal_lm" layout trains the same model: test_both_layouts_give_the_same_loss_and_gradients)
    task = get_task("reverse", min_len=2, max_len=4, n_symbols=4)
    model = DecoderOnly(default_model_config(task, d_model=32, n_heads=2, d_ff=64, n_decoder_layers=2))
    cfg = TrainConfig(steps=200, batch_size=32, lr=5e-3, warmup=20, eval_every=0, eval_size=64, progress=False)
    hist = train(model, task, cfg)
    assert np.mean(hist.loss[-10:]) < 0.2 * np.mean(hist.loss[:5])
    final = hist.evals[-1]
    # untrained: token accuracy 0.004, exact match 0 (it repeats one token); chance is 1/4 per symbol
    assert final["free_running_token_accuracy"] > 0.5 and final["free_running_exact_match"] > 0.05


def test_evaluate_generates_within_the_room_the_prompt_leaves():
    task = get_task("reverse", min_len=2, max_len=4, n_symbols=4)
    model = DecoderOnly(default_model_config(task))  # max_len = 4 + 5 + 1 = 10
    batch = task.batch(task.dataset(32, seed=1))
    S, T = batch.input_ids.shape[1], batch.labels.shape[1]
    assert (S, T, model.config.max_len) == (4, 5, 10)  # room for 6 tokens, not the target length + 2 = 7
    out = evaluate(model, batch)
    assert out["predictions"].shape[1] <= 6 and 0 <= out["free_running_exact_match"] <= 1


# =====================================================================================
# Checkpoints: minitf generate can rebuild a decoder-only model
# =====================================================================================
def test_load_model_rebuilds_a_decoder_only_model(tmp_path, rng):
    tok = CharTokenizer("abcdefg")
    cfg = ModelConfig(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, d_model=16, n_heads=2, d_ff=32,
                      n_decoder_layers=1, max_len=12, seed=5)
    model = DecoderOnly(cfg).eval()
    assert architecture_of(model) == "decoder-only"
    save_checkpoint(tmp_path / "d.npz", config={"model": cfg.to_dict(), "architecture": architecture_of(model)},
                    params=model.parameters(), extra={"tokenizer": tok.to_dict()})
    loaded, loaded_tok = load_model(tmp_path / "d.npz")
    assert isinstance(loaded, DecoderOnly) and loaded_tok == tok and not loaded.training
    src = np.array([tok.encode("abcd"), tok.encode("ge") + [0, 0]])
    np.testing.assert_array_equal(greedy_search(loaded, src, max_new_tokens=5).sequences,
                                  greedy_search(model, src, max_new_tokens=5).sequences)
    save_checkpoint(tmp_path / "e.npz", config={"model": cfg.to_dict(), "architecture": "encoder-only"},
                    params=model.parameters(), extra={"tokenizer": tok.to_dict()})
    with pytest.raises(ValueError, match=r"config\['architecture'\].*got 'encoder-only'"):
        load_model(tmp_path / "e.npz")
