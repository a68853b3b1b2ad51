"""Lesson 8, sections 3 and 4: the loss, and where its gradient goes.

======================================  ===================================================
section of Lesson 8                     what is measured here
======================================  ===================================================
3  the loss, summed over positions      :func:`logit_gradient_check` (p_hat - y against
                                        finite differences), :func:`padding_invariance`
                                        (a padded batch against its examples one by one)
4  the gradient's journey               :func:`gradient_journey` (norms stage by stage, each
                                        decoder block's share of dL/dH_enc),
                                        :func:`cross_attention_off` (the encoder's only
                                        learning signal switched off),
                                        :func:`activation_memory` (enc-dec vs decoder-only)
======================================  ===================================================

The lesson's other sections are in :mod:`minitf.course.l08_teacher_forcing`, which re-exports every
name here.  Shapes in the course's letters (:mod:`minitf`).
"""
from __future__ import annotations

import contextlib
from typing import Iterator, NamedTuple

import numpy as np

from ...checks import check_instance
from ...config import ModelConfig
from ...data import IGNORE_INDEX, Batch
from ...gradcheck import check_gradients, rel_error
from ...layers.softmax import softmax
from ...loss import cross_entropy
from ...models import DecoderOnly, EncoderDecoder
from ...training import forward_loss
from ..kit.runs import check_batch, check_model, grad_norm, norm

__all__ = ["logit_gradient_check", "PaddingCheck", "padding_invariance", "Stage", "GradientJourney",
           "gradient_journey", "encoder_parameter_names", "cross_attention_off", "activation_memory"]


# ---- section 3: the loss -------------------------------------------------------------------------
def logit_gradient_check(logits: np.ndarray, labels: np.ndarray, *, max_entries: int | None = None,
                         seed: int = 0) -> dict:
    """Check :func:`minitf.loss.cross_entropy`'s ``dlogits`` two ways, in float64.

    Returns a dict:

    ``p_hat_minus_y``
        rel_error between ``dlogits`` and (softmax(z) - onehot(y)) / n_real written out
        (0 on ignored positions);
    ``finite_differences``
        rel_error between ``dlogits`` and the fourth-order centred differences of the
        loss (:func:`minitf.gradcheck.check_gradients`) on ``max_entries`` sampled entries
        (all if None);
    ``ignored_max_abs``
        the largest |dlogits| on an ignored (padding) position: exactly 0;
    ``loss``, ``n_real``.

    logits (B, T, V) float, labels (B, T) with ``IGNORE_INDEX`` on padding.
    """
    z = np.array(logits, dtype=np.float64)  # (B, T, V) a float64 copy we may perturb
    labels = np.asarray(labels)
    loss, dlogits = cross_entropy(z, labels)
    real = labels != IGNORE_INDEX  # (B, T)
    n_real = int(real.sum())
    onehot = np.zeros_like(z)  # (B, T, V)
    np.put_along_axis(onehot, np.where(real, labels, 0)[..., None], 1.0, axis=-1)
    expected = (softmax(z) - onehot) * real[..., None] / n_real  # (B, T, V)
    fd = check_gradients(lambda: cross_entropy(z, labels)[0], {"logits": dlogits}, {"logits": z},
                         max_entries=max_entries, seed=seed)
    return {"p_hat_minus_y": rel_error(dlogits, expected), "finite_differences": fd["logits"],
            "ignored_max_abs": float(np.abs(dlogits[~real]).max()) if (~real).any() else 0.0,
            "loss": loss, "n_real": n_real}


class PaddingCheck(NamedTuple):
    """A padded batch against its examples run one by one (:func:`padding_invariance`)."""

    loss_padded: float  # the batch's loss: sum over real tokens / n_real
    loss_unpadded: float  # the examples alone, combined as sum_i n_i L_i / sum_i n_i
    loss_over_padded_length: float  # what dividing by B*T instead of n_real would give (wrong)
    grad_rel_error: float  # ||g_padded - g_unpadded|| / ||g_unpadded||, every parameter as one vector
    n_real: int  # real target tokens
    n_positions: int  # B * T target positions, padding included
    n_source_pad: int  # padded source positions


