"""The encoder block and the decoder block, with the layer maths of
``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` (except that minitf
has no dropout on the attention weights).

Every block is a stack of *sub-layers*, each wrapped in a residual connection and a
LayerNorm, in one of two arrangements:

    pre-LN  (norm_first=True):   y = x + Dropout(f(LayerNorm(x)))
    post-LN (norm_first=False):  y = LayerNorm(x + Dropout(f(x)))

Encoder block:  self-attention (padding mask)  -> feed-forward
Decoder block:  causal self-attention          -> cross-attention over H_enc -> feed-forward

The cross-attention sub-layer is where the decoder reads the encoder: its queries come
from the decoder stream, its keys and values from H_enc.  Its backward hands back this
block's share of dL/dH_enc.  Its attention weights can be read and reshaped from outside
through the hooks of :mod:`minitf.attention` (``cross_weights``, ``dA_cross``: the
pointer-generator's copy distribution and coverage); without them the block is unchanged.

The decoder block that trains is the block that decodes: given its :class:`LayerKV` and the
position t, the same forward runs one decoding step (Lesson 9), its self-attention writing
the new positions' keys and values into the cache and its cross-attention reading the keys
and values of H_enc computed once per example.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .attention import CrossAttentionKV, MultiHeadAttention, SelfAttentionKV
from .layers import Dropout, FeedForward, LayerNorm
from .module import Module


# ---- the residual sub-layer, pre-LN or post-LN ---------------------------------------------
class SublayerCache(NamedTuple):
    norm: Any  # LayerNorm cache
    f: Any  # cache of the wrapped function (attention or feed-forward)
    drop: Any  # residual dropout mask


def sublayer_forward(x: np.ndarray, f: Callable, norm: LayerNorm | None, drop: Dropout, norm_first: bool, *,
                     residual: bool = True):
    """x (B, T, D) -> y (B, T, D).  ``f(h) -> (out, cache)`` is the sub-layer's function.

    ``norm=None`` leaves the LayerNorm out and ``residual=False`` the residual connection:
    the arrangements Lesson 5 section 1 measures against the standard ones.
    """
    if norm_first:
        h, c_norm = norm.forward(x) if norm is not None else (x, None)  # (B, T, D)
        out, c_f = f(h)  # (B, T, D)
        out, c_drop = drop.forward(out)
        y = x + out if residual else out  # the residual stream is never normalised in place
    else:
        out, c_f = f(x)  # (B, T, D)
        out, c_drop = drop.forward(out)
        z = x + out if residual else out  # (B, T, D)
        y, c_norm = norm.forward(z) if norm is not None else (z, None)  # (B, T, D)
    return y, SublayerCache(c_norm, c_f, c_drop)


def sublayer_backward(dy: np.ndarray, cache: SublayerCache, f_backward: Callable,
                      norm: LayerNorm | None, drop: Dropout, norm_first: bool, *, residual: bool = True):
    """dy (B, T, D) -> (dx (B, T, D), extra).

    ``f_backward(dout, c_f) -> (dh, extra)``: the gradient for the sub-layer's input
    ``h`` plus anything else it produces (cross-attention: dL/dH_enc).  ``norm`` and
    ``residual`` as in the forward.
    """
    c_norm, c_f, c_drop = cache
    if norm_first:
        # forward: y = x + drop(f(norm(x)))
        dout = drop.backward(dy, c_drop)
        dh, extra = f_backward(dout, c_f)
        dbranch = norm.backward(dh, c_norm) if norm is not None else dh  # (B, T, D) the path through the branch
        dx = dy + dbranch if residual else dbranch  # + the residual path
    else:
        # forward: y = norm(z),  z = x + drop(f(x))
        dz = norm.backward(dy, c_norm) if norm is not None else dy
        dout = drop.backward(dz, c_drop)
        dh, extra = f_backward(dout, c_f)
        dx = dz + dh if residual else dh  # the residual path + the path through the branch
    return dx, extra


# ---- encoder block ------------------------------------------------------------------------
class EncoderBlockCache(NamedTuple):
    self_attn: SublayerCache
    ff: SublayerCache


class EncoderBlock(Module):
    """Bidirectional self-attention then feed-forward.  x (B, S, D) -> (B, S, D).

    ``residual=False`` and ``layer_norm=False`` take the residual connections or the
    LayerNorms out of both sub-layers (Lesson 5 section 1: the gradient by depth without
    them); the weights drawn from ``rng`` are the same either way.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = True, eps: float = 1e-5,
                 *, residual: bool = True, layer_norm: bool = True, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.norm_first, self.residual = norm_first, residual
        self.self_attn = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
        self.ff = FeedForward(d_model, d_ff, activation, dropout, rng=rng, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps, dtype=dtype) if layer_norm else None
        self.norm2 = LayerNorm(d_model, eps, dtype=dtype) if layer_norm else None
        self.dropout1 = Dropout(dropout, rng=rng, dtype=dtype)
        self.dropout2 = Dropout(dropout, rng=rng, dtype=dtype)

    def forward(self, x: np.ndarray, src_mask=None):
        """x (B, S, D), src_mask (B, 1, 1, S) key padding -> (B, S, D), cache"""
        x, c_sa = sublayer_forward(x, lambda h: self.self_attn.forward(h, h, src_mask),
                                   self.norm1, self.dropout1, self.norm_first, residual=self.residual)
        x, c_ff = sublayer_forward(x, self.ff.forward, self.norm2, self.dropout2, self.norm_first,
                                   residual=self.residual)
        return x, EncoderBlockCache(c_sa, c_ff)

    def backward(self, dy: np.ndarray, cache: EncoderBlockCache) -> np.ndarray:
        dx, _ = sublayer_backward(dy, cache.ff, _ff_backward(self.ff),
                                  self.norm2, self.dropout2, self.norm_first, residual=self.residual)
        dx, _ = sublayer_backward(dx, cache.self_attn, _self_attn_backward(self.self_attn),
                                  self.norm1, self.dropout1, self.norm_first, residual=self.residual)
        return dx


