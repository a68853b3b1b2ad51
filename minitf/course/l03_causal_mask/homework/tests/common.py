"""What every task's tests of homework 3 share: attention problems under each kind of mask
(with fully masked rows among them), minitf's own answers to them, and the check that a
student's function left its inputs alone.

The problems are drawn from the run's ``homework_seed`` (the public seed, and for each test's ``[secret]`` run the instructor folder's secret
one, :mod:`minitf.grading.problems`), so their answers cannot be recorded beforehand."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minitf.attention import scaled_dot_product_attention
from minitf.grading.asserts import fail, returned_arg, same_array
from minitf.grading.problems import shapes
from minitf.masks import MASK_VALUE, causal_mask, key_padding_mask

PAD = 0  # minitf's <pad>

MASK_KINDS = ("none", "causal", "padding", "both", "decoder", "shared")
"""The masks attention is tested under:

* ``"none"``     no mask;
* ``"causal"``   (T, S): T new queries after S - T cached positions (``causal_mask(T, S, offset=S-T)``);
* ``"padding"``  (B, 1, 1, S): right-padded keys, one example all padding (its every query fully masked);
* ``"both"``     (B, 1, T, T): causal + key padding on a left-padded batch: the leading padded queries
  of a row have no key left (fully masked), and cells blocked twice hold -2e9;
* ``"decoder"``  (B, 1, T, T): causal + key padding on a right-padded batch (a decoder's self-attention
  in training): no row is fully masked -- a padded query at a row's end still sees the row's real
  keys -- but the rows of the real queries hold -2e9 where a future key is padding too;
* ``"shared"``   (T, T): causal + the key padding of one left-padded sequence, shared by the whole batch:
  a mask without a batch axis whose leading rows are fully masked."""


class AttentionProblem(NamedTuple):
    Q: np.ndarray  # (B, H, T, Dh)
    K: np.ndarray  # (B, H, S, Dh)
    V: np.ndarray  # (B, H, S, Dh)
    mask: np.ndarray | None  # broadcastable to (B, H, T, S)
    kind: str
    blocked: np.ndarray  # (B, H, T, S) bool: the mask blocks query t from key s
    dead: np.ndarray  # (B, H, T) bool: every key of the row is blocked


def problem_sizes(seed) -> dict:
    """The sizes of :func:`attention_problem`: its defaults on the public seed, drawn on the secret
    one (B >= 2: a full and an empty row; T >= 2: a row with padding; S >= T: the causal offset)."""
    (B, H, T, S, Dh), = shapes(seed, [(3, 2, 4, 6, 3)], B=(2, 5), H=(1, 3), T=(2, 6), S=(2, 8), Dh=(1, 5),
                               rule=lambda B, H, T, S, Dh: S >= T)
    return dict(B=B, H=H, T=T, S=S, Dh=Dh)


def attention_problem(seed: int, kind: str, dtype=np.float64, B: int = 3, H: int = 2, T: int = 4, S: int = 6,
                      Dh: int = 3) -> AttentionProblem:
    """Random Q, K, V of ``dtype`` and a mask of ``kind`` (see :data:`MASK_KINDS`)."""
    rng = np.random.default_rng(seed)
    if kind in ("both", "decoder", "shared"):
        S = T  # self-attention
    if kind == "none":
        mask = None
    elif kind == "causal":
        mask = causal_mask(T, S, offset=S - T, dtype=dtype)  # (T, S)
    elif kind == "padding":
        lengths = rng.integers(1, S + 1, size=B)
        lengths[0], lengths[-1] = S, 0  # one full example, one all padding
        mask = key_padding_mask(lengths=lengths, max_len=S, dtype=dtype)  # (B, 1, 1, S)
    elif kind == "both":
        ids = rng.integers(4, 9, size=(B, T))
        n_pad = rng.integers(1, T, size=B)
        n_pad[0] = 0  # one example without padding
        ids[np.arange(T)[None, :] < n_pad[:, None]] = PAD  # left padding
        mask = causal_mask(T, dtype=dtype) + key_padding_mask(ids, PAD, dtype=dtype)  # (B, 1, T, T)
    elif kind == "decoder":
        lengths = rng.integers(1, T + 1, size=B)
        lengths[0], lengths[-1] = T, rng.integers(1, T)  # one example unpadded, one padded
        mask = causal_mask(T, dtype=dtype) + key_padding_mask(lengths=lengths, max_len=T, dtype=dtype)  # (B, 1, T, T)
    elif kind == "shared":
        ids = rng.integers(4, 9, size=(1, T))
        ids[0, :int(rng.integers(1, T))] = PAD  # one left-padded sequence: its leading queries see no key
        mask = causal_mask(T, dtype=dtype) + key_padding_mask(ids, PAD, dtype=dtype)[0, 0]  # (T, T)
    else:
        raise ValueError(f"kind: expected one of {MASK_KINDS}, got {kind!r}")
    Q = rng.normal(size=(B, H, T, Dh)).astype(dtype)
    K = rng.normal(size=(B, H, S, Dh)).astype(dtype)
    V = rng.normal(size=(B, H, S, Dh)).astype(dtype)
    blocked = np.zeros((B, H, T, S), bool) if mask is None else np.broadcast_to(mask <= MASK_VALUE / 2,
                                                                               (B, H, T, S)).copy()
    return AttentionProblem(Q, K, V, mask, kind, blocked, blocked.all(axis=-1))


def minitf_attention(p: AttentionProblem):
    """minitf's ``(out, A)`` for the problem."""
    out, cache = scaled_dot_product_attention(p.Q, p.K, p.V, p.mask)
    return out, cache.A


def plain_softmax(z: np.ndarray) -> np.ndarray:
    """A stable softmax over the last axis, in float64 (for building what a mistake computes)."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def scores_of(p: AttentionProblem, scale: bool = True) -> np.ndarray:
    """Q K^T / sqrt(Dh) (B, H, T, S) in float64, without the mask."""
    s = p.Q.astype(np.float64) @ p.K.astype(np.float64).swapaxes(-1, -2)
    return s / np.sqrt(p.Q.shape[-1]) if scale else s


def first_index(flags: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.argwhere(flags)[0])


def expect_inputs_unchanged(fn, name: str, sent: list, hint: str = "work on new arrays") -> None:
    """Fail if the student's ``fn`` changed any of its positional arguments in place
    (``sent``: ``[(argument name, a copy of what was sent)]``, in order; None: not checked)."""
    for i, (arg, before) in enumerate(sent):
        if before is None:
            continue
        if not same_array(returned_arg(fn, i), before):
            fail(f"{name} changed its input {arg} in place; the caller still needs it: {hint}")