def padding_invariance(model: EncoderDecoder, batch: Batch) -> PaddingCheck:
    """Loss and gradients of the padded ``batch`` against the same examples without padding.

    Each example is cut to its real source and target length and run alone; its mean loss
    L_i over n_i tokens and gradients g_i are combined as the batch's loss is defined:
    sum_i n_i L_i / sum_i n_i (the gradients likewise).  Use a float64 model
    (:func:`to_float64`) to see agreement to rounding.
    """
    check_model(model)
    check_batch(batch)
    pad = model.config.pad_id
    with model.evaluating():
        model.zero_grad()
        loss, dlogits, cache, _, _ = forward_loss(model, batch)
        model.backward(dlogits, cache)
        padded = {k: g.copy() for k, g in model.gradients().items()}

        n_i = (batch.labels != IGNORE_INDEX).sum(axis=1)  # (B,) real target tokens per example
        s_i = (batch.input_ids != pad).sum(axis=1)  # (B,) real source tokens per example
        total_loss, summed = 0.0, {k: np.zeros_like(g) for k, g in padded.items()}
        for i in range(batch.batch_size):
            one = Batch(batch.input_ids[i:i + 1, :s_i[i]], batch.decoder_input_ids[i:i + 1, :n_i[i]],
                        batch.labels[i:i + 1, :n_i[i]])  # (1, s_i), (1, n_i), (1, n_i): no padding at all
            model.zero_grad()
            loss_i, dlogits_i, cache_i, _, _ = forward_loss(model, one)
            model.backward(dlogits_i, cache_i)
            total_loss += n_i[i] * loss_i
            for k, g in model.gradients().items():
                summed[k] += n_i[i] * g
        model.zero_grad()
    n_real = int(n_i.sum())
    # one vector of every gradient: per-parameter ratios would be noise over noise for the
    # gradients that are exactly zero in exact arithmetic (the key biases b_k, say)
    diff = norm([padded[k] - summed[k] / n_real for k in padded])
    grad_rel_error = diff / max(norm([summed[k] / n_real for k in padded]), 1e-300)
    return PaddingCheck(loss, float(total_loss / n_real), loss * n_real / batch.labels.size, grad_rel_error, n_real,
                        int(batch.labels.size), int((batch.input_ids == pad).sum()))


# ---- section 4: the gradient's journey ----------------------------------------------------------
class Stage(NamedTuple):
    """One stop of the gradient on its way from the loss to the source embedding."""

    key: str  # stable identifier, e.g. "decoder.2.cross_kv"
    label: str  # what it is, for a figure or a printout
    part: str  # figure-key meaning: "loss", "decoder", "cross_attention" or "encoder"
    norm: float  # the Frobenius norm of the gradient measured there
    what: str  # which gradient, e.g. "dL/dH_dec" or "params"


class GradientJourney(NamedTuple):
    """One backward pass, measured (:func:`gradient_journey`)."""

    loss: float
    stages: list  # [Stage], from the loss down to the source embedding
    dH_enc: np.ndarray  # (B, S, D) the encoder's whole learning signal
    shares: list  # L_dec arrays (B, S, D), decoder block l's cross-attention share
    share_norms: np.ndarray  # (L_dec,) ||share_l||
    share_fractions: np.ndarray  # (L_dec,) <share_l, dH_enc> / ||dH_enc||^2: they sum to 1
    sum_max_abs_diff: float  # max |sum_l share_l - dH_enc| (summed in the backward's order: 0)


def gradient_journey(model: EncoderDecoder, batch: Batch) -> GradientJourney:
    """Run one teacher-forced forward and backward on ``batch`` (eval mode) and measure
    the gradient at every stage of its journey.

    Stages, in the order the backward visits them: dL/dz = (p_hat - y)/n at the head;
    W_U's gradient and dL/dH_dec; for each decoder block, last first, its parameters'
    gradient and the gradient of its cross-attention's W_k, W_v together with the share of
    dL/dH_enc it hands back; dL/dH_enc, the sum of the shares; each encoder block's
    parameters, last first; the source embedding.  ``model``'s gradients hold this
    batch's afterwards.
    """
    check_model(model)
    check_batch(batch)
    with model.evaluating():
        model.zero_grad()
        loss, dlogits, cache, _, _ = forward_loss(model, batch)
        out = model.backward(dlogits, cache)
    # dW_U = H_dec^T dlogits, computed here: with a tied W_U the parameter's gradient also
    # holds the input embedding's share, which is not the head's
    D, V = model.config.d_model, dlogits.shape[-1]
    dW_U = cache.decoder.H_dec.reshape(-1, D).T @ dlogits.reshape(-1, V)  # (D, B*T) @ (B*T, V) -> (D, V)
    stages = [Stage("loss", "p\u0302 \u2212 y at the head", "loss", norm([dlogits]), "dL/dz"),
              Stage("head", "W_U", "decoder", norm([dW_U]), "params"),
              Stage("H_dec", "H_dec", "decoder", norm([out.dH_dec]), "dL/dH_dec")]
    for l in reversed(range(len(model.decoder_layers))):
        block = model.decoder_layers[l]
        ca = block.cross_attn.grads
        stages += [Stage(f"decoder.{l}", f"decoder block {l + 1}", "decoder", grad_norm(block), "params"),
                   Stage(f"decoder.{l}.cross_kv", f"cross-attention K, V of block {l + 1}", "cross_attention",
                         norm([ca["W_k"], ca["b_k"], ca["W_v"], ca["b_v"]]), "params"),
                   Stage(f"decoder.{l}.share", f"share of block {l + 1}", "cross_attention",
                         norm([out.dH_enc_shares[l]]), "dL/dH_enc")]
    stages.append(Stage("H_enc", "H_enc", "encoder", norm([out.dH_enc]), "dL/dH_enc"))
    for l in reversed(range(len(model.encoder_layers))):
        stages.append(Stage(f"encoder.{l}", f"encoder block {l + 1}", "encoder",
                            grad_norm(model.encoder_layers[l]), "params"))
    stages.append(Stage("src_embed", "source embedding", "encoder", norm([model.src_embed.grads["W_E"]]), "params"))

    shares = list(out.dH_enc_shares)
    total = np.zeros_like(out.dH_enc)  # (B, S, D) summed last block first, as the backward does
    for l in reversed(range(len(shares))):
        total += shares[l]
    g64 = out.dH_enc.astype(np.float64)  # projections in float64: they must add up to 1
    gg = float(np.vdot(g64, g64))
    fractions = np.array([float(np.vdot(s.astype(np.float64), g64)) / gg if gg else 0.0 for s in shares])
    return GradientJourney(loss, stages, out.dH_enc, shares, np.array([norm([s]) for s in shares]), fractions,
                           float(np.max(np.abs(total - out.dH_enc))))