# ---- decoder block ------------------------------------------------------------------------
class LayerKV(NamedTuple):
    """One decoder block's keys and values for incremental decoding (:mod:`minitf.kv_cache`)."""
    K_self: np.ndarray  # (N, H, T_max, Dh) positions [0, t) hold the prefix; the rest is scratch
    V_self: np.ndarray  # (N, H, T_max, Dh)
    K_cross: np.ndarray | None  # (B, H, S, Dh) = split_heads(H_enc W_k + b_k), once per example; None: decoder-only
    V_cross: np.ndarray | None  # (B, H, S, Dh) = split_heads(H_enc W_v + b_v)
    # the self-attention's (W_qkv (D, 3D), b_qkv (3D,)), joined once per decoding run
    # (MultiHeadAttention.joined_qkv); None: joined at every step
    qkv: tuple | None = None

    def self_attention(self, t: int) -> SelfAttentionKV:
        """The self-attention's cache at position t."""
        return SelfAttentionKV(self.K_self, self.V_self, t, self.qkv)

    def cross_attention(self) -> CrossAttentionKV | None:
        return None if self.K_cross is None else CrossAttentionKV(self.K_cross, self.V_cross)


class DecoderBlockCache(NamedTuple):
    self_attn: SublayerCache
    cross_attn: SublayerCache | None
    ff: SublayerCache


