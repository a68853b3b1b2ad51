"""Tests for the encoder-only model (minitf.models.EncoderOnly) and BERT's masking
(minitf.models.encoder_only.mask_tokens): the masking's numbers, the whole model's backward
against float64 finite differences and (where torch is installed) against torch autograd on
a reference built from torch primitives, bidirectional attention with padding masked, and
training with the same loop as the other models."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import IGNORE_INDEX, make_batch
from minitf.gradcheck import numerical_gradient, randomize_norms_and_biases, rel_error, sample_indices
from minitf.loss import cross_entropy
from minitf.masks import MASK_VALUE
from minitf.models import EncoderOnly, architecture_of
from minitf.data.noise import mask_tokens
from minitf.data.tasks import get_task
from minitf.training import TrainConfig, default_model_config, forward_loss, train

PAD, BOS, EOS = 0, 1, 2
V = 13
MASK = V - 1  # the model's vocabulary has one id more than the data's: <mask>
SPECIALS = (PAD, BOS, EOS)


def config(**overrides) -> ModelConfig:
    base = dict(src_vocab_size=V, tgt_vocab_size=V, d_model=8, n_heads=2, d_ff=12, n_encoder_layers=2,
                n_decoder_layers=0, max_len=8, activation="gelu", dtype="float64", pad_id=PAD, seed=7)
    base.update(overrides)
    return ModelConfig(**base)


def masked_batch(seed: int = 1):
    """(input_ids (2, 6) masked, labels (2, 6)): row 1 right-padded; a few positions scored in each row."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(3, MASK, size=(2, 6))
    ids[1, 4:] = PAD
    masked, labels = mask_tokens(ids, rng, mask_id=MASK, vocab_size=V, special_ids=SPECIALS, mask_prob=0.4)
    return masked, labels


# =====================================================================================
# BERT's masking
# =====================================================================================
def test_mask_tokens_chooses_15_percent_and_replaces_80_10_10():
    rng = np.random.default_rng(0)
    vocab = 1000  # a large vocabulary: a random replacement hardly ever draws the original token
    B, S = 400, 100
    ids = rng.integers(3, vocab - 1, size=(B, S))
    lengths = rng.integers(60, S + 1, size=B)
    ids[np.arange(S)[None, :] >= lengths[:, None]] = PAD  # right padding
    before = ids.copy()
    masked, labels = mask_tokens(ids, rng, mask_id=vocab - 1, vocab_size=vocab, special_ids=SPECIALS)
    np.testing.assert_array_equal(ids, before)  # the input is not modified
    chosen = labels != IGNORE_INDEX
    # per row: round(15 % of its real tokens), never padding
    np.testing.assert_array_equal(chosen.sum(axis=1), np.maximum(1, np.rint(0.15 * lengths)))
    assert not chosen[ids == PAD].any()
    np.testing.assert_array_equal(labels[chosen], ids[chosen])  # the label is the original token
    np.testing.assert_array_equal(masked[~chosen], ids[~chosen])  # nothing else changes
    n = chosen.sum()
    to_mask = (masked == vocab - 1) & chosen
    changed = (masked != ids) & chosen & ~to_mask
    kept = (masked == ids) & chosen
    assert abs(to_mask.sum() / n - 0.8) < 0.02
    assert abs(changed.sum() / n - 0.1) < 0.015 and abs(kept.sum() / n - 0.1) < 0.015
    assert not np.isin(masked[changed], (*SPECIALS, vocab - 1)).any()  # random replacements are ordinary tokens
    # the chosen positions are spread over the row (uniform), not bunched at its start
    pos = np.nonzero(chosen)[1] / lengths[np.nonzero(chosen)[0]]
    assert abs(pos.mean() - 0.5) < 0.02


def test_mask_tokens_is_reproducible_and_handles_short_rows():
    ids = np.array([[5, 6, 7, 0, 0, 0], [8, 9, 10, 11, 4, 5], [0, 0, 0, 0, 0, 0]])
    a = mask_tokens(ids, 3, mask_id=MASK, vocab_size=V, special_ids=SPECIALS)
    b = mask_tokens(ids, 3, mask_id=MASK, vocab_size=V, special_ids=SPECIALS)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal((a[1] != IGNORE_INDEX).sum(axis=1), [1, 1, 0])  # at least one; none in an empty row
    with pytest.raises(ValueError, match="replace_with_random"):
        mask_tokens(ids, 0, mask_id=MASK, vocab_size=V, replace_with_mask=0.8, replace_with_random=0.3)
    with pytest.raises(ValueError, match="mask_id"):
        mask_tokens(ids, 0, mask_id=V, vocab_size=V)


