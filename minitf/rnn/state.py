"""What flows between the parts of the RNN encoder-decoder (:class:`minitf.models.RNNSeq2Seq`):
the encoder's memory, the decoder's state between steps, one step's share of the memory's
gradient, free-running decoding's state, and the model's caches.

Widths (:mod:`minitf.rnn.config`): Dr the decoder's recurrent width, De the encoder's per
direction, K directions, so an encoder state is K De wide; B batch, S source length,
N = B * G decoding rows.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .cells import map_state

__all__ = ["EncoderMemory", "DecoderState", "MemoryShare", "RNNDecodingState", "zeros_like_state", "StepCache",
           "EncoderCache", "DecoderCache", "RNNSeq2SeqCache", "RNNSeq2SeqGrads"]


class EncoderMemory(NamedTuple):
    """What the decoder reads of the source: computed once per example."""
    states: np.ndarray  # (B, S, K De) H_enc, position j's state (source order, even when read reversed)
    mask: np.ndarray  # (B, S) additive: 0 at real positions, MASK_VALUE at padding
    keys: np.ndarray | None  # (B, S, *) the attention's keys, projected once; None without attention
    conditioning: Any  # (B, K De) the top layer's final h, directions concatenated; LSTMState(h, c) for the LSTM

    def repeat_rows(self, G: int) -> "EncoderMemory":
        """Every example's memory repeated for its G decoding rows: (B, ...) -> (N, ...), row n reads example n // G."""
        return EncoderMemory(*(None if m is None else map_state(lambda a: np.repeat(a, G, axis=0), m) for m in self))


class DecoderState(NamedTuple):
    """The decoder's state between steps (its gradient has the same structure)."""
    layers: tuple  # L_dec states, bottom first: h (B, Dr), or LSTMState(h, c) for the LSTM
    feed: np.ndarray | None  # (B, Dr) h~_{t-1}, fed to the next input (Luong's input feeding); else None


def zeros_like_state(state: DecoderState) -> DecoderState:
    """The all-zero gradient of ``state``: what reaches the state after the last step."""
    return DecoderState(tuple(map_state(np.zeros_like, s) for s in state.layers),
                        None if state.feed is None else np.zeros_like(state.feed))


class MemoryShare(NamedTuple):
    """One decoder step's share of the gradient of the memory (None: the step did not read it)."""
    dstates: np.ndarray | None  # (B, S, K De) through the attention's values
    dkeys: np.ndarray | None  # (B, S, *) through the attention's scores
    dconditioning: np.ndarray | None  # (B, K De) through Cho's "concat" input


class RNNDecodingState(NamedTuple):
    """Free-running decoding's state for N = B * G rows (G per example, rows b*G .. b*G+G-1 for example b)."""
    state: DecoderState  # (N, ...)
    memory: EncoderMemory  # (N, ...) each example's memory repeated for its G rows
    group_size: int  # G
    length: int  # tokens fed so far

    @property
    def batch_rows(self) -> int:
        """N, the rows decoded side by side."""
        return self.memory.mask.shape[0]

    def reorder(self, beam_idx: np.ndarray) -> "RNNDecodingState":
        """Row n continues row ``beam_idx[n]`` (beam search).  The memory needs no reordering: a
        beam stays within its example's G rows, which share one memory."""
        layers = tuple(map_state(lambda a: a[beam_idx], s) for s in self.state.layers)  # (N, Dr) each
        feed = None if self.state.feed is None else self.state.feed[beam_idx]  # (N, Dr)
        return self._replace(state=DecoderState(layers, feed))


# ---- the model's caches (what its backward reads) and what backward hands back ----------------------------
class StepCache(NamedTuple):
    embed: Any  # the target embedding's cache (the ids fed)
    inputs: Any  # the feeding scheme's cache before the cells (Bahdanau: the attention's), or None
    cells: list  # one cell cache per decoder layer
    readout: Any  # the feeding scheme's cache after the cells (Luong: attention, [c_t; h_t], h~_t), or None
    o: np.ndarray  # (B, Dr) what the head read, for dW_U

    @property
    def attention(self):
        """The attention's cache (its weights: ``.a``), on whichever side of the cells the scheme
        attended (:mod:`minitf.rnn.feeding`); None without attention."""
        return self.inputs if self.readout is None else self.readout.attention


class EncoderCache(NamedTuple):
    embed: Any
    rnn: Any  # the Recurrent layer's cache
    order: np.ndarray | None  # (B, S) reversal_index when the source was read reversed, else None
    keys: Any  # the keys' projection's cache


class DecoderCache(NamedTuple):
    init: Any  # the conditioning scheme's initial-state cache (the bridge's, or None)
    steps: list  # T StepCaches
    final: DecoderState  # the state after the last step (its shapes seed the backward)
    fed: np.ndarray  # (B, T) the token fed at each step (gold, or the model's own under scheduled sampling)
    gold: np.ndarray  # (B, T) bool: True where the gold token was fed


class RNNSeq2SeqCache(NamedTuple):
    encoder: EncoderCache
    decoder: DecoderCache
    memory: EncoderMemory


class RNNSeq2SeqGrads(NamedTuple):
    """What ``backward`` hands back besides the parameter gradients (for inspection: Lesson 1)."""
    dH_enc: np.ndarray  # (B, S, K De) dL/dH_enc, the sum of every step's attention share (0 without attention)
    dconditioning: Any  # (B, K De) dL/dh_enc through "init" and "concat" (LSTMState for the LSTM), or None
    dsrc_embeddings: np.ndarray  # (B, S, E) dL/d(source embedding), source order: what BPTT brings to each token