class DecoderBlock(Module):
    """Causal self-attention, cross-attention over H_enc, feed-forward.  x (B, T, D) -> (B, T, D).

    ``cross_attention=False`` leaves the cross-attention out: that is the block of a
    decoder-only (GPT-style) model.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0,
                 activation: str = "relu", norm_first: bool = True, eps: float = 1e-5,
                 cross_attention: bool = True, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.norm_first, self.has_cross = norm_first, cross_attention
        self.self_attn = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
        if cross_attention:
            self.cross_attn = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
        self.ff = FeedForward(d_model, d_ff, activation, dropout, rng=rng, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps, dtype=dtype)
        if cross_attention:  # norm2 belongs to the cross-attention sub-layer
            self.norm2 = LayerNorm(d_model, eps, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps, dtype=dtype)
        self.dropout1 = Dropout(dropout, rng=rng, dtype=dtype)
        self.dropout2 = Dropout(dropout, rng=rng, dtype=dtype)
        self.dropout3 = Dropout(dropout, rng=rng, dtype=dtype)

    def forward(self, x: np.ndarray, h_enc: np.ndarray | None = None, self_mask=None, cross_mask=None,
                cross_weights=None, *, kv: LayerKV | None = None, t: int = 0):
        """x (B, T, D), h_enc (B, S, D), self_mask (T, T) causal, cross_mask (B, 1, 1, S) source padding
        -> (B, T, D), cache.  ``cross_weights``: None (the softmax), or the cross-attention's
        ``weights`` hook (:mod:`minitf.attention`).  The cross-attention weights are
        ``cache.cross_attn.f.attn.A`` (B, H, T, S).

        ``kv``, ``t``: a decoding step (module docstring).  x is then (N, T_new, D), the rows
        being decoded at positions t .. t+T_new-1, and ``h_enc`` may be None; the cross-attention
        weights are laid out per example, (B, H, G*T_new, S)."""
        self_kv = None if kv is None else kv.self_attention(t)
        cross_kv = None if kv is None else kv.cross_attention()
        x, c_sa = sublayer_forward(x, lambda h: self.self_attn.forward(h, h, self_mask, kv=self_kv),
                                   self.norm1, self.dropout1, self.norm_first)
        c_ca = None
        if self.has_cross:
            if h_enc is None and cross_kv is None:
                raise ValueError("h_enc: expected the encoder output (B, S, d_model) for a block with "
                                 "cross-attention, got None")
            # queries from the decoder stream, keys and values from the encoder output
            x, c_ca = sublayer_forward(
                x, lambda h: self.cross_attn.forward(h, h_enc, cross_mask, cross_weights, kv=cross_kv),
                self.norm2, self.dropout2, self.norm_first)
        x, c_ff = sublayer_forward(x, self.ff.forward, self.norm3, self.dropout3, self.norm_first)
        return x, DecoderBlockCache(c_sa, c_ca, c_ff)

    def backward(self, dy: np.ndarray, cache: DecoderBlockCache, dA_cross=None, cross_weights=None):
        """dy (B, T, D) -> (dx (B, T, D), dh_enc (B, S, D) this block's share, or None).

        ``dA_cross`` (B, H, T, S): the gradient on the cross-attention weights from a reader
        outside the block; ``cross_weights``: the forward's.  None and None: the plain block."""
        dx, _ = sublayer_backward(dy, cache.ff, _ff_backward(self.ff),
                                  self.norm3, self.dropout3, self.norm_first)
        dh_enc = None
        if self.has_cross:
            # cross-attention hands back two gradients: one for its queries (the decoder
            # stream, dx) and one for its keys and values (H_enc, dh_enc)
            cross_backward = self.cross_attn.backward
            if dA_cross is not None or cross_weights is not None:  # the pointer-generator's hooks
                cross_backward = lambda dout, c: self.cross_attn.backward(dout, c, dA_cross, cross_weights)  # noqa: E731
            dx, dh_enc = sublayer_backward(dx, cache.cross_attn, cross_backward,
                                           self.norm2, self.dropout2, self.norm_first)
        dx, _ = sublayer_backward(dx, cache.self_attn, _self_attn_backward(self.self_attn),
                                  self.norm1, self.dropout1, self.norm_first)
        return dx, dh_enc


# ---- how each sub-layer's backward plugs into sublayer_backward ---------------------------------
def _self_attn_backward(attn: MultiHeadAttention):
    def f_backward(dout, c):
        dx_q, dx_kv = attn.backward(dout, c)
        return dx_q + dx_kv, None  # the same h fed queries, keys and values

    return f_backward


def _ff_backward(ff: FeedForward):
    return lambda dout, c: (ff.backward(dout, c), None)
