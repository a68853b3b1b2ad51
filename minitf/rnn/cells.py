"""One step of a recurrent network: the tanh RNN, the LSTM and the GRU, forward and backward.

Shapes: B batch, Dx the step's input width, Dr the recurrent (hidden) width, torch's
``hidden_size`` (the decoder's Dr, or the encoder's De per direction: widths are D-something
in minitf, as the transformer's Dh; H counts attention heads).

A cell maps an input and a state to the next state::

    state_t, cache = cell.forward(x_t, state_{t-1})          x_t (B, Dx)
    dx_t, dstate_{t-1} = cell.backward(dstate_t, cache)

The state is ``h`` (B, Dr) for the RNN and the GRU, and ``LSTMState(h, c)`` for the LSTM;
its gradient has the same structure.  :func:`hidden`, :func:`map_state` and
:func:`add_to_hidden` let the sequence layer treat the two alike.

Weight layout: one packed matrix per input, the gates side by side, exactly as in
``torch.nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` but stored transposed, for ``x @ W`` (minitf
stores every linear map (D_in, D_out), see :mod:`minitf.layers.linear`)::

    minitf    shape        torch (layer l)   shape        gates, in order along the columns
    W_ih      (Dx, k Dr)   weight_ih_l{l}    (k Dr, Dx)   W_ih = weight_ih.T
    W_hh      (Dr, k Dr)   weight_hh_l{l}    (k Dr, Dr)   W_hh = weight_hh.T
    b_ih      (k Dr,)      bias_ih_l{l}      (k Dr,)
    b_hh      (k Dr,)      bias_hh_l{l}      (k Dr,)

    k = 1 for the RNN; 4 for the LSTM: i, f, g, o; 3 for the GRU: r, z, n.

Two biases where one would do (their sum is all the RNN and LSTM see) because the GRU
needs them apart (b_hn sits inside r * (...)), and so that the map onto torch is one to one.
Initialisation as torch: every weight and bias U(-1/sqrt(Dr), 1/sqrt(Dr)).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..layers.linear import affine_backward, affine_forward
from ..module import Module

__all__ = ["LSTMState", "RNNCell", "LSTMCell", "GRUCell", "CELLS", "hidden", "map_state", "add_to_hidden",
           "sigmoid", "stack_forward", "stack_backward"]


class LSTMState(NamedTuple):
    """The LSTM's state: two vectors where the RNN and GRU have one."""
    h: np.ndarray  # (..., Dr) hidden state, the output of the step
    c: np.ndarray  # (..., Dr) cell state, the additive memory


def hidden(state) -> np.ndarray:
    """The hidden state h of ``state`` (an array, or an LSTMState)."""
    return state.h if isinstance(state, LSTMState) else state


def map_state(fn, *states):
    """Apply ``fn`` to each array of the states, keeping their structure: for an LSTM,
    ``LSTMState(fn(h, h', ...), fn(c, c', ...))``; for a plain array, ``fn(h, h', ...)``."""
    if isinstance(states[0], LSTMState):
        return LSTMState(*(fn(*parts) for parts in zip(*states)))
    return fn(*states)


