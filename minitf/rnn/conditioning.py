"""How the encoder's final state reaches the RNN decoder: the conditioning schemes, forward and backward.

Widths (:mod:`minitf.rnn.config`): E embedding, Dr the decoder's recurrent width, De the
encoder's per direction, K directions; B batch, L layers.

The conditioning vector h_enc (B, K De) is the encoder's top layer's final state, its K
directions side by side, and for the LSTM its cell state c_enc too
(:func:`conditioning_vector`).  It reaches the decoder by one path, both, or neither:

=============================  ==============================  ==================================
``conditioning``               every decoder layer starts at   the decoder's input at every step
=============================  ==============================  ==================================
``"init"``   (Sutskever 2014)  s_0 = bridge(h_enc)             [E y_{t-1}; ...]
``"concat"`` (Cho 2014)        zeros                           [E y_{t-1}; h_enc; ...]
``"both"``                     s_0 = bridge(h_enc)             [E y_{t-1}; h_enc; ...]
``"none"``   (attention only)  zeros                           [E y_{t-1}; ...]
=============================  ==============================  ==================================

(Sutskever, Vinyals & Le, 2014; Cho et al., 2014, who also feed h_enc to the output layer:
minitf's head reads the decoder's state only.)  The bridge is :class:`Bridge`, h_0 =
tanh(h_enc W + b) and for the LSTM c_0 = c_enc W' + b', or :class:`IdentityBridge` when the
widths match and no bridge is asked for (``RNNConfig.uses_bridge``).

A scheme has a forward/backward pair for each path: :meth:`~NoConditioning.initial_state`
and :meth:`~NoConditioning.initial_state_backward`, :meth:`~NoConditioning.inputs` and
:meth:`~NoConditioning.inputs_backward`; :meth:`~NoConditioning.gradient` adds the two
paths' shares of dL/dh_enc (the input's summed over every step).  The bridge's ``Linear``
layers belong to the model (flat names ``bridge_h.*``, ``bridge_c.*``): a scheme only uses them.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .cells import LSTMState, add_to_hidden, hidden, map_state

__all__ = ["conditioning_vector", "conditioning_vector_backward", "Bridge", "IdentityBridge", "BridgeCache",
           "NoConditioning", "InitialState", "ConcatInput", "InitialStateAndConcat", "CONDITIONING_SCHEMES"]


# ---- the conditioning vector: the encoder's top layer's final state -------------------------------------
def conditioning_vector(final, K: int):
    """final (L K, B, De) [LSTMState] -> h_enc (B, K De) [LSTMState]: the top layer's K final
    states (entries (L-1) K .. L K - 1, :mod:`minitf.rnn.recurrent`), side by side."""
    return map_state(lambda a: a[-K:].transpose(1, 0, 2).reshape(a.shape[1], -1), final)  # (K, B, De) -> (B, K De)


def conditioning_vector_backward(dconditioning, dfinal):
    """dh_enc (B, K De) -> dL/d(final) (L K, B, De): written into the top layer's K entries of
    ``dfinal`` (the zeros it is given, the same structure as h_enc), which is returned."""
    def scatter(dfin, dcond):
        B, KDe = dcond.shape
        K = KDe // dfin.shape[-1]
        dfin[-K:] = dcond.reshape(B, K, -1).transpose(1, 0, 2)  # (B, K De) -> (B, K, De) -> (K, B, De)
        return dfin

    return map_state(scatter, dfinal, dconditioning)


# ---- the bridge: h_enc -> s_0 -----------------------------------------------------------------------------
class BridgeCache(NamedTuple):
    h: Any  # bridge_h's cache (h_enc), for dW
    h0: np.ndarray  # (B, Dr) tanh(h_enc W + b), for tanh'
    c: Any  # bridge_c's cache (c_enc), LSTM only; else None


class Bridge:
    """s_0 = bridge(h_enc):  h_0 = tanh(h_enc W + b);  the LSTM's c_0 = c_enc W' + b' (a cell
    state is not squashed).  ``bridge_h`` (K De -> Dr) and ``bridge_c`` (LSTM only, else None):
    the model's ``Linear`` layers."""

    def __init__(self, bridge_h, bridge_c=None):
        self.bridge_h, self.bridge_c = bridge_h, bridge_c

    def forward(self, conditioning):
        """h_enc (B, K De) [LSTMState] -> s_0 (B, Dr) [LSTMState], cache"""
        a, c_h = self.bridge_h.forward(hidden(conditioning))  # (B, K De) @ (K De, Dr) -> (B, Dr)
        h0 = np.tanh(a)
        if self.bridge_c is None:
            return h0, BridgeCache(c_h, h0, None)
        c0, c_c = self.bridge_c.forward(conditioning.c)  # (B, K De) @ (K De, Dr) -> (B, Dr)
        return LSTMState(h0, c0), BridgeCache(c_h, h0, c_c)

    def backward(self, ds0, cache: BridgeCache):
        """ds_0 (B, Dr) [LSTMState] -> dh_enc (B, K De) [LSTMState]; accumulates the bridge's gradients."""
        # forward: h_0 = tanh(h_enc W + b)
        dcond_h = self.bridge_h.backward(hidden(ds0) * (1.0 - cache.h0 * cache.h0), cache.h)  # (B, K De)
        if self.bridge_c is None:
            return dcond_h
        return LSTMState(dcond_h, self.bridge_c.backward(ds0.c, cache.c))  # forward: c_0 = c_enc W' + b'


