"""The whole models' hand-written backward against float64 finite differences of the
cross-entropy loss: every parameter tensor of the encoder-decoder (pre-LN and post-LN, tied
and untied, learned and sinusoidal positions) and of the decoder-only model, plus dL/dH_enc
and each decoder block's share of it.

Large tensors are sampled (``MAX_ENTRIES`` entries each); every tensor is covered.  The
activation is GELU: ReLU's kink breaks finite differences.  LayerNorm gammas/betas and the
attention biases are random, so no path hides behind gamma = 1, beta = 0.

Tolerance.  ``numerical_gradient``'s fourth-order stencil has truncation error far below
1e-12 here, but each loss value carries rounding noise of ~1e-16 |L| that the stencil
divides by h = 1e-3: a few 1e-13 *absolute* (measured: at most ~4e-13).  The relative error
``|a - b| / (|a| + |b|)`` is held to 1e-6 for every entry whose gradient is above 1e-6 in
size; below that, where no finite difference can resolve six digits, the entry must agree
to 1e-12 absolutely.  That is :func:`rel_error` with its denominator floored at 1e-6 instead
of 1e-8.  (A sampled entry of size 1e-8 is not a rare event among a thousand entries.)
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.config import ModelConfig
from minitf.data import make_batch
from minitf.gradcheck import numerical_gradient, randomize_norms_and_biases, sample_indices
from minitf.loss import cross_entropy
from minitf.models import DecoderOnly, EncoderDecoder

REL_TOL = 1e-6
FLOOR = 1e-6  # |a| + |b| below this is compared absolutely, to REL_TOL * FLOOR = 1e-12
MAX_ENTRIES = 12
PAD, BOS = 0, 1


def config(**overrides) -> ModelConfig:
    base = dict(src_vocab_size=11, tgt_vocab_size=13, d_model=8, n_heads=2, d_ff=12, n_encoder_layers=2,
                n_decoder_layers=2, max_len=8, activation="gelu", dtype="float64", pad_id=PAD, seed=7)
    base.update(overrides)
    return ModelConfig(**base)




def padded_batch(cfg: ModelConfig, seed: int = 1):
    rng = np.random.default_rng(seed)
    sources = [rng.integers(3, cfg.src_vocab_size, n).tolist() for n in (5, 3)]
    targets = [rng.integers(3, cfg.tgt_vocab_size, n).tolist() for n in (4, 2)]
    return make_batch(sources, targets, pad_id=PAD, start_id=BOS)


def floored_rel_error(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(FLOOR, np.abs(a) + np.abs(b)), initial=0.0))


def check_every_tensor(f, model, analytic: dict, seed: int = 0) -> dict[str, float]:
    """Sampled finite-difference errors of every parameter, checked as described above.

    The key biases b_k have an exactly zero true gradient: b_k adds the same q . b_k to a
    whole row of scores, and the softmax is invariant to such a shift.  Their analytic
    gradient must be ~0 (rounding noise only); they are left out of the relative check,
    which would compare noise with noise.
    """
    rng = np.random.default_rng(seed)
    report, n_resolved, n_total = {}, 0, 0
    for name, p in model.parameters().items():
        if name.endswith(".b_k"):
            assert np.max(np.abs(analytic[name])) < 1e-12, f"{name}: expected a zero gradient"
            continue
        idx = sample_indices(p.shape, MAX_ENTRIES, rng)
        num = numerical_gradient(f, p, indices=idx)
        picked = tuple(np.array(i) for i in zip(*idx))
        a, n = analytic[name][picked], num[picked]
        report[name] = floored_rel_error(a, n)
        n_resolved += int(np.sum(np.abs(a) + np.abs(n) >= FLOOR))
        n_total += len(idx)
    worst = max(report, key=report.get)
    assert report[worst] <= REL_TOL, (f"worst: {worst} {report[worst]:.2e}; " + ", ".join(
        f"{k}={v:.1e}" for k, v in sorted(report.items(), key=lambda kv: -kv[1])[:8]))
    # the check is a relative one almost everywhere (it would be empty if all were tiny)
    assert n_resolved >= 0.8 * n_total, f"only {n_resolved} of {n_total} sampled entries above {FLOOR}"
    return report


ENC_DEC_CASES = {
    "pre_ln_untied_sinusoidal": dict(),
    "post_ln_tied_learned": dict(norm_first=False, src_vocab_size=13, share_embeddings=True, tie_output=True,
                                 positional="learned"),
    "pre_ln_tied_output_learned": dict(tie_output=True, positional="learned"),
    "post_ln_untied_sinusoidal_gelu_tanh": dict(norm_first=False, activation="gelu_tanh"),
}


@pytest.mark.parametrize("case", sorted(ENC_DEC_CASES))
def test_encoder_decoder_gradients_match_finite_differences(case):
    cfg = config(**ENC_DEC_CASES[case])
    model = EncoderDecoder(cfg)
    randomize_norms_and_biases(model)
    batch = padded_batch(cfg)

    def f() -> float:
        logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)
        return cross_entropy(logits, batch.labels)[0]

    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    _, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    analytic = {k: g.copy() for k, g in model.gradients().items()}
    report = check_every_tensor(f, model, analytic)
    n_bk = sum(name.endswith(".b_k") for name in model.parameters())
    assert len(report) + n_bk == len(model.parameters()) and n_bk == 2 + 2 * 2


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_only_gradients_match_finite_differences(norm_first):
    cfg = config(norm_first=norm_first, positional="learned", n_decoder_layers=2)
    model = DecoderOnly(cfg)
    randomize_norms_and_biases(model)
    rng = np.random.default_rng(2)
    input_ids = rng.integers(3, cfg.tgt_vocab_size, size=(2, 6))
    input_ids[1, 4:] = PAD  # right padding, ignored in the labels
    labels = np.roll(input_ids, -1, axis=1)
    labels[:, -1] = 2
    labels[1, 3:] = -100

    def f() -> float:
        logits, _ = model.forward(input_ids)
        return cross_entropy(logits, labels)[0]

    logits, cache = model.forward(input_ids)
    _, dlogits = cross_entropy(logits, labels)
    model.zero_grad()
    model.backward(dlogits, cache)
    check_every_tensor(f, model, {k: g.copy() for k, g in model.gradients().items()})


# ---- dL/dH_enc and the per-block shares -------------------------------------------------------
def decode_with_separate_memories(model: EncoderDecoder, decoder_input_ids, memories, src_mask):
    """The decoder of ``model``, except that block l's cross-attention reads ``memories[l]``
    (each a copy of H_enc).  d loss / d memories[l] is then block l's share of dL/dH_enc."""
    from minitf.masks import causal_mask
    from minitf.models.common import head_weight, input_forward

    c = model.config
    x, _ = input_forward(decoder_input_ids, model.tgt_embed, model.tgt_pos, model.tgt_dropout,
                         c.scale_embeddings)
    self_mask = causal_mask(decoder_input_ids.shape[1], dtype=model.dtype)
    for layer, memory in zip(model.decoder_layers, memories):
        x, _ = layer.forward(x, memory, self_mask, src_mask)
    H_dec, _ = model.decoder_norm.forward(x)
    return H_dec @ head_weight(model)


