"""Scaled dot-product attention and multi-head attention, forward and backward.

Shapes: T is the query length and S the key/value length (in cross-attention, the
target and the source); the other letters as everywhere (see :mod:`minitf`).

Scaled dot-product attention (Vaswani et al., 2017):
    scores = Q K^T / sqrt(Dh) + mask      (B, H, T, S)
    A      = softmax(scores)              (B, H, T, S)   over the keys
    out    = A V                          (B, H, T, Dh)

Multi-head attention projects queries from ``x_q`` and keys/values from ``x_kv``:
self-attention is ``x_q is x_kv``; cross-attention takes ``x_q`` = decoder states and
``x_kv`` = H_enc.  Its backward returns the two input gradients *separately*, so the
caller sees exactly how much of the gradient flows into the encoder through K and V.

Two hooks serve a model that reads the attention weights A themselves (the
pointer-generator, :mod:`minitf.models.pointer_generator`, copies with them); both
default to None, the standard attention:

* ``weights``, in the forward and the backward: another map from scores to weights than
  the softmax, an object with ``forward(scores, mask) -> A`` and ``backward(dA, A) ->
  dscores`` (like the softmax's, its backward needs only its output; coverage adds w_c c_t
  to the scores, one query after the other, and c_t is a sum of earlier rows of A);
* ``dA_extra``, in the backward: the gradient of the loss through whatever else read A,
  added to the gradient through ``out = A V`` before the softmax backward.

**Decoding one step at a time** (Lesson 9), the same forward reads its keys and values from a
cache (``kv``) instead of projecting them all: a causal self-attention's
:class:`SelfAttentionKV` (the new positions' keys and values are written into preallocated
buffers, then the queries attend over every position so far) or a cross-attention's
:class:`CrossAttentionKV` (K, V of H_enc, computed once per example).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .checks import check_shape
from .layers.linear import affine_backward, affine_forward
from .layers.softmax import softmax, softmax_backward
from .masks import MASK_VALUE
from .module import Module


# ---- scaled dot-product attention -----------------------------------------------------
class AttentionCache(NamedTuple):
    Q: np.ndarray  # (B, H, T, Dh)  for dK = dscores^T Q
    K: np.ndarray  # (B, H, S, Dh)  for dQ = dscores K
    V: np.ndarray  # (B, H, S, Dh)  for dA = dout V^T
    A: np.ndarray  # (B, H, T, S)   attention weights, for dV and the softmax backward


def check_attention_mask(mask: np.ndarray, name: str = "mask") -> None:
    """An additive float mask: finite values <= 0, 0 = attend, MASK_VALUE = blocked (build one with
    :mod:`minitf.masks`)."""
    if mask.dtype.kind != "f":
        raise TypeError(f"{name}: expected an additive float mask (0 = attend, MASK_VALUE = blocked), "
                        f"got dtype {mask.dtype}; build one with minitf.masks")
    if not mask.min() > -np.inf:  # -inf, or nan (every comparison with nan is False)
        raise ValueError(f"{name}: expected finite values (0 or MASK_VALUE), got -inf or nan; -inf turns a "
                         "fully masked row into nan; build one with minitf.masks")
    if not mask.max() <= 0:
        raise ValueError(f"{name}: expected values <= 0 (0 = attend, MASK_VALUE = blocked), got {mask.max()}; a 1/0 "
                         f"'keep' mask (Hugging Face's attention_mask) must be turned into an additive one: "
                         f"minitf.masks.key_padding_mask")


def _check_attention_args(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask) -> None:
    """K (B, H, S, Dh) with Q's B, H and Dh; V shaped like K; an additive float mask with
    values in [MASK_VALUE, 0] whose shape broadcasts to the scores (B, H, T, S).

    This runs on every attention call with ``check_args=True`` (a decoding step checks its masks
    once instead), so the common case is kept to a few comparisons."""
    if not (K.shape[:-2] == Q.shape[:-2] and K.shape[-1:] == Q.shape[-1:] and V.shape == K.shape):
        check_shape("K", K, Q.shape[:-2] + (None, Q.shape[-1]), "(B, H, S, Dh) with Q's B, H and Dh")
        check_shape("V", V, K.shape, "(B, H, S, Dh), the shape of K")
    if mask is None:
        return
    check_attention_mask(mask)
    scores_shape = Q.shape[:-1] + K.shape[-2:-1]  # (B, H, T, S)
    if mask.ndim > len(scores_shape) or any(m not in (1, n) for m, n in zip(mask.shape[::-1], scores_shape[::-1])):
        raise ValueError(f"mask: expected a shape that broadcasts to the scores (B, H, T, S) = {scores_shape}, "
                         f"e.g. (T, S) or (B, 1, 1, S); got {mask.shape}")


def masked_softmax(scores: np.ndarray, mask=None) -> np.ndarray:
    """scores (..., S) -> A = softmax(scores) over the keys (..., S); a query whose every key
    is masked gets all-zero weights, hence a zero output and a zero gradient, instead of what
    the softmax alone would give it: the additive mask shifts every score of that row by about
    the same amount, which the softmax ignores, so the row would weigh the very keys it must not
    see.  ``mask`` (broadcastable to scores) is already in them."""
    A = softmax(scores)  # (..., S)
    if mask is not None:
        row_alive = mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2  # (..., 1) any key allowed?
        if not row_alive.all():
            A *= row_alive  # fully-masked rows -> zero weights
    return A


def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None, weights=None, *,
                                 check_args: bool = True):
    """Q (B, H, T, Dh), K and V (B, H, S, Dh), mask broadcastable to (B, H, T, S)
    -> out (B, H, T, Dh), cache.

    ``mask`` is additive: float values in [MASK_VALUE, 0], 0 = attend (build one with
    :mod:`minitf.masks`).

    A query whose every key is masked gets all-zero weights, hence a zero output and a
    zero gradient, instead of the weights the softmax alone would give it, which mean
    nothing: uniform in float32 (a score plus MASK_VALUE rounds to MASK_VALUE) and, in
    float64, in effect the unmasked softmax of the scores.

    ``weights``: None (the softmax), or another map from scores to weights (module
    docstring: the pointer-generator's coverage).

    ``check_args=False`` skips the argument checks, for a caller that built Q, K, V and the
    mask itself and checked what it was given at its own boundary: a decoding step, which
    checks its cache's masks once per step, not once per attention.
    """
    if check_args:
        mask = None if mask is None else np.asarray(mask)
        _check_attention_args(Q, K, V, mask)
    Dh = Q.shape[-1]
    scores = Q @ K.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    scores *= 1.0 / math.sqrt(Dh)
    if mask is not None:
        scores += mask  # (T, S) or (B, 1, 1, S), broadcast: blocked keys get MASK_VALUE
    A = masked_softmax(scores, mask) if weights is None else weights.forward(scores, mask)  # (B, H, T, S)
    out = A @ V  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    return out, AttentionCache(Q, K, V, A)


class AttentionGrads(NamedTuple):
    """What the attention backward computes, every line of it by name (Lesson 2 section 4 and
    Lesson 3 section 4 print the intermediates)."""
    dQ: np.ndarray  # (B, H, T, Dh)
    dK: np.ndarray  # (B, H, S, Dh)
    dV: np.ndarray  # (B, H, S, Dh)
    dA: np.ndarray  # (B, H, T, S) dL/dA, the weights' gradient (through A V, plus dA_extra)
    dscores: np.ndarray  # (B, H, T, S) dL/dscores, the softmax's input Q K^T / sqrt(Dh) + mask (so also dL/dmask)


def scaled_dot_product_attention_backward(dout: np.ndarray, cache: AttentionCache, dA_extra=None,
                                          weights=None) -> AttentionGrads:
    """dout (B, H, T, Dh) -> :class:`AttentionGrads`: dQ, dK, dV shaped like Q, K, V, and the
    intermediates dA and dscores.

    ``dA_extra`` (B, H, T, S), optional: the gradient on the weights from another reader of
    A; ``weights``: the forward's (module docstring).
    """
    Q, K, V, A = cache
    scale = 1.0 / math.sqrt(Q.shape[-1])
    # forward: out = A @ V
    dA = dout @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    dV = A.swapaxes(-1, -2) @ dout  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    if dA_extra is not None:
        dA = dA + dA_extra  # (B, H, T, S) A was read twice: by A V and by the caller
    # forward: A = softmax(scores)   (a zeroed row of A gives a zero row here, as it should)
    if weights is None:
        dscores = softmax_backward(dA, A)  # (B, H, T, S)
    else:
        dscores = weights.backward(dA, A)  # (B, H, T, S)
    # forward: scores = Q @ K^T * scale + mask     (the mask is a constant)
    dQK = dscores * scale  # (B, H, T, S) the gradient of Q @ K^T
    dQ = dQK @ K  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = dQK.swapaxes(-1, -2) @ Q  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    return AttentionGrads(dQ, dK, dV, dA, dscores)


# ---- heads -----------------------------------------------------------------------------
def split_heads(x: np.ndarray, H: int) -> np.ndarray:
    """(B, T, D) -> (B, H, T, Dh), a view (no copy)."""
    B, T, D = x.shape
    return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, T, H, Dh) -> (B, H, T, Dh)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, Dh) -> (B, T, D), the inverse of :func:`split_heads` (one copy)."""
    B, H, T, Dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * Dh)  # (B, T, H, Dh) -> (B, T, D)