class IdentityBridge:
    """s_0 = h_enc, when its width K De is the decoder's Dr (``bridge="identity"``)."""

    def forward(self, conditioning):
        return conditioning, None

    def backward(self, ds0, cache):
        return ds0


# ---- the schemes ----------------------------------------------------------------------------------------------
class NoConditioning:
    """``"none"``: every decoder layer starts from zeros and no step's input holds h_enc: the
    decoder sees the source through attention alone.  The base of the other schemes, each of
    which replaces the pair of its own path.

    ``bridge``: a :class:`Bridge` or :class:`IdentityBridge` (used by ``"init"``, ``"both"``);
    ``width``: K De; ``cell_state``: whether h_enc carries an LSTM's c as well.
    """

    def __init__(self, bridge=None, *, width: int = 0, cell_state: bool = False):
        self.bridge, self.width, self.cell_state = bridge, width, cell_state
        self.parts: dict = {}  # what the scheme adds to every step's input: name -> width

    # -- path 1: the initial state --------------------------------------------------------------------------
    def initial_state(self, conditioning, zeros: tuple):
        """h_enc, ``zeros`` (every layer's zero state) -> (L_dec states s_0, bottom first), cache"""
        return zeros, None

    def initial_state_backward(self, dlayers: tuple, cache):
        """dL/ds_0 of each layer -> dh_enc through the initial state, or None (this path is not taken)"""
        return None

    # -- path 2: every step's input -------------------------------------------------------------------------
    def inputs(self, conditioning) -> dict:
        """h_enc -> what joins one step's input: name -> (B, width)"""
        return {}

    def inputs_backward(self, dparts: dict):
        """one step's input gradient, name -> (B, width) -> its share of dh_enc (B, K De), or None"""
        return None

    def gradient(self, dinit, dinputs: np.ndarray):
        """dh_enc: the initial state's share ``dinit`` and the inputs' ``dinputs`` (B, K De), every
        step's share summed, added where both paths are taken (None: neither is)."""
        return dinit


class InitialState(NoConditioning):
    """``"init"`` (Sutskever, Vinyals & Le, 2014): every decoder layer starts from s_0 = bridge(h_enc)."""

    def initial_state(self, conditioning, zeros: tuple):
        s0, cache = self.bridge.forward(conditioning)  # (B, Dr) [LSTMState]
        return (s0,) * len(zeros), cache  # every layer starts from it

    def initial_state_backward(self, dlayers: tuple, cache):
        ds0 = map_state(lambda *a: sum(a), *dlayers)  # every layer started from s_0: the gradients add
        return self.bridge.backward(ds0, cache)


class ConcatInput(NoConditioning):
    """``"concat"`` (Cho et al., 2014): h_enc joins the decoder's input at every step; the
    decoder starts from zeros.  (For the LSTM only h_enc is read: c_enc's gradient is 0.)"""

    def __init__(self, bridge=None, *, width: int = 0, cell_state: bool = False):
        super().__init__(bridge, width=width, cell_state=cell_state)
        self.parts = {"conditioning": width}

    def inputs(self, conditioning) -> dict:
        return {"conditioning": hidden(conditioning)}  # (B, K De), the same at every step

    def inputs_backward(self, dparts: dict):
        return dparts["conditioning"]  # (B, K De)

    def gradient(self, dinit, dinputs: np.ndarray):
        return LSTMState(dinputs, np.zeros_like(dinputs)) if self.cell_state else dinputs  # forward: hidden(h_enc)


class InitialStateAndConcat(ConcatInput, InitialState):
    """``"both"``: s_0 = bridge(h_enc), and h_enc at every step's input; the two paths' gradients add."""

    def gradient(self, dinit, dinputs: np.ndarray):
        return add_to_hidden(dinit, dinputs)  # the input read h_enc's h only


CONDITIONING_SCHEMES = {"none": NoConditioning, "init": InitialState, "concat": ConcatInput,
                        "both": InitialStateAndConcat}
"""The schemes, by the name ``RNNConfig.conditioning`` uses."""