@pytest.mark.parametrize("norm_first", [True, False])
def test_dH_enc_and_each_block_share_match_finite_differences(norm_first):
    cfg = config(norm_first=norm_first, n_decoder_layers=3)
    model = EncoderDecoder(cfg)
    randomize_norms_and_biases(model)
    batch = padded_batch(cfg)
    logits, cache = model.forward(batch.input_ids, batch.decoder_input_ids)
    _, dlogits = cross_entropy(logits, batch.labels)
    model.zero_grad()
    grads = model.backward(dlogits, cache)

    H_enc, _ = model.encode(batch.input_ids)
    src_mask = model.source_mask(batch.input_ids)
    memories = [H_enc.copy() for _ in model.decoder_layers]

    def f() -> float:
        out = decode_with_separate_memories(model, batch.decoder_input_ids, memories, src_mask)
        return cross_entropy(out, batch.labels)[0]

    assert f() == pytest.approx(cross_entropy(logits, batch.labels)[0], rel=1e-14)
    for l, memory in enumerate(memories):
        num = numerical_gradient(f, memory)  # every entry: (B, S, D) is small
        assert floored_rel_error(grads.dH_enc_shares[l], num) <= REL_TOL, f"share of block {l}"
        assert np.abs(num).max() > 1e-3, f"block {l}'s share should not vanish"

    total = H_enc.copy()

    def f_total() -> float:
        out = decode_with_separate_memories(model, batch.decoder_input_ids, [total] * len(memories), src_mask)
        return cross_entropy(out, batch.labels)[0]

    assert floored_rel_error(grads.dH_enc, numerical_gradient(f_total, total)) <= REL_TOL
