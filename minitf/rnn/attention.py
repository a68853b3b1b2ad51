"""Attention of an RNN decoder over the encoder states: additive (Bahdanau et al., 2015), dot
and general (Luong et al., 2015), forward and backward.

Shapes: B batch, S source length, Dr the query's width (the decoder's recurrent width), K De
the width of an encoder state (K directions of De each), A the additive width.  One query
per row: the decoder attends once per step.

    e_j = score(s, h_j)               (B, S)     one score per encoder state h_j
    a   = softmax(e + mask)           (B, S)     mask: MASK_VALUE at padded source positions
    c   = sum_j a_j h_j               (B, K De)  the context vector

    additive  e_j = v^T tanh(s W_a + h_j U_a)     W_a (Dr, A), U_a (K De, A), v (A,)
    dot       e_j = s . h_j                        no parameters; needs Dr = K De
    general   e_j = s . (h_j W_a)                  W_a (K De, Dr)   (Luong's s^T W_a h_j: his W_a is our W_a^T)

The softmax is the transformer's, :func:`minitf.attention.masked_softmax`: a padded position
gets MASK_VALUE added to its score, whose exp is exactly 0: zero weight, never NaN; a row
with no real position at all, which the model never builds, gets zero weights and a zero
context.

**Keys once per source.**  The part of a score that depends on h_j alone -- the keys
k_j = h_j U_a (additive), h_j W_a (general), h_j (dot) -- is computed once per source by
:meth:`project_keys`, as the transformer's cross-attention keys are (``decoding/cache.py``);
each decoder step adds only its query.  So the backward of a step returns the gradients of
its query, of the keys and of the values (the h_j the context averages) apart; the keys'
gradients of all steps are summed and sent back through :meth:`project_keys_backward` once.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..attention import masked_softmax
from ..checks import check_shape
from ..layers.linear import affine_backward, affine_forward
from ..layers.softmax import softmax_backward
from ..module import Module

__all__ = ["AdditiveAttention", "DotAttention", "GeneralAttention", "ATTENTIONS", "RNNAttentionCache",
           "make_attention"]


class RNNAttentionCache(NamedTuple):
    s: np.ndarray  # (B, Dr) the query, for dW_a (additive) and dkeys (dot, general)
    keys: np.ndarray  # (B, S, Dr) dot and general: for ds = de keys (additive: unused)
    values: np.ndarray  # (B, S, K De) the encoder states, for da = values dc
    a: np.ndarray  # (B, S) the attention weights: for dvalues and the softmax backward; 0 at padding
    u: np.ndarray | None  # (B, S, A) additive: tanh(s W_a + keys), for dv and tanh'; else None


class _Attention(Module):
    """Scores, softmax, context.  A subclass gives the score (and its keys)."""

    def __init__(self, dtype=np.float32):
        super().__init__(dtype)

    key_weight: str | None = None  # the parameter the keys are projected with (keys = values @ it), None: no projection

    # -- the keys, once per source -------------------------------------------------------------------
    def project_keys(self, values: np.ndarray):
        """values (B, S, K De) -> keys (B, S, *), cache: ``values @ params[key_weight]``, or the
        values themselves (dot)."""
        check_shape("values", values, (None, None, self.value_size), f"(B, S, K De={self.value_size})")
        if self.key_weight is None:
            return values, None
        return affine_forward(values, self.params[self.key_weight], None), values  # (B, S, K De) @ (K De, *)

    def project_keys_backward(self, dkeys: np.ndarray, values) -> np.ndarray:
        """dkeys (B, S, *) -> dvalues (B, S, K De); accumulates the projection's gradient."""
        if self.key_weight is None:
            return dkeys  # forward: keys = values
        # forward: keys = values @ W   (U_a additive, W_a general)
        dvalues, dW, _ = affine_backward(dkeys, values, self.params[self.key_weight])  # (B, S, K De), (K De, *)
        self.grads[self.key_weight] += dW
        return dvalues

    # -- what a subclass defines ---------------------------------------------------------------------

    def score(self, s: np.ndarray, keys: np.ndarray):
        """s (B, Dr), keys (B, S, *) -> e (B, S), u (additive's tanh, or None)"""
        raise NotImplementedError

    def score_backward(self, de: np.ndarray, cache: RNNAttentionCache):
        """de (B, S) -> (ds (B, Dr), dkeys (B, S, *))"""
        raise NotImplementedError

    # -- the shared part -------------------------------------------------------------------------
    def forward(self, s: np.ndarray, keys: np.ndarray, values: np.ndarray, mask: np.ndarray):
        """s (B, Dr), keys (B, S, *), values (B, S, K De), mask (B, S) additive -> context (B, K De), cache.

        The weights are ``cache.a`` (B, S)."""
        e, u = self.score(s, keys)  # (B, S)
        a = masked_softmax(e + mask, mask)  # (B, S); exactly 0 where the mask is MASK_VALUE, all 0 in a dead row
        context = (a[:, None, :] @ values)[:, 0]  # (B, 1, S) @ (B, S, K De) -> (B, 1, K De) -> (B, K De)
        return context, RNNAttentionCache(s, keys, values, a, u)

    def backward(self, dcontext: np.ndarray, cache: RNNAttentionCache):
        """dcontext (B, K De) -> (ds (B, Dr), dkeys (B, S, *), dvalues (B, S, K De)); accumulates
        the score's parameter gradients (the keys' projection: :meth:`project_keys_backward`)."""
        values, a = cache.values, cache.a
        # forward: c = sum_j a_j h_j
        da = (values @ dcontext[:, :, None])[:, :, 0]  # (B, S, K De) @ (B, K De, 1) -> (B, S, 1) -> (B, S)
        dvalues = a[:, :, None] * dcontext[:, None, :]  # (B, S, K De); 0 at padded positions
        # forward: a = softmax(e + mask)   (the mask is a constant)
        de = softmax_backward(da, a)  # (B, S); 0 where a = 0
        ds, dkeys = self.score_backward(de, cache)
        return ds, dkeys, dvalues