def add_to_hidden(state, dh: np.ndarray):
    """``state`` with ``dh`` added to its hidden part (c untouched): a gradient arriving at h."""
    return state._replace(h=state.h + dh) if isinstance(state, LSTMState) else state + dh


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), written as (1 + tanh(x/2)) / 2: the same function, and exp never overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class _Cell(Module):
    """The four parameters every cell has: ``W_ih`` (Dx, k Dr), ``W_hh`` (Dr, k Dr), ``b_ih``, ``b_hh`` (k Dr,)."""

    n_gates = 1  # k

    def __init__(self, input_size: int, hidden_size: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__(dtype)
        self.input_size, self.hidden_size = input_size, hidden_size
        Dx, Dr, k = input_size, hidden_size, self.n_gates
        bound = 1.0 / np.sqrt(Dr)  # torch: U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for everything
        self.add_param("W_ih", rng.uniform(-bound, bound, size=(Dx, k * Dr)))
        self.add_param("W_hh", rng.uniform(-bound, bound, size=(Dr, k * Dr)))
        self.add_param("b_ih", rng.uniform(-bound, bound, size=(k * Dr,)))
        self.add_param("b_hh", rng.uniform(-bound, bound, size=(k * Dr,)))

    def zero_state(self, B: int):
        """The all-zero state of B rows (torch's default h_0 = 0, c_0 = 0)."""
        return np.zeros((B, self.hidden_size), dtype=self.dtype)

    def _gates(self, x: np.ndarray, h: np.ndarray) -> np.ndarray:
        """a = x W_ih + b_ih + h W_hh + b_hh   (B, k Dr): every gate's pre-activation at once."""
        p = self.params
        a = affine_forward(x, p["W_ih"], p["b_ih"])  # (B, Dx) @ (Dx, k Dr) -> (B, k Dr)
        a += affine_forward(h, p["W_hh"], p["b_hh"])  # (B, Dr) @ (Dr, k Dr) -> (B, k Dr)
        return a

    def _gates_backward(self, da: np.ndarray, x: np.ndarray, h: np.ndarray):
        """Undo :meth:`_gates`: da (B, k Dr) -> (dx (B, Dx), dh (B, Dr)); accumulates the four gradients."""
        dx, dW_ih, db_ih = affine_backward(da, x, self.params["W_ih"])  # (B, Dx), (Dx, k Dr), (k Dr,)
        dh, dW_hh, db_hh = affine_backward(da, h, self.params["W_hh"])  # (B, Dr), (Dr, k Dr), (k Dr,)
        self.grads["W_ih"] += dW_ih
        self.grads["b_ih"] += db_ih
        self.grads["W_hh"] += dW_hh
        self.grads["b_hh"] += db_hh
        return dx, dh


# ---- the Elman RNN ------------------------------------------------------------------------------
class RNNCellCache(NamedTuple):
    x: np.ndarray  # (B, Dx) for dW_ih
    h_prev: np.ndarray  # (B, Dr) for dW_hh
    h: np.ndarray  # (B, Dr) the new state: tanh'(a) = 1 - h^2


class RNNCell(_Cell):
    """h_t = tanh(x_t W_ih + b_ih + h_{t-1} W_hh + b_hh)     (torch.nn.RNN, nonlinearity "tanh")"""

    n_gates = 1

    def forward(self, x: np.ndarray, h_prev: np.ndarray):
        """x (B, Dx), h_prev (B, Dr) -> h (B, Dr), cache"""
        h = np.tanh(self._gates(x, h_prev))  # (B, Dr)
        return h, RNNCellCache(x, h_prev, h)

    def backward(self, dh: np.ndarray, cache: RNNCellCache):
        """dh (B, Dr) -> (dx (B, Dx), dh_prev (B, Dr))"""
        x, h_prev, h = cache
        da = dh * (1.0 - h * h)  # forward: h = tanh(a)
        return self._gates_backward(da, x, h_prev)


# ---- the LSTM ----------------------------------------------------------------------------------
class LSTMCellCache(NamedTuple):
    x: np.ndarray  # (B, Dx) for dW_ih
    h_prev: np.ndarray  # (B, Dr) for dW_hh
    c_prev: np.ndarray  # (B, Dr) for df = dc * c_prev
    i: np.ndarray  # (B, Dr) input gate
    f: np.ndarray  # (B, Dr) forget gate
    g: np.ndarray  # (B, Dr) candidate cell
    o: np.ndarray  # (B, Dr) output gate
    tanh_c: np.ndarray  # (B, Dr) tanh(c_t), for do and for dc through h


class LSTMCell(_Cell):
    """The LSTM of torch.nn.LSTM (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000)::

        [a_i, a_f, a_g, a_o] = x_t W_ih + b_ih + h_{t-1} W_hh + b_hh     (B, 4 Dr), gates in that order
        i = sigma(a_i)   f = sigma(a_f)   g = tanh(a_g)   o = sigma(a_o)
        c_t = f * c_{t-1} + i * g
        h_t = o * tanh(c_t)
    """

    n_gates = 4

    def zero_state(self, B: int) -> LSTMState:
        return LSTMState(super().zero_state(B), super().zero_state(B))

    def forward(self, x: np.ndarray, state: LSTMState):
        """x (B, Dx), state (h, c) each (B, Dr) -> LSTMState(h, c), cache"""
        h_prev, c_prev = state
        Dr = self.hidden_size
        a = self._gates(x, h_prev)  # (B, 4 Dr)
        i = sigmoid(a[:, :Dr])  # (B, Dr) each
        f = sigmoid(a[:, Dr:2 * Dr])
        g = np.tanh(a[:, 2 * Dr:3 * Dr])
        o = sigmoid(a[:, 3 * Dr:])
        c = f * c_prev + i * g
        tanh_c = np.tanh(c)
        h = o * tanh_c
        return LSTMState(h, c), LSTMCellCache(x, h_prev, c_prev, i, f, g, o, tanh_c)

    def backward(self, dstate: LSTMState, cache: LSTMCellCache):
        """dstate (dh, dc) each (B, Dr) -> (dx (B, Dx), LSTMState(dh_prev, dc_prev))"""
        dh, dc = dstate
        x, h_prev, c_prev, i, f, g, o, tanh_c = cache
        # forward: h = o * tanh(c)
        do = dh * tanh_c
        dc = dc + dh * o * (1.0 - tanh_c * tanh_c)  # c reaches the loss directly and through h
        # forward: c = f * c_prev + i * g
        df, dc_prev = dc * c_prev, dc * f  # the forget gate is the gradient's path back in time
        di, dg = dc * g, dc * i
        # forward: i, f, o = sigma(a_i, a_f, a_o), g = tanh(a_g)
        da = np.concatenate([di * i * (1.0 - i), df * f * (1.0 - f), dg * (1.0 - g * g), do * o * (1.0 - o)],
                            axis=1)  # (B, 4 Dr)
        dx, dh_prev = self._gates_backward(da, x, h_prev)
        return dx, LSTMState(dh_prev, dc_prev)


# ---- the GRU -----------------------------------------------------------------------------------
class GRUCellCache(NamedTuple):
    x: np.ndarray  # (B, Dx) for dW_ih
    h_prev: np.ndarray  # (B, Dr) for dW_hh and dz
    r: np.ndarray  # (B, Dr) reset gate
    z: np.ndarray  # (B, Dr) update gate
    n: np.ndarray  # (B, Dr) candidate state
    hn: np.ndarray  # (B, Dr) h_{t-1} W_hn + b_hn, the part the reset gate scales: dr = da_n * hn


class GRUCell(_Cell):
    """The GRU of torch.nn.GRU (Cho et al. 2014, with the reset gate applied after the matrix product)::

        [gi_r, gi_z, gi_n] = x_t W_ih + b_ih         [gh_r, gh_z, gh_n] = h_{t-1} W_hh + b_hh     (B, 3 Dr) each
        r = sigma(gi_r + gh_r)    z = sigma(gi_z + gh_z)
        n = tanh(gi_n + r * gh_n)                    (gh_n = h_{t-1} W_hn + b_hn: the biases stay apart)
        h_t = (1 - z) * n + z * h_{t-1}
    """

    n_gates = 3

    def forward(self, x: np.ndarray, h_prev: np.ndarray):
        """x (B, Dx), h_prev (B, Dr) -> h (B, Dr), cache"""
        Dr, p = self.hidden_size, self.params
        gi = affine_forward(x, p["W_ih"], p["b_ih"])  # (B, Dx) @ (Dx, 3 Dr) -> (B, 3 Dr)
        gh = affine_forward(h_prev, p["W_hh"], p["b_hh"])  # (B, Dr) @ (Dr, 3 Dr) -> (B, 3 Dr)
        r = sigmoid(gi[:, :Dr] + gh[:, :Dr])  # (B, Dr)
        z = sigmoid(gi[:, Dr:2 * Dr] + gh[:, Dr:2 * Dr])
        hn = gh[:, 2 * Dr:]
        n = np.tanh(gi[:, 2 * Dr:] + r * hn)
        h = (1.0 - z) * n + z * h_prev
        return h, GRUCellCache(x, h_prev, r, z, n, hn)

    def backward(self, dh: np.ndarray, cache: GRUCellCache):
        """dh (B, Dr) -> (dx (B, Dx), dh_prev (B, Dr))"""
        x, h_prev, r, z, n, hn = cache
        # forward: h = (1 - z) * n + z * h_prev
        dn = dh * (1.0 - z)
        dz = dh * (h_prev - n)
        # forward: n = tanh(gi_n + r * hn)
        da_n = dn * (1.0 - n * n)
        dr = da_n * hn
        # forward: r = sigma(gi_r + gh_r), z = sigma(gi_z + gh_z): one pre-activation, two products
        da_r, da_z = dr * r * (1.0 - r), dz * z * (1.0 - z)
        dgi = np.concatenate([da_r, da_z, da_n], axis=1)  # (B, 3 Dr)
        dgh = np.concatenate([da_r, da_z, da_n * r], axis=1)  # (B, 3 Dr): the reset gate scales gh_n
        dx, dW_ih, db_ih = affine_backward(dgi, x, self.params["W_ih"])  # (B, Dx), (Dx, 3 Dr), (3 Dr,)
        dh_prev, dW_hh, db_hh = affine_backward(dgh, h_prev, self.params["W_hh"])  # (B, Dr), (Dr, 3 Dr), (3 Dr,)
        self.grads["W_ih"] += dW_ih
        self.grads["b_ih"] += db_ih
        self.grads["W_hh"] += dW_hh
        self.grads["b_hh"] += db_hh
        return dx, dh_prev + dh * z  # h_prev also reaches h directly, through z * h_prev


CELLS: dict[str, type[_Cell]] = {"rnn": RNNCell, "lstm": LSTMCell, "gru": GRUCell}
"""The cell types, by the name a config uses (``RNNConfig.cell``, ``Recurrent(cell=...)``)."""


# ---- one step of a stack of cells -------------------------------------------------------------------
def stack_forward(cells: list, x: np.ndarray, states: tuple):
    """One step of stacked cells, bottom first: layer l reads layer l-1's new h.
    x (B, Dx), states (one per layer, h (B, Dr) or LSTMState) -> new states (tuple), their caches (list)."""
    new, caches = [], []
    for cell, s in zip(cells, states):
        s, cache = cell.forward(x, s)  # (B, Dr)
        new.append(s)
        caches.append(cache)
        x = hidden(s)  # the next layer's input
    return tuple(new), caches


def stack_backward(cells: list, dh: np.ndarray, dstates: tuple, caches: list):
    """Undo :func:`stack_forward`, top layer first: dh (B, Dr) at the top layer's output and each
    layer's state gradient from the step after -> (dx (B, Dx), the previous states' gradients (tuple))."""
    dprev = list(dstates)
    for l in reversed(range(len(cells))):
        dh, dprev[l] = cells[l].backward(add_to_hidden(dprev[l], dh), caches[l])  # a layer's dx: the dh below it
    return dh, tuple(dprev)
