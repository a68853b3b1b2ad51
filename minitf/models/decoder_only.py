"""A decoder-only (GPT-style) transformer from the same parts: the decoder block without
cross-attention, under a causal mask, and the same input and head.

    logits = DecoderNorm(Blocks(Dropout(W_E[ids] sqrt(D) + P))) W_U      (B, T, V)

It uses ``ModelConfig``'s target-side fields (``tgt_vocab_size``, ``n_decoder_layers``)
and ignores the encoder's.  Trained on a seq2seq task it reads ``source <bos> target``
as one sequence (see ``training.decoder_only_batch``).
"""
from __future__ import annotations


import numpy as np

from ..checks import check_token_ids
from ..config import ModelConfig
from ..masks import causal_mask
from ..module import Module
from ..layers.linear import affine_forward
from .common import (DecoderCache, add_decoder_side, cache_nbytes, head_backward, head_weight, input_backward,
                     input_forward)


class DecoderOnly(Module):
    """Parameter names: ``tgt_embed.W_E``, ``tgt_pos.W_pos`` (learned only),
    ``decoder_layers.{l}.*`` (``self_attn``, ``ff``, ``norm1``, ``norm3``), ``decoder_norm.*``, ``W_U``."""

    def __init__(self, config: ModelConfig):
        super().__init__(np.dtype(config.dtype))
        self.config = config
        add_decoder_side(self, config, np.random.default_rng(config.seed), cross_attention=False)

    def forward(self, input_ids: np.ndarray):
        """input_ids (B, T) -> logits (B, T, V), cache"""
        c = self.config
        ids = check_token_ids("input_ids", input_ids, c.tgt_vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"input_ids: expected shape (B, T), got {ids.shape}")
        if ids.shape[1] > c.max_len:
            raise ValueError(f"input_ids: expected at most max_len={c.max_len} positions, got {ids.shape[1]}")
        self_mask = causal_mask(ids.shape[1], dtype=self.dtype) if c.causal else None  # (T, T)
        x, c_in = input_forward(ids, self.tgt_embed, self.tgt_pos, self.tgt_dropout, c.scale_embeddings)
        layer_caches = []
        for layer in self.decoder_layers:
            x, c_l = layer.forward(x, None, self_mask)  # (B, T, D)
            layer_caches.append(c_l)
        H_dec, c_norm = self.decoder_norm.forward(x)  # (B, T, D)
        logits = affine_forward(H_dec, head_weight(self), None)  # (B, T, D) @ (D, V) -> (B, T, V)
        return logits, DecoderCache(c_in, layer_caches, c_norm, H_dec)

    def backward(self, dlogits: np.ndarray, cache: DecoderCache) -> np.ndarray:
        """dlogits (B, T, V) -> dH_dec (B, T, D); accumulates every parameter's gradient."""
        # 1. the head.  forward: logits = H_dec @ W_U
        dH_dec = head_backward(dlogits, cache.H_dec, self)  # (B, T, D)
        # 2. the final norm.  forward: H_dec = decoder_norm(x)
        dx = self.decoder_norm.backward(dH_dec, cache.norm)  # (B, T, D)
        # 3. the blocks, last to first; with no cross-attention there is no encoder to send to
        for l in reversed(range(len(self.decoder_layers))):
            dx, _ = self.decoder_layers[l].backward(dx, cache.layers[l])  # (B, T, D)
        # 4. the embedding.  forward: x = Dropout(W_E[input_ids] sqrt(D) + P)
        input_backward(dx, cache.input, self.tgt_embed, self.tgt_pos, self.tgt_dropout, self.config.scale_embeddings)
        return dH_dec

    def activation_bytes(self, cache: DecoderCache) -> dict:
        seen: set = set()
        out = {"decoder": cache_nbytes((cache.input, cache.layers, cache.norm), seen),
               "head": cache_nbytes(cache.H_dec, seen)}
        out["total"] = sum(out.values())
        return out
