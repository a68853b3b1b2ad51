"""Pieces every transformer model shares: the input (token embedding, scale, position,
dropout), the output head (W_U, optionally tied to the embedding), and counting the bytes a
forward pass keeps for its backward.  The stacks of blocks are :mod:`minitf.models.stacks`."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..config import ModelConfig
from ..layers import Dropout, Embedding, PositionalEncoding
from ..layers.linear import affine_backward


# ---- the embeddings' initial scale ----------------------------------------------------------
def embedding_std(c: ModelConfig) -> float:
    """The embeddings' initial standard deviation: 1/sqrt(D) when they are scaled by sqrt(D)
    (so that sqrt(D) * N(0, 1/D) = N(0, 1)), else 1."""
    return c.d_model ** -0.5 if c.scale_embeddings else 1.0


# ---- input: x = Dropout(W_E[ids] * sqrt(D) + P[t]) ---------------------------------------------
class InputCache(NamedTuple):
    embed: Any
    pos: Any
    drop: Any


def input_forward(ids: np.ndarray, embed: Embedding, pos: PositionalEncoding, drop: Dropout,
                  scale: bool, offset: int = 0):
    """ids (B, T) -> x (B, T, D)"""
    x, c_embed = embed.forward(ids)  # (B, T, D)
    if scale:
        x = x * math.sqrt(embed.d_model)
    x, c_pos = pos.forward(x, offset)  # (B, T, D)
    x, c_drop = drop.forward(x)
    return x, InputCache(c_embed, c_pos, c_drop)


def input_backward(dx: np.ndarray, cache: InputCache, embed: Embedding, pos: PositionalEncoding,
                   drop: Dropout, scale: bool) -> None:
    """dx (B, T, D) -> accumulates into the embedding (and learned positions)."""
    # forward: x = Dropout(e * sqrt(D) + P[offset:offset+T]),  e = W_E[ids]
    dx = drop.backward(dx, cache.drop)  # (B, T, D)
    dx = pos.backward(dx, cache.pos)  # (B, T, D); a learned P gets its gradient here
    if scale:
        dx = dx * math.sqrt(embed.d_model)  # (B, T, D) de
    embed.backward(dx, cache.embed)  # scattered into the rows of W_E


# ---- output head: logits = H W_U ------------------------------------------------------------
def head_weight(model) -> np.ndarray:
    """W_U (D, V): its own parameter, or the target embedding's W_E^T when tied (a view)."""
    return model.tgt_embed.params["W_E"].T if model.config.tie_output else model.params["W_U"]  # (D, V)


def head_backward(dlogits: np.ndarray, h: np.ndarray, model) -> np.ndarray:
    """Undo ``logits = h @ W_U``: dlogits (B, T, V), h (B, T, D) -> dh (B, T, D).

    dW_U = h^T dlogits is added to ``W_U``'s gradient, or, when tied, transposed into
    the embedding's gradient (one table, two uses, two contributions that add up).
    """
    dh, dW_U, _ = affine_backward(dlogits, h, head_weight(model))  # dh (B, T, D), dW_U (D, V)
    if model.config.tie_output:
        model.tgt_embed.grads["W_E"] += dW_U.T  # (V, D)
    else:
        model.grads["W_U"] += dW_U
    return dh


# ---- memory: what the forward pass keeps for backward ----------------------------------------------
def cache_nbytes(cache, seen: set | None = None) -> int:
    """Bytes of the arrays reachable from ``cache`` (NamedTuples, tuples, lists, dicts).

    An array counts its own bytes (a slice of a big array counts the slice, not the big
    array); the same data reached twice (the heads split from a projection, as a view
    and as the projection itself) counts once."""
    seen = set() if seen is None else seen
    if isinstance(cache, np.ndarray):
        root = cache
        while isinstance(root.base, np.ndarray):
            root = root.base
        key = (id(root), cache.__array_interface__["data"][0], cache.nbytes)  # which buffer, where, how much
        if key in seen:
            return 0
        seen.add(key)
        return cache.nbytes
    if isinstance(cache, dict):
        cache = list(cache.values())
    if isinstance(cache, (tuple, list)):
        return sum(cache_nbytes(c, seen) for c in cache)
    return 0
