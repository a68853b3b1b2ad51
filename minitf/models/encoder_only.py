"""An encoder-only (BERT-style) transformer: the encoder-decoder's encoder, bidirectional,
with a masked-token head (Devlin et al., 2019).

    x      = Dropout(W_E[ids] sqrt(D) + P)                     (B, S, D)
    H      = EncoderNorm(EncoderBlocks(x))                      (B, S, D)   every position sees every other
    h      = LayerNorm(act(H W_t + b_t))                        (B, S, D)   BERT's head "transform"
    logits = h W_U + b_U                                        (B, S, V)   W_U = W_E^T when tied

No causal mask: a position reads the tokens after it as well as before, which is what makes
the model good at understanding a text and unable to write one.  It learns by filling in
blanks: :func:`mask_tokens` hides some tokens and the loss scores only those (label -100
elsewhere), trained by the same loop as the other models (``forward -> (logits, cache)``,
``backward(dlogits, cache)``; ``minitf.training.forward_loss`` masks the task's sources).

It uses ``ModelConfig``'s source-side fields (``src_vocab_size``, ``n_encoder_layers``) and
ignores the decoder's; ``tie_output`` ties W_U to the embedding, as BERT does.

Its training data come from :func:`minitf.data.noise.mask_tokens` (BERT's 80/10/10 masking),
beside the other pretraining noises.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..checks import check_int, check_token_ids
from ..config import ModelConfig
from ..layers import LayerNorm, Linear, get_activation
from ..layers.linear import affine_backward, affine_forward
from ..masks import key_padding_mask
from ..module import Module
from .common import cache_nbytes, input_backward, input_forward
from .stacks import EncoderCache, add_encoder_side, encoder_backward, encoder_forward

__all__ = ["EncoderOnly", "EncoderOnlyCache", "MaskedLMHeadCache"]




# ---- the model --------------------------------------------------------------------------------------
class MaskedLMHeadCache(NamedTuple):
    """What the masked-token head keeps for its backward."""
    transform: Any  # the Linear's cache (its input H, for dW_t = H^T dz)
    z: np.ndarray  # (B, S, D) the pre-activation, for the activation's backward
    norm: Any  # the head LayerNorm's cache
    h: np.ndarray  # (B, S, D) the head's output, for dW_U = h^T dlogits


class EncoderOnlyCache(NamedTuple):
    encoder: EncoderCache
    head: MaskedLMHeadCache


class EncoderOnly(Module):
    """An encoder-only transformer with BERT's masked-token head, built from ``ModelConfig``.

    Parameter names (flat view): ``W_U`` (absent when tied to ``src_embed.W_E``), ``b_U``,
    ``src_embed.W_E``, ``src_pos.W_pos`` (learned positions only), ``encoder_layers.{l}.*``,
    ``encoder_norm.*``, ``mlm_transform.W``, ``mlm_transform.b``, ``mlm_norm.*``.

    ``mask_id`` is the ``<mask>`` token the masked-token objective writes into the input
    (:func:`minitf.data.noise.mask_tokens`); the forward pass treats it as any token.
    """

    def __init__(self, config: ModelConfig, *, mask_id: int):
        c = config
        super().__init__(np.dtype(c.dtype))
        self.config = c
        self.mask_id = check_int("mask_id", mask_id, 0, c.src_vocab_size - 1, hint="a source token id")
        if mask_id == c.pad_id:
            raise ValueError(f"mask_id: expected a token other than pad_id={c.pad_id} (padding is never a "
                             f"question), got {mask_id}")
        rng = np.random.default_rng(c.seed)
        D, dt = c.d_model, self.dtype
        add_encoder_side(self, c, rng)  # the encoder-decoder's encoder
        # BERT's head: a transform (D -> D, activation, LayerNorm), then W_U and a bias per token
        self.mlm_transform = Linear(D, D, rng=rng, dtype=dt)
        self.mlm_norm = LayerNorm(D, c.layer_norm_eps, dtype=dt)
        if not c.tie_output:
            self.add_param("W_U", rng.uniform(-1, 1, size=(D, c.src_vocab_size)) / math.sqrt(D))
        self.add_param("b_U", np.zeros(c.src_vocab_size))

    def head_weight(self) -> np.ndarray:
        """W_U (D, V): its own parameter, or the embedding's W_E^T when tied (a view)."""
        return self.src_embed.params["W_E"].T if self.config.tie_output else self.params["W_U"]  # (D, V)

    # ---- forward ----------------------------------------------------------------------------
    def source_mask(self, input_ids: np.ndarray) -> np.ndarray:
        """(B, 1, 1, S): padded positions are blocked as keys; nothing else is masked."""
        return key_padding_mask(input_ids, self.config.pad_id, dtype=self.dtype)

    def encode(self, input_ids: np.ndarray):
        """input_ids (B, S) -> H (B, S, D), cache: the encoder of the encoder-decoder."""
        c = self.config
        ids = check_token_ids("input_ids", input_ids, c.src_vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"input_ids: expected shape (B, S), got {ids.shape}")
        if ids.shape[1] > c.max_len:
            raise ValueError(f"input_ids: expected at most max_len={c.max_len} positions, got {ids.shape[1]}")
        x, c_in = input_forward(ids, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        return encoder_forward(self, x, c_in, self.source_mask(ids))  # (B, S, D)

    def forward(self, input_ids: np.ndarray):
        """input_ids (B, S) (masked, right-padded) -> logits (B, S, V), cache."""
        act_forward, _ = get_activation(self.config.activation)
        H, c_enc = self.encode(input_ids)  # (B, S, D)
        z, c_t = self.mlm_transform.forward(H)  # (B, S, D)  z = H W_t + b_t
        a, _ = act_forward(z)  # (B, S, D)
        h, c_norm = self.mlm_norm.forward(a)  # (B, S, D)
        logits = affine_forward(h, self.head_weight(), self.params["b_U"])  # (B, S, D) @ (D, V) -> (B, S, V)
        return logits, EncoderOnlyCache(c_enc, MaskedLMHeadCache(c_t, z, c_norm, h))

    # ---- backward ---------------------------------------------------------------------------
    def backward(self, dlogits: np.ndarray, cache: EncoderOnlyCache) -> np.ndarray:
        """dlogits (B, S, V) -> dH (B, S, D), the gradient at the encoder's output;
        accumulates every parameter's gradient."""
        c = self.config
        enc, head = cache
        _, act_backward = get_activation(c.activation)
        # 1. the output layer.  forward: logits = h @ W_U + b_U
        dh, dW_U, db_U = affine_backward(dlogits, head.h, self.head_weight())  # dh (B, S, D), dW_U (D, V)
        if c.tie_output:
            self.src_embed.grads["W_E"] += dW_U.T  # (V, D): one table, two uses, two contributions
        else:
            self.grads["W_U"] += dW_U
        self.grads["b_U"] += db_U
        # 2. the head's norm and activation.  forward: h = LayerNorm(act(z))
        da = self.mlm_norm.backward(dh, head.norm)  # (B, S, D)
        dz = act_backward(da, head.z)  # (B, S, D)
        # 3. the head's transform.  forward: z = H @ W_t + b_t
        dH = self.mlm_transform.backward(dz, head.transform)  # (B, S, D)
        # 4. the encoder's final norm, then its blocks, last to first.  forward: H = encoder_norm(blocks(x))
        dx = encoder_backward(self, dH, enc)  # (B, S, D)
        # 5. the embedding.  forward: x = Dropout(W_E[input_ids] sqrt(D) + P)
        input_backward(dx, enc.input, self.src_embed, self.src_pos, self.src_dropout, c.scale_embeddings)
        return dH

    # ---- memory -------------------------------------------------------------------------------
    def activation_bytes(self, cache: EncoderOnlyCache) -> dict:
        """Bytes the forward pass keeps for backward, per part, each buffer counted once."""
        seen: set = set()
        out = {"encoder": cache_nbytes(cache.encoder, seen), "head": cache_nbytes(cache.head, seen)}
        out["total"] = sum(out.values())
        return out
