"""A decoder-only (GPT-style) transformer from the same parts: the decoder block without
cross-attention, under a causal mask, and the same input and head.

    x      = Dropout(W_E[ids] sqrt(D) + P[position_ids])                 (B, T, D)
    logits = DecoderNorm(Blocks(x)) W_U                                   (B, T, V)

It uses ``ModelConfig``'s target-side fields (``tgt_vocab_size``, ``n_decoder_layers``)
and ignores the encoder's.  Trained on a seq2seq task it reads ``source <bos> target``
as one sequence (see ``training.decoder_only_batch`` and ``training.causal_lm_batch``).

**Padding** (``attention_mask``, Hugging Face's: 1 on a real token, 0 on padding).  A padded
position is blocked as a key, so no real token reads it, and it is skipped by the positions:
``position_ids = cumsum(attention_mask) - 1``, as Hugging Face's ``generate`` numbers a
left-padded prompt.  Each real token then gets exactly the logits it gets with the padding
removed, wherever the padding sits: at the front of a left-padded prompt (generation), in the
middle of ``source <pad> <pad> <bos> target`` (training on ``decoder_only_batch``), or at the
end.  Without an ``attention_mask`` the positions are 0 .. T-1 and only the future is masked,
which is all right padding needs (nothing real comes after it).

**Generation** (:mod:`minitf.decoding`): ``greedy_search``, ``sample`` and ``beam_search`` take
this model as they take an encoder-decoder.  The prompt is the source followed by ``<bos>``.
``start_decoding`` left-pads the sources (:func:`left_pad`) and reads them in one pass into
the self-attention KV cache, once per example (what the encoder is to the encoder-decoder);
each step then feeds one token -- ``<bos>`` first, then the token just chosen -- at position
``slot - (the row's left padding)``.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..checks import check_shape, check_token_ids
from ..config import ModelConfig
from ..layers.linear import affine_forward
from ..layers.positional import PositionalEncoding
from ..layers.reductions import scatter_add_rows
from ..masks import causal_mask, key_padding_mask
from ..module import Module
from .common import DecoderCache, add_decoder_side, cache_nbytes, head_backward, head_weight


# ---- padding: where it goes, and the positions that skip it --------------------------------------
def left_pad(ids: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Move every row's padding to the front, keeping the tokens in their order.

    ids (B, S) (right-padded, as minitf's batches are; padding anywhere works)
    -> (left-padded ids (B, S), attention_mask (B, S) bool, True on real tokens).

    Left padding puts every row's last prompt token in the same column, so the first
    generated token of every row goes into the same slot of the KV cache.
    """
    keep = ids != pad_id  # (B, S) real tokens
    order = np.argsort(keep, axis=1, kind="stable")  # (B, S) padding first, then the tokens in order
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(keep, order, axis=1)


def position_ids_from_mask(attention_mask: np.ndarray) -> np.ndarray:
    """attention_mask (B, T) 1/0 -> position_ids (B, T): a real token's position is the number of
    real tokens before it; padding gets 0 (any position would do: nothing reads it).

    Hugging Face's ``position_ids = attention_mask.cumsum(-1) - 1`` (it puts 1 on padding)."""
    keep = np.asarray(attention_mask, dtype=bool)
    return np.where(keep, np.cumsum(keep, axis=1) - 1, 0)  # (B, T)


def position_table(pos: PositionalEncoding) -> np.ndarray:
    """P (max_len, D): the learned ``W_pos`` or the fixed sinusoidal table."""
    return pos.params["W_pos"] if pos.kind == "learned" else pos.table


# ---- the input, with a position per token ---------------------------------------------------------
class DecoderOnlyInputCache(NamedTuple):
    embed: Any  # the embedding's cache (which rows of W_E were read)
    position_ids: np.ndarray  # (B or 1, T) which rows of P were added: a learned P's gradient goes back there
    drop: Any  # dropout mask