# ---- keys and values kept between decoding steps (Lesson 9) ----------------------------------
class SelfAttentionKV(NamedTuple):
    """A causal self-attention's keys and values of the positions decoded so far, at one step.

    The buffers are preallocated to the capacity T_max and written in place, so a step costs
    the same whatever t (up to the attention over the prefix)."""
    K: np.ndarray  # (N, H, T_max, Dh) positions [0, t) hold the prefix; the rest is scratch
    V: np.ndarray  # (N, H, T_max, Dh)
    t: int  # positions already held: this step writes its new ones at t, t+1, ...
    qkv: tuple | None = None  # (W_qkv (D, 3D), b_qkv (3D,)) joined once per decoding run; None: at every step

    def queries_keys_values(self, attn: "MultiHeadAttention", x_q: np.ndarray, x_kv: np.ndarray):
        """x_q = x_kv (N, T_new, D) -> Q (N, H, T_new, Dh), and K, V (N, H, t+T_new, Dh): the new
        positions' keys and values written into the buffers, then read with the prefix (views)."""
        T_new, t = x_q.shape[1], self.t
        W_qkv, b_qkv = attn.joined_qkv() if self.qkv is None else self.qkv  # (D, 3D), (3D,)
        Q, K_new, V_new = attn.project_qkv(x_q, W_qkv, b_qkv)  # (N, H, T_new, Dh) each
        self.K[:, :, t:t + T_new] = K_new  # in place: no reallocation, no concatenate
        self.V[:, :, t:t + T_new] = V_new
        return Q, self.K[:, :, :t + T_new], self.V[:, :, :t + T_new]  # the filled part