# ---- additive (Bahdanau) --------------------------------------------------------------------------
class AdditiveAttention(_Attention):
    """e_j = v^T tanh(s W_a + h_j U_a)  (Bahdanau, Cho & Bengio, 2015, appendix A.1.2).

    ``W_a`` (Dr, A), ``U_a`` (K De, A), ``v`` (A,), initialised U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    like a ``torch.nn.Linear``.  No biases, as in the paper.  The keys h_j U_a are projected once
    per source.
    """
    key_weight = "U_a"

    def __init__(self, query_size: int, value_size: int, attention_size: int, *, rng: np.random.Generator,
                 dtype=np.float32):
        super().__init__(dtype)
        self.query_size, self.value_size, self.attention_size = query_size, value_size, attention_size
        for name, fan_in, shape in (("W_a", query_size, (query_size, attention_size)),
                                    ("U_a", value_size, (value_size, attention_size)),
                                    ("v", attention_size, (attention_size,))):
            bound = 1.0 / np.sqrt(fan_in)
            self.add_param(name, rng.uniform(-bound, bound, size=shape))

    def score(self, s, keys):
        q = affine_forward(s, self.params["W_a"], None)  # (B, Dr) @ (Dr, A) -> (B, A)
        u = np.tanh(q[:, None, :] + keys)  # (B, S, A)
        return u @ self.params["v"], u  # (B, S, A) @ (A,) -> (B, S)

    def score_backward(self, de, cache):
        u, A = cache.u, self.attention_size
        # forward: e = u v
        self.grads["v"] += u.reshape(-1, A).T @ de.reshape(-1)  # (A, B*S) @ (B*S,) -> (A,)
        du = de[:, :, None] * self.params["v"]  # (B, S, A)
        # forward: u = tanh(q + keys), q = s W_a, broadcast over the S positions
        dpre = du * (1.0 - u * u)  # (B, S, A)
        dq = dpre.sum(axis=1)  # (B, A): q was added at every position
        ds, dW_a, _ = affine_backward(dq, cache.s, self.params["W_a"])  # (B, Dr), (Dr, A)
        self.grads["W_a"] += dW_a
        return ds, dpre  # dkeys = dpre


# ---- dot and general (Luong) ---------------------------------------------------------------------
class DotAttention(_Attention):
    """e_j = s . h_j  (Luong, Pham & Manning, 2015, "dot").  No parameters; Dr = K De."""

    def __init__(self, query_size: int, value_size: int, *, dtype=np.float32):
        super().__init__(dtype)
        if query_size != value_size:
            raise ValueError(f"value_size: dot attention needs encoder states as wide as the query "
                             f"(query_size={query_size}), got {value_size}; use 'general' or 'additive'")
        self.query_size, self.value_size = query_size, value_size  # the keys are the encoder states themselves

    def score(self, s, keys):
        return (keys @ s[:, :, None])[:, :, 0], None  # (B, S, Dr) @ (B, Dr, 1) -> (B, S, 1) -> (B, S)

    def score_backward(self, de, cache):
        # forward: e_j = keys_j . s
        ds = (de[:, None, :] @ cache.keys)[:, 0]  # (B, 1, S) @ (B, S, Dr) -> (B, 1, Dr) -> (B, Dr)
        dkeys = de[:, :, None] * cache.s[:, None, :]  # (B, S, Dr)
        return ds, dkeys


class GeneralAttention(DotAttention):
    """e_j = s . (h_j W_a)  (Luong, Pham & Manning, 2015, "general": s^T W_a h_j).

    ``W_a`` (K De, Dr), initialised U(-1/sqrt(K De), 1/sqrt(K De)) like a ``torch.nn.Linear``:
    the keys h_j W_a are projected once per source.
    """
    key_weight = "W_a"

    def __init__(self, query_size: int, value_size: int, *, rng: np.random.Generator, dtype=np.float32):
        _Attention.__init__(self, dtype)
        self.query_size, self.value_size = query_size, value_size
        bound = 1.0 / np.sqrt(value_size)
        self.add_param("W_a", rng.uniform(-bound, bound, size=(value_size, query_size)))


ATTENTIONS = {"additive": AdditiveAttention, "dot": DotAttention, "general": GeneralAttention}
"""The score functions, by the name ``RNNConfig.attention`` uses."""


def make_attention(kind: str, query_size: int, value_size: int, attention_size: int, *, rng: np.random.Generator,
                   dtype=np.float32):
    """The attention ``RNNConfig.attention`` names ("none": None); ``attention_size`` A is additive's alone."""
    if kind == "additive":
        return AdditiveAttention(query_size, value_size, attention_size, rng=rng, dtype=dtype)
    if kind == "general":
        return GeneralAttention(query_size, value_size, rng=rng, dtype=dtype)
    return DotAttention(query_size, value_size, dtype=dtype) if kind == "dot" else None