class DecoderOnly(Module):
    """Parameter names: ``tgt_embed.W_E``, ``tgt_pos.W_pos`` (learned only),
    ``decoder_layers.{l}.*`` (``self_attn``, ``ff``, ``norm1``, ``norm3``), ``decoder_norm.*``, ``W_U``."""

    def __init__(self, config: ModelConfig):
        super().__init__(np.dtype(config.dtype))
        self.config = config
        add_decoder_side(self, config, np.random.default_rng(config.seed), cross_attention=False)

    # ---- input ---------------------------------------------------------------------------------
    def embed(self, input_ids: np.ndarray, position_ids: np.ndarray):
        """input_ids (B, T), position_ids (B, T) or (1, T) -> x (B, T, D), cache.

        x = Dropout(W_E[input_ids] sqrt(D) + P[position_ids]).  Decoding calls it too, with
        the positions of the newest tokens."""
        x, c_embed = self.tgt_embed.forward(input_ids)  # (B, T, D)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        x = x + position_table(self.tgt_pos)[position_ids]  # (B, T, D) + (B or 1, T, D): row position_ids[b, t] of P
        x, c_drop = self.tgt_dropout.forward(x)
        return x, DecoderOnlyInputCache(c_embed, position_ids, c_drop)

    def embed_backward(self, dx: np.ndarray, cache: DecoderOnlyInputCache) -> None:
        """dx (B, T, D) -> accumulates into W_E (and a learned P)."""
        # forward: x = Dropout(e * sqrt(D) + P[position_ids]),  e = W_E[input_ids]
        dx = self.tgt_dropout.backward(dx, cache.drop)  # (B, T, D)
        if self.tgt_pos.kind == "learned":  # dP[position_ids[b, t]] += dx[b, t], repeated positions adding up
            scatter_add_rows(self.tgt_pos.grads["W_pos"], np.broadcast_to(cache.position_ids, dx.shape[:2]), dx)
        if self.config.scale_embeddings:
            dx = dx * math.sqrt(self.config.d_model)  # (B, T, D) de
        self.tgt_embed.backward(dx, cache.embed)  # scattered into the rows of W_E

    # ---- forward and backward ------------------------------------------------------------------
    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray | None = None):
        """input_ids (B, T), attention_mask (B, T) optional (1 real, 0 padding) -> logits (B, T, V), cache.

        With ``attention_mask``, padding is blocked as a key and skipped by the positions
        (module docstring); without it, positions are 0 .. T-1."""
        c = self.config
        ids = check_token_ids("input_ids", input_ids, c.tgt_vocab_size)
        if ids.ndim != 2:
            raise ValueError(f"input_ids: expected shape (B, T), got {ids.shape}")
        B, T = ids.shape
        if T > c.max_len:
            raise ValueError(f"input_ids: expected at most max_len={c.max_len} positions, got {T}")
        self_mask = causal_mask(T, dtype=self.dtype) if c.causal else None  # (T, T)
        if attention_mask is None:
            position_ids = np.arange(T)[None, :]  # (1, T) the same for every row
        else:
            keep = _check_attention_mask(attention_mask, (B, T))  # (B, T) bool
            position_ids = position_ids_from_mask(keep)  # (B, T)
            blocked = key_padding_mask(keep, pad_id=False, dtype=self.dtype)  # (B, 1, 1, T): where keep is False
            self_mask = blocked if self_mask is None else self_mask + blocked  # (B, 1, T, T)
        x, c_in = self.embed(ids, position_ids)  # (B, T, D)
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
        # 4. the input.  forward: x = Dropout(W_E[input_ids] sqrt(D) + P[position_ids])
        self.embed_backward(dx, cache.input)
        return dH_dec

    def activation_bytes(self, cache: DecoderCache) -> dict:
        seen: set = set()
        out = {"decoder": cache_nbytes((cache.input, cache.layers, cache.norm), seen),
               "head": cache_nbytes(cache.H_dec, seen)}
        out["total"] = sum(out.values())
        return out


def _check_attention_mask(attention_mask, shape: tuple) -> np.ndarray:
    """attention_mask as a bool array of ``shape`` (B, T); 0/1 integers or booleans accepted."""
    mask = np.asarray(attention_mask)
    check_shape("attention_mask", mask, shape, "(B, T), the shape of input_ids")
    if mask.dtype != bool:
        if not np.issubdtype(mask.dtype, np.integer) or not np.isin(mask, (0, 1)).all():
            raise ValueError(f"attention_mask: expected 1 on real tokens and 0 on padding (booleans or 0/1 "
                             f"integers), got dtype {mask.dtype} with values {np.unique(mask)[:5].tolist()}")
        mask = mask.astype(bool)
    return mask
