"""A cell run over a sequence, and backpropagation through time (BPTT).

Shapes: B batch, T steps, Dx input width, Dr the recurrent width per direction (torch's
``hidden_size``; the RNN encoder-decoder's encoder has De), L layers, K directions (2 when
bidirectional, else 1).

    state_t = cell(x_t, state_{t-1})        t = 0 .. T-1   (the reverse direction: t = T-1 .. 0)

**Padded batches.**  ``lengths`` (B,) counts each row's real steps; padding is at the end.
At a padded step (t >= lengths[b]) row b keeps its state and outputs zero::

    live_t  = t < lengths                                              (B, 1)
    state_t = where(live_t, cell(x_t, state_{t-1}), state_{t-1})
    out_t   = where(live_t, h_t, 0)

so the final state is each row's state after its own last real step, and the backward
gives a padded step no gradient: nothing reaches the weights or x_t, and the state's
gradient passes through it unchanged.  The reverse direction runs t = T-1 .. 0 under the
same rule: through the padding its state stays the initial one, so it starts at each
row's last real step -- what torch's ``pack_padded_sequence`` does.

**Stacking.**  Layer l reads layer l-1's outputs, its directions concatenated (B, T, K Dr),
as ``torch.nn.LSTM`` does.  The final states are stacked (L K, B, Dr), entry ``l K + d``
for layer l and direction d (0 forward, 1 reverse): torch's ``h_n`` (and ``c_n``).

**Reading backwards.**  :func:`reversal_index` and :func:`reorder_steps` read each row's real
steps in reverse, padding left in place (Sutskever et al., 2014 reverse the source), and put
the outputs back in order: the same call, the reversal being its own inverse.

The one Python loop is over time; every step is vectorised over the batch.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..checks import check_choice, check_int, check_shape
from ..module import Module
from .cells import CELLS, LSTMState, add_to_hidden, hidden, map_state

__all__ = ["Recurrent", "RecurrentOutput", "RecurrentCache", "check_lengths",
           "reversal_index", "reorder_steps", "run_direction", "run_direction_backward"]


def check_lengths(lengths, B: int, T: int) -> np.ndarray:
    """``lengths`` as an int64 array (B,) with every entry in [1, T]; ``None`` means all T steps."""
    if lengths is None:
        return np.full(B, T, dtype=np.int64)
    arr = np.asarray(lengths)
    if not np.issubdtype(arr.dtype, np.integer) or arr.shape != (B,):
        raise ValueError(f"lengths: expected an integer array of shape (B,) = ({B},), got {arr.dtype} {arr.shape}")
    if arr.min() < 1 or arr.max() > T:
        raise ValueError(f"lengths: expected each row's number of real steps, in [1, T={T}] (padding at the end), "
                         f"got {arr.tolist()}")
    return arr.astype(np.int64)


# ---- reading each row backwards (Sutskever et al., 2014) -------------------------------------------
def reversal_index(lengths: np.ndarray, T: int) -> np.ndarray:
    """(B, T) positions that read each row's real tokens backwards, padding left in place:
    j -> lengths - 1 - j for j < lengths, j otherwise.  Its own inverse."""
    j = np.arange(T)[None, :]  # (1, T)
    return np.where(j < lengths[:, None], lengths[:, None] - 1 - j, j)  # (B, T)


def reorder_steps(x: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """x (B, T, ...) with row b's steps taken in ``order[b]`` (B, T); ``order`` None: x itself.
    With a :func:`reversal_index`, the same call reverses and restores."""
    if order is None:
        return x
    return np.take_along_axis(x, order.reshape(order.shape + (1,) * (x.ndim - 2)), axis=1)  # (B, T, ...)


# ---- one direction of one layer ----------------------------------------------------------------
def run_direction(cell, x: np.ndarray, state, live: np.ndarray, reverse: bool):
    """Run ``cell`` over x (B, T, Dx) from ``state`` (B, Dr) [LSTMState for the LSTM].

    ``live`` (T, B, 1) bool: which rows are real at each step.  Returns the outputs
    (B, T, Dr), zero at padded steps; the final state; the T cell caches, indexed by t.
    """
    B, T, _ = x.shape
    out = np.zeros((B, T, cell.hidden_size), dtype=cell.dtype)  # (B, T, Dr)
    steps = [None] * T
    for t in (reversed(range(T)) if reverse else range(T)):
        new, steps[t] = cell.forward(x[:, t], state)  # (B, Dr)
        state = map_state(lambda n, old: np.where(live[t], n, old), new, state)  # a padded step keeps the state
        out[:, t] = hidden(new) * live[t]  # 0 at padded steps
    return out, state, steps


def run_direction_backward(cell, dout: np.ndarray, dstate, live: np.ndarray, steps: list, reverse: bool):
    """BPTT through :func:`run_direction`: dout (B, T, Dr) and the final state's gradient ->
    (dx (B, T, Dx), the initial state's gradient).  Accumulates the cell's weight gradients."""
    B, T, _ = dout.shape
    dx = np.zeros((B, T, cell.input_size), dtype=dout.dtype)  # (B, T, Dx)
    for t in (range(T) if reverse else reversed(range(T))):  # the forward's order, reversed
        # forward: out_t = where(live, h_t, 0);  state_t = where(live, new_t, state_{t-1})
        dnew = map_state(lambda d: d * live[t], add_to_hidden(dstate, dout[:, t]))  # padded rows: none reach the cell
        dx[:, t], dprev = cell.backward(dnew, steps[t])  # (B, Dx), state-shaped
        dstate = map_state(lambda dp, d: np.where(live[t], dp, d), dprev, dstate)  # padded rows: passed on unchanged
    return dx, dstate


# ---- the layer: stacked, optionally bidirectional --------------------------------------------------
class RecurrentOutput(NamedTuple):
    """What :meth:`Recurrent.forward` returns (and, as gradients, what its backward takes)."""
    outputs: np.ndarray  # (B, T, K*Dr) the top layer's h at every step, directions concatenated; 0 at padded steps
    final: Any  # (L*K, B, Dr) each row's state after its last real step; LSTMState(h_n, c_n) for the LSTM


class RecurrentCache(NamedTuple):
    live: np.ndarray  # (T, B, 1) bool, t < lengths: which steps were real
    layers: list  # layers[l][d]: direction d's T cell caches (each holds its x_t and state for the backward)


class Recurrent(Module):
    """A stack of ``num_layers`` recurrent layers, each one or two directions of a cell, like
    ``torch.nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` with ``batch_first=True`` (and no dropout).

    Parameters: ``forward_cells.{l}.*`` (left to right) and, when bidirectional,
    ``reverse_cells.{l}.*`` (right to left), each a cell's ``W_ih``, ``W_hh``, ``b_ih``,
    ``b_hh``.  torch's ``weight_ih_l{l}`` is ``forward_cells.{l}.W_ih.T``, its
    ``weight_ih_l{l}_reverse`` is ``reverse_cells.{l}.W_ih.T``, and so on
    (:mod:`minitf.rnn.cells` gives the gate order).
    """

    def __init__(self, cell: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bidirectional: bool = False, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        Cell = CELLS[check_choice("cell", cell, tuple(CELLS))]
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            check_int(name, value, low=1)
        self.cell, self.input_size, self.hidden_size, self.num_layers = cell, input_size, hidden_size, num_layers
        self.bidirectional = check_choice("bidirectional", bidirectional, (True, False))
        K = self.num_directions
        self.forward_cells = [Cell(input_size if l == 0 else K * hidden_size, hidden_size, rng=rng, dtype=dtype)
                              for l in range(num_layers)]
        self.reverse_cells = [Cell(input_size if l == 0 else K * hidden_size, hidden_size, rng=rng, dtype=dtype)
                              for l in range(num_layers)] if bidirectional else []

    @property
    def num_directions(self) -> int:
        """K: 2 when bidirectional, else 1."""
        return 2 if self.bidirectional else 1

    def cells_of(self, l: int) -> list:
        """Layer l's cells, direction 0 (forward) first."""
        return [self.forward_cells[l]] + ([self.reverse_cells[l]] if self.bidirectional else [])

    def zero_state(self, B: int):
        """All-zero states for every layer and direction: (L*K, B, Dr), an LSTMState for the LSTM."""
        zeros = np.zeros((self.num_layers * self.num_directions, B, self.hidden_size), dtype=self.dtype)
        return LSTMState(zeros, zeros.copy()) if self.cell == "lstm" else zeros

    def _check_initial(self, initial, B: int):
        if initial is None:
            return self.zero_state(B)
        expected = (self.num_layers * self.num_directions, B, self.hidden_size)
        hint = f"(num_layers * num_directions, B, hidden_size) = {expected}"
        if self.cell == "lstm":
            if not isinstance(initial, LSTMState):
                raise TypeError(f"initial: expected an LSTMState(h, c) for an LSTM, got {type(initial).__name__}")
            check_shape("initial.h", initial.h, expected, hint)
            check_shape("initial.c", initial.c, expected, hint)
        else:
            check_shape("initial", initial, expected, hint)
        return initial

    def forward(self, x: np.ndarray, lengths=None, initial=None):
        """x (B, T, Dx), lengths (B,) ints in [1, T] (None: all T), initial state (L*K, B, Dr)
        (None: zeros) -> RecurrentOutput(outputs (B, T, K*Dr), final (L*K, B, Dr)), cache."""
        check_shape("x", x, (None, None, self.input_size), f"(B, T, input_size={self.input_size})")
        B, T, _ = x.shape
        lengths = check_lengths(lengths, B, T)
        initial = self._check_initial(initial, B)
        K = self.num_directions
        live = (np.arange(T)[:, None] < lengths[None, :])[:, :, None]  # (T, B, 1)
        finals, layer_caches = [], []
        inputs = x  # (B, T, Dx), then (B, T, K*Dr)
        for l in range(self.num_layers):
            outs, caches = [], []
            for d, cell in enumerate(self.cells_of(l)):
                s0 = map_state(lambda a: a[l * K + d], initial)  # (B, Dr)
                out, s, steps = run_direction(cell, inputs, s0, live, reverse=d == 1)  # (B, T, Dr)
                outs.append(out)
                finals.append(s)
                caches.append(steps)
            inputs = np.concatenate(outs, axis=-1) if K == 2 else outs[0]  # (B, T, K*Dr)
            layer_caches.append(caches)
        final = map_state(lambda *a: np.stack(a), *finals)  # (L*K, B, Dr)
        return RecurrentOutput(inputs, final), RecurrentCache(live, layer_caches)

    def backward(self, dout: RecurrentOutput, cache: RecurrentCache):
        """dout = RecurrentOutput(doutputs (B, T, K*Dr), dfinal (L*K, B, Dr) or None)
        -> (dx (B, T, Dx), dinitial (L*K, B, Dr)); accumulates every cell's gradients."""
        doutputs, dfinal = dout
        live, layer_caches = cache
        B = doutputs.shape[0]
        K, Dr = self.num_directions, self.hidden_size
        if dfinal is None:  # the final state was not used
            dfinal = self.zero_state(B)
        dinitial = [None] * (self.num_layers * K)
        dinputs = doutputs  # (B, T, K*Dr)
        for l in reversed(range(self.num_layers)):
            dx = None
            for d, cell in enumerate(self.cells_of(l)):
                ds = map_state(lambda a: a[l * K + d], dfinal)  # (B, Dr)
                dx_d, dinitial[l * K + d] = run_direction_backward(cell, dinputs[..., d * Dr:(d + 1) * Dr], ds, live,
                                                                   layer_caches[l][d], reverse=d == 1)
                dx = dx_d if dx is None else dx + dx_d  # both directions read the same input
            dinputs = dx  # (B, T, D_l)
        return dinputs, map_state(lambda *a: np.stack(a), *dinitial)