# =====================================================================================
# The whole model's backward against finite differences (float64)
# =====================================================================================
REL_TOL, FLOOR, MAX_ENTRIES = 1e-6, 1e-6, 12
CASES = {
    "pre_ln_untied_sinusoidal": dict(),
    "post_ln_tied_learned": dict(norm_first=False, tie_output=True, positional="learned"),
    "pre_ln_tied_learned_gelu_tanh": dict(tie_output=True, positional="learned", activation="gelu_tanh"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_finite_differences(case):
    """Every parameter tensor (sampled entries), relative error <= 1e-6 where the gradient is
    above 1e-6, else 1e-12 absolute (as tests/test_model_gradcheck.py explains).  The key
    biases b_k have an exactly zero gradient (softmax shift invariance)."""
    model = randomize_norms_and_biases(EncoderOnly(config(**CASES[case]), mask_id=MASK))
    ids, labels = masked_batch()

    def f() -> float:
        return cross_entropy(model.forward(ids)[0], labels)[0]

    logits, cache = model.forward(ids)
    _, dlogits = cross_entropy(logits, labels)
    model.zero_grad()
    dH = model.backward(dlogits, cache)
    assert dH.shape == (2, 6, 8)
    rng = np.random.default_rng(0)
    worst, n_resolved, n_total = {}, 0, 0
    for name, p in model.parameters().items():
        g = model.gradients()[name]
        if name.endswith(".b_k"):
            assert np.abs(g).max() < 1e-12, name
            continue
        idx = sample_indices(p.shape, MAX_ENTRIES, rng)
        num = numerical_gradient(f, p, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        a, n = g[picked], num[picked]
        worst[name] = float(np.max(np.abs(a - n) / np.maximum(FLOOR, np.abs(a) + np.abs(n))))
        n_resolved += int(np.sum(np.abs(a) + np.abs(n) >= FLOOR))
        n_total += len(idx)
    bad = {k: v for k, v in worst.items() if v > REL_TOL}
    assert not bad, f"finite differences disagree: {bad}"
    assert n_resolved >= 0.8 * n_total  # a relative check almost everywhere, not one between tiny numbers
    assert len(worst) + 2 == len(model.parameters())  # every tensor but the two b_k


# =====================================================================================
# Parity with a torch reference built from torch primitives (autograd does the backward)
# =====================================================================================
def torch_reference(model: EncoderOnly, ids: np.ndarray, labels: np.ndarray, torch):
    """The model's forward written with torch primitives, on torch copies of its parameters.
    Returns (loss, logits, {name: tensor with .grad after loss.backward()})."""
    F = torch.nn.functional
    c = model.config
    D, H = c.d_model, c.n_heads
    Dh = D // H
    t = {name: torch.tensor(p, dtype=torch.float64, requires_grad=True) for name, p in model.parameters().items()}
    ids_t = torch.tensor(ids)
    B, S = ids.shape
    act = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}[c.activation]

    def ln(x, name):
        return F.layer_norm(x, (D,), t[f"{name}.gamma"], t[f"{name}.beta"], c.layer_norm_eps)

    def linear(x, name):
        return x @ t[f"{name}.W"] + t[f"{name}.b"]

    key_mask = torch.where(ids_t == c.pad_id, MASK_VALUE, 0.0).to(torch.float64)[:, None, None, :]  # (B, 1, 1, S)

    def attention(x, name):
        def heads(y):  # (B, S, D) -> (B, H, S, Dh)
            return y.reshape(B, S, H, Dh).transpose(1, 2)
        q = heads(x @ t[f"{name}.W_q"] + t[f"{name}.b_q"])
        k = heads(x @ t[f"{name}.W_k"] + t[f"{name}.b_k"])
        v = heads(x @ t[f"{name}.W_v"] + t[f"{name}.b_v"])
        A = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(Dh) + key_mask, dim=-1)  # (B, H, S, S)
        o = (A @ v).transpose(1, 2).reshape(B, S, D)
        return o @ t[f"{name}.W_o"] + t[f"{name}.b_o"]

    W_E = t["src_embed.W_E"]
    x = W_E[ids_t] * (math.sqrt(D) if c.scale_embeddings else 1.0)
    P = t["src_pos.W_pos"] if c.positional == "learned" else torch.tensor(model.src_pos.table, dtype=torch.float64)
    x = x + P[:S]
    for l in range(c.n_encoder_layers):
        p = f"encoder_layers.{l}"

        def ff(h):
            return linear(act(linear(h, f"{p}.ff.linear1")), f"{p}.ff.linear2")

        if c.norm_first:
            x = x + attention(ln(x, f"{p}.norm1"), f"{p}.self_attn")
            x = x + ff(ln(x, f"{p}.norm2"))
        else:
            x = ln(x + attention(x, f"{p}.self_attn"), f"{p}.norm1")
            x = ln(x + ff(x), f"{p}.norm2")
    Hs = ln(x, "encoder_norm")
    h = ln(act(linear(Hs, "mlm_transform")), "mlm_norm")
    W_U = W_E.T if c.tie_output else t["W_U"]
    logits = h @ W_U + t["b_U"]
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.tensor(labels).reshape(-1), ignore_index=-100)
    loss.backward()
    return loss, logits, t