def encoder_parameter_names(model: EncoderDecoder) -> list:
    """Names (as in ``model.parameters()``) of the parameters only the encoder uses:
    ``src_embed.*`` (unless shared with the target side), ``src_pos.*``,
    ``encoder_layers.*``, ``encoder_norm.*``."""
    check_model(model)
    prefixes = ["src_pos.", "encoder_layers.", "encoder_norm."]
    if not model.config.share_embeddings:
        prefixes.append("src_embed.")
    return [n for n in model.parameters() if n.startswith(tuple(prefixes))]


@contextlib.contextmanager
def cross_attention_off(model: EncoderDecoder) -> Iterator[EncoderDecoder]:
    """Inside the block, every cross-attention's output projection ``W_o``, ``b_o`` is zero:
    the decoder reads nothing from the encoder, and the encoder gets no gradient.  The
    weights are restored on exit."""
    check_model(model)
    saved = [(block.cross_attn, block.cross_attn.params["W_o"].copy(), block.cross_attn.params["b_o"].copy())
             for block in model.decoder_layers]
    try:
        for attn, _, _ in saved:
            attn.params["W_o"][...] = 0.0
            attn.params["b_o"][...] = 0.0
        yield model
    finally:
        for attn, W_o, b_o in saved:
            attn.params["W_o"][...] = W_o
            attn.params["b_o"][...] = b_o


def activation_memory(model_config: ModelConfig, batch: Batch) -> dict:
    """Bytes one teacher-forced forward keeps for its backward (``activation_bytes``).

    Returns ``{name: {"encoder": .., "decoder": .., "head": .., "total": ..,
    "blocks": n, "positions": tokens per example}}`` for

    * ``"encoder-decoder"``: the model of ``model_config`` on ``batch``;
    * ``"decoder-only, same decoder"``: a :class:`DecoderOnly` with the same width and
      ``n_decoder_layers`` blocks, reading ``source <bos> target`` as one sequence;
    * ``"decoder-only, same depth"``: the same with ``n_encoder_layers + n_decoder_layers``
      blocks.
    """
    check_batch(batch)
    check_instance("model_config", model_config, ModelConfig)
    c = model_config
    B, S = batch.input_ids.shape
    T = batch.labels.shape[1]
    if S + T > c.max_len:
        raise ValueError(f"model_config: expected max_len >= S + T = {S + T} for the decoder-only models, "
                         f"got {c.max_len}")
    out = {}
    enc_dec = EncoderDecoder(c)
    _, _, cache, _, _ = forward_loss(enc_dec, batch)
    out["encoder-decoder"] = {"encoder": 0, **enc_dec.activation_bytes(cache),
                              "blocks": c.n_encoder_layers + c.n_decoder_layers, "positions": f"S + T = {S} + {T}"}
    for name, n_layers in (("decoder-only, same decoder", c.n_decoder_layers),
                           ("decoder-only, same depth", c.n_encoder_layers + c.n_decoder_layers)):
        model = DecoderOnly(c.replace(n_decoder_layers=n_layers))
        _, _, cache, _, _ = forward_loss(model, batch)
        out[name] = {"encoder": 0, **model.activation_bytes(cache), "blocks": n_layers,
                     "positions": f"S + T = {S + T}"}
    return out