class CrossAttentionKV(NamedTuple):
    """A cross-attention's keys and values of H_enc, computed once per example: the G rows of
    an example (beams, samples) share them, never copied."""
    K: np.ndarray  # (B, H, S, Dh) = split_heads(H_enc W_k + b_k)
    V: np.ndarray  # (B, H, S, Dh) = split_heads(H_enc W_v + b_v)

    def queries_keys_values(self, attn: "MultiHeadAttention", x_q: np.ndarray, x_kv=None):
        """x_q (N, T_new, D), N = B * G -> Q (B, H, G*T_new, Dh), and the cached K, V.

        Cross-attention has no causal mask, so every query is independent: the G rows of
        example b are simply G * T_new queries against example b's keys, and reshaping
        (N, T_new, D) -> (B, G*T_new, D) lets them share one (B, H, S, Dh) copy of K and V."""
        N, T_new, D = x_q.shape
        B = self.K.shape[0]
        Q = attn.project_q(x_q.reshape(B, (N // B) * T_new, D))  # (B, H, G*T_new, Dh) an example's rows are contiguous
        return Q, self.K, self.V


class MultiHeadAttentionCache(NamedTuple):
    x_q: np.ndarray  # (B, T, D) for dW_q
    x_kv: np.ndarray  # (B, S, D) for dW_k, dW_v (the same array as x_q in self-attention)
    attn: AttentionCache
    o: np.ndarray  # (B, T, D) merged heads, for dW_o


class MultiHeadAttention(Module):
    """Multi-head attention with parameters named as in the paper:

        q = x_q W_q + b_q,  k = x_kv W_k + b_k,  v = x_kv W_v + b_v      (B, *, D)
        head_h = Attention(q_h, k_h, v_h)                                 (B, T, Dh) each
        y = concat(head_1 .. head_H) W_o + b_o                            (B, T, D)

    All heads are computed at once by reshaping D into (H, Dh): there is no loop.
    ``W_*`` are (D, D) in the ``x @ W`` layout; PyTorch's ``in_proj_weight`` is
    ``[W_q^T; W_k^T; W_v^T]`` and ``out_proj.weight`` is ``W_o^T``.
    """

    def __init__(self, d_model: int, n_heads: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        if d_model % n_heads != 0:
            raise ValueError(
                f"n_heads: expected a divisor of d_model={d_model}, got n_heads={n_heads} "
                f"({d_model} / {n_heads} is not an integer)")
        self.d_model, self.n_heads = d_model, n_heads
        # Xavier-uniform for the projections, zero biases: torch.nn.MultiheadAttention's init.
        bound = math.sqrt(6.0 / (d_model + d_model))
        for name in ("W_q", "W_k", "W_v", "W_o"):
            self.add_param(name, rng.uniform(-bound, bound, size=(d_model, d_model)))
        for name in ("b_q", "b_k", "b_v", "b_o"):
            self.add_param(name, np.zeros(d_model))

    # The three projections are separate methods so that decoding can compute K, V from
    # H_enc once and reuse them (Lesson 9).
    def project_q(self, x_q: np.ndarray) -> np.ndarray:
        """x_q (B, T, D) -> Q (B, H, T, Dh)"""
        return split_heads(affine_forward(x_q, self.params["W_q"], self.params["b_q"]), self.n_heads)

    def project_kv(self, x_kv: np.ndarray):
        """x_kv (B, S, D) -> K, V (B, H, S, Dh)"""
        p = self.params
        K = split_heads(affine_forward(x_kv, p["W_k"], p["b_k"]), self.n_heads)
        V = split_heads(affine_forward(x_kv, p["W_v"], p["b_v"]), self.n_heads)
        return K, V

    def joined_qkv(self):
        """The three projections as one: W_qkv = [W_q W_k W_v] (D, 3D) and b_qkv = [b_q b_k b_v]
        (3D,), as torch stores ``in_proj_weight`` (transposed).  A copy, valid while the weights
        stay as they are: decoding joins them once per run, as it computes the cross K, V once."""
        p = self.params
        W_qkv = np.concatenate([p["W_q"], p["W_k"], p["W_v"]], axis=1)  # (D, 3D)
        b_qkv = np.concatenate([p["b_q"], p["b_k"], p["b_v"]])  # (3D,)
        return W_qkv, b_qkv

    def project_qkv(self, x: np.ndarray, W_qkv: np.ndarray, b_qkv: np.ndarray):
        """x (B, T, D) -> Q, K, V (B, H, T, Dh): self-attention's three projections in one matrix
        product against :meth:`joined_qkv`'s weights.  On the few rows of a decoding step, one
        product of three times the width costs about what each of the three would."""
        B, T, D = x.shape
        H = self.n_heads
        qkv = affine_forward(x, W_qkv, b_qkv)  # (B, T, D) @ (D, 3D) -> (B, T, 3D)
        # split_heads for the three at once, views: (B, T, 3D) -> (B, T, 3, H, Dh) -> (3, B, H, T, Dh)
        Q, K, V = qkv.reshape(B, T, 3, H, D // H).transpose(2, 0, 3, 1, 4)
        return Q, K, V

    def forward(self, x_q: np.ndarray, x_kv: np.ndarray | None, mask=None, weights=None, *, kv=None):
        """x_q (B, T, D), x_kv (B, S, D), mask broadcastable to (B, H, T, S) -> y (B, T, D), cache.

        ``weights``: None, or the hook of the module docstring.  ``kv``: None (every key and
        value projected from ``x_kv``), or a decoding step's :class:`SelfAttentionKV` or
        :class:`CrossAttentionKV` (``x_kv`` unused), whose boundary (``decode_step``) checked
        the cache and the masks."""
        if kv is None:
            D = self.d_model
            check_shape("x_q", x_q, (None, None, D), f"(B, T, d_model={D})")
            check_shape("x_kv", x_kv, (x_q.shape[0], None, D), f"(B={x_q.shape[0]}, S, d_model={D})")
            Q = self.project_q(x_q)  # (B, H, T, Dh)
            K, V = self.project_kv(x_kv)  # (B, H, S, Dh) each
        else:
            Q, K, V = kv.queries_keys_values(self, x_q, x_kv)  # from the cache (a cross-attention's rows grouped)
        heads, attn_cache = scaled_dot_product_attention(Q, K, V, mask, weights, check_args=kv is None)
        o = merge_heads(heads)  # (B, T, D)
        y = affine_forward(o, self.params["W_o"], self.params["b_o"])  # (B, T, D)
        return y.reshape(x_q.shape), MultiHeadAttentionCache(x_q, x_kv, attn_cache, o)  # (a step's rows ungrouped)

    def backward(self, dy: np.ndarray, cache: MultiHeadAttentionCache, dA_extra=None, weights=None):
        """dy (B, T, D) -> (dx_q (B, T, D), dx_kv (B, S, D)).

        For self-attention the caller adds the two: the input fed both roles.  ``dA_extra``
        (B, H, T, S) and ``weights``: None, or the hooks of the module docstring.
        """
        p, g, H = self.params, self.grads, self.n_heads
        # forward: y = o @ W_o + b_o
        do, dW_o, db_o = affine_backward(dy, cache.o, p["W_o"])  # do (B, T, D)
        g["W_o"] += dW_o
        g["b_o"] += db_o
        # forward: o = merge_heads(heads)
        dheads = split_heads(do, H)  # (B, H, T, Dh)
        dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(dheads, cache.attn, dA_extra, weights)
        # forward: Q = split_heads(x_q @ W_q + b_q), and likewise K, V from x_kv
        dx_q, dW_q, db_q = affine_backward(merge_heads(dQ), cache.x_q, p["W_q"])  # (B, T, D)
        dx_k, dW_k, db_k = affine_backward(merge_heads(dK), cache.x_kv, p["W_k"])  # (B, S, D)
        dx_v, dW_v, db_v = affine_backward(merge_heads(dV), cache.x_kv, p["W_v"])  # (B, S, D)
        g["W_q"] += dW_q
        g["b_q"] += db_q
        g["W_k"] += dW_k
        g["b_k"] += db_k
        g["W_v"] += dW_v
        g["b_v"] += db_v
        dx_kv = dx_k + dx_v  # keys and values were both computed from x_kv
        return dx_q, dx_kv