@pytest.mark.parametrize("overrides", [dict(), dict(norm_first=False, tie_output=True, positional="learned"),
                                       dict(activation="relu", tie_output=True)],
                         ids=["pre-LN-gelu", "post-LN-tied-learned", "pre-LN-relu-tied"])
def test_matches_torch_autograd(overrides):
    torch = pytest.importorskip("torch")
    model = randomize_norms_and_biases(EncoderOnly(config(**overrides), mask_id=MASK))
    ids, labels = masked_batch(seed=4)
    logits, cache = model.forward(ids)
    loss, dlogits = cross_entropy(logits, labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    t_loss, t_logits, t = torch_reference(model, ids, labels, torch)
    assert rel_error(loss, t_loss.item()) <= 1e-12
    assert rel_error(logits, t_logits.detach().numpy()) <= 1e-10
    for name, g in model.gradients().items():
        if name.endswith(".b_k"):  # zero in theory: rounding noise on both sides
            assert np.abs(g).max() < 1e-12 and t[name].grad.abs().max().item() < 1e-12
            continue
        assert rel_error(g, t[name].grad.numpy()) <= 1e-10, name


# =====================================================================================
# What the model does, and training it with the same loop
# =====================================================================================
def test_attention_is_bidirectional_and_padding_is_invisible():
    model = randomize_norms_and_biases(EncoderOnly(config(positional="learned"), mask_id=MASK))
    ids = np.array([[5, 6, MASK, 8, 9]])
    logits, _ = model.forward(ids)
    later = ids.copy()
    later[0, 4] = 10  # a token after position 1 changes position 1's logits: no causal mask
    assert np.abs(model.forward(later)[0][0, 1] - logits[0, 1]).max() > 1e-3
    padded, _ = model.forward(np.array([[5, 6, MASK, 8, 9, PAD, PAD]]))
    assert np.abs(padded[0, :5] - logits[0]).max() <= 1e-12


def test_constructor_and_loss_checks():
    with pytest.raises(ValueError, match="mask_id"):
        EncoderOnly(config(), mask_id=V)
    with pytest.raises(ValueError, match="mask_id: expected a token other than pad_id"):
        EncoderOnly(config(), mask_id=PAD)
    model = EncoderOnly(config(), mask_id=MASK)
    assert architecture_of(model) == "encoder-only"
    batch = make_batch([[5, 6, 7]], [[8, 2]], pad_id=PAD, start_id=BOS)
    with pytest.raises(ValueError, match="rng: expected a np.random.Generator or a seed"):
        forward_loss(model, batch)


def test_the_training_loop_trains_it_to_fill_in_blanks():
    task = get_task("dates")  # sources like 2024-03-07: digits with structure, so blanks can be guessed
    tok = task.tokenizer
    cfg = default_model_config(task, src_vocab_size=tok.vocab_size + 1, tgt_vocab_size=tok.vocab_size + 1,
                               d_model=32, n_heads=2, d_ff=64, n_encoder_layers=2, dtype="float32")
    model = EncoderOnly(cfg, mask_id=tok.vocab_size)  # <mask>: the id after the tokenizer's
    hist = train(model, task, TrainConfig(steps=120, batch_size=32, lr=5e-3, warmup=10, eval_every=60,
                                          eval_size=64, progress=False))
    assert np.mean(hist.loss[-10:]) < 0.85 * np.mean(hist.loss[:5])
    first, last = hist.evals
    assert set(last) == {"step", "masked_lm_loss", "masked_token_accuracy"}
    assert last["masked_lm_loss"] < first["masked_lm_loss"]
    assert last["masked_token_accuracy"] > 0.3  # more than guessing one of the 11 characters of a date
    assert hist.tokens > 0 and model.training
