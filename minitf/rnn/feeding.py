"""Where an RNN decoder's attention context goes: the feeding schemes, forward and backward.

Widths (:mod:`minitf.rnn.config`): Dr the decoder's recurrent width, De the encoder's per
direction, K directions, so the context c_t, an average of encoder states, is K De wide;
B batch, S source length.

One decoder step (:meth:`minitf.models.RNNSeq2Seq.step_forward`) reads::

    x_t      = [E y_{t-1}; h_enc ("concat"); the scheme's inputs]      before the cells
    s_t      = cells(x_t, s_{t-1})                                     h_t: the top layer's output
    o_t      = the scheme's readout of h_t                             after the cells
    logits_t = o_t W_U + b_U

and a scheme fills the two places (c_t = attend(query, H_enc), :mod:`minitf.rnn.attention`)::

    scheme (attention_feed)       the query   joins x_t (inputs)      the head reads o_t (readout)
    NoAttention                   --          --                      h_t
    Bahdanau ("input")            h_{t-1}     c_t                     h_t
    Luong ("output")              h_t         --                      h~_t = tanh([c_t; h_t] W_c)
    LuongInputFeeding ("both")    h_t         h~_{t-1} (0 at t = 0)   h~_t, also kept for step t+1

(Bahdanau, Cho & Bengio, 2015, section 3.1: the decoder state s_{i-1} asks for c_i, which then
enters the recurrence; Luong, Pham & Manning, 2015, section 3 for the attentional hidden state
and 3.3 for input feeding.  h_{t-1} is the top layer's h of s_{t-1}.)

A scheme's two places are two forward/backward pairs, side by side: :meth:`~NoAttention.inputs`
/ :meth:`~NoAttention.inputs_backward` and :meth:`~NoAttention.readout` /
:meth:`~NoAttention.readout_backward`.  The backward of the place that attended hands back the
step's :class:`~minitf.rnn.state.MemoryShare` (the attention's dkeys and dvalues); the other
passes it on.  A scheme owns no parameters: it uses its ``owner``'s (the model's) ``attention``,
and :class:`Luong` reads ``W_c`` from the owner's ``params`` and adds its gradient into the
owner's ``grads``, as a tied weight is shared (:mod:`minitf.module`).  So the flat names stay
the model's (``W_c``, ``attention.*``).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..layers.linear import affine_backward, affine_forward
from .cells import add_to_hidden, hidden
from .state import DecoderState, EncoderMemory, MemoryShare

__all__ = ["attentional_hidden", "attentional_hidden_backward", "NoAttention", "Bahdanau", "Luong",
           "LuongInputFeeding", "LuongCache", "FEEDINGS", "NO_SHARE"]

NO_SHARE = MemoryShare(None, None, None)
"""A step's share of the memory's gradient before anything that read the memory is undone."""


# ---- Luong's attentional hidden state ------------------------------------------------------------------
def attentional_hidden(context: np.ndarray, h: np.ndarray, W_c: np.ndarray):
    """h~ = tanh([c; h] W_c):  context (B, K De), h (B, Dr), W_c (K De + Dr, Dr) -> h~ (B, Dr),
    [c; h] (B, K De + Dr) (kept for dW_c)."""
    combined = np.concatenate([context, h], axis=-1)  # (B, K De + Dr)
    return np.tanh(affine_forward(combined, W_c, None)), combined  # (B, K De + Dr) @ (K De + Dr, Dr) -> (B, Dr)


def attentional_hidden_backward(dh_tilde: np.ndarray, h_tilde: np.ndarray, combined: np.ndarray, W_c: np.ndarray):
    """dh~ (B, Dr) -> (dcontext (B, K De), dh (B, Dr), dW_c (K De + Dr, Dr))."""
    dz = dh_tilde * (1.0 - h_tilde * h_tilde)  # forward: h~ = tanh(z)
    dcombined, dW_c, _ = affine_backward(dz, combined, W_c)  # forward: z = [c; h] W_c;  (B, K De + Dr)
    KDe = combined.shape[-1] - W_c.shape[1]
    return dcombined[:, :KDe], dcombined[:, KDe:], dW_c


# ---- the schemes ----------------------------------------------------------------------------------------
class NoAttention:
    """No attention (Sutskever et al., 2014; Cho et al., 2014): nothing joins the input, the
    head reads h_t.  The base of the other schemes, each of which replaces the pairs it changes.

    ``owner``: the module whose ``attention`` (:data:`~minitf.rnn.attention.ATTENTIONS`) the
    scheme calls and whose ``params`` and ``grads`` hold ``W_c``; ``context_size`` K De and
    ``hidden_size`` Dr, the widths of c_t and of h_t.
    """

    def __init__(self, owner, *, context_size: int, hidden_size: int):
        self.owner, self.context_size, self.hidden_size = owner, context_size, hidden_size
        self.parts: dict = {}  # what the scheme adds to x_t, after the embedding and h_enc: name -> width

    @property
    def attention(self):
        """The owner's attention (None without attention)."""
        return self.owner.attention

    @staticmethod
    def add_params(owner, rng: np.random.Generator, context_size: int, hidden_size: int) -> None:
        """Register the scheme's own parameters on ``owner`` (here none)."""

    def initial_feed(self, B: int, dtype) -> np.ndarray | None:
        """What the state carries for step 0's input (here nothing)."""
        return None

    # -- before the cells -------------------------------------------------------------------------------
    def inputs(self, state: DecoderState, memory: EncoderMemory):
        """s_{t-1}, memory -> what joins x_t (name -> (B, width)), cache"""
        return {}, None

    def inputs_backward(self, dparts: dict, dstate: DecoderState, share: MemoryShare, cache):
        """x_t's gradient (name -> (B, width)), dL/ds_{t-1} from the cells, the step's share so far
        -> dL/ds_{t-1} with what the inputs read of s_{t-1} added, the share"""
        return dstate, share

    # -- after the cells --------------------------------------------------------------------------------
    def readout(self, h: np.ndarray, memory: EncoderMemory):
        """h_t (B, Dr) -> o_t (B, Dr) what the head reads, the feed step t+1 reads (or None), cache"""
        return h, None, None

    def readout_backward(self, do: np.ndarray, dfeed, cache):
        """do (B, Dr), dfeed (B, Dr) from step t+1 (or None) -> dh_t (B, Dr), the step's share"""
        return do, NO_SHARE


class Bahdanau(NoAttention):
    """``"input"`` (Bahdanau, Cho & Bengio, 2015): the previous state asks, the context joins the input.

        c_t = attend(h_{t-1}, H_enc)        (B, K De), h_{t-1} the top layer's h of s_{t-1}
        x_t = [...; c_t]                    the head reads h_t
    """

    def __init__(self, owner, *, context_size: int, hidden_size: int):
        super().__init__(owner, context_size=context_size, hidden_size=hidden_size)
        self.parts = {"context": context_size}  # K De

    def inputs(self, state, memory):
        query = hidden(state.layers[-1])  # (B, Dr) h_{t-1}
        context, cache = self.attention.forward(query, memory.keys, memory.states, memory.mask)  # (B, K De)
        return {"context": context}, cache

    def inputs_backward(self, dparts, dstate, share, cache):
        # forward: c_t = attend(h_{t-1}, H_enc)
        dquery, dkeys, dvalues = self.attention.backward(dparts["context"], cache)  # (B, Dr), (B, S, *), (B, S, K De)
        layers = dstate.layers[:-1] + (add_to_hidden(dstate.layers[-1], dquery),)  # the query was s_{t-1}'s top h
        return dstate._replace(layers=layers), share._replace(dstates=dvalues, dkeys=dkeys)


class LuongCache(NamedTuple):
    attention: Any  # the attention's cache (its weights: ``attention.a``)
    combined: np.ndarray  # (B, K De + Dr) [c_t; h_t], for dW_c
    h_tilde: np.ndarray  # (B, Dr) h~_t, for tanh'


class Luong(NoAttention):
    """``"output"`` (Luong, Pham & Manning, 2015): the new state asks, the attentional hidden
    state feeds the head.

        c_t  = attend(h_t, H_enc)            (B, K De)
        h~_t = tanh([c_t; h_t] W_c)          (B, Dr), W_c (K De + Dr, Dr), no bias as in the paper
    """

    @staticmethod
    def add_params(owner, rng, context_size, hidden_size):
        bound = 1.0 / np.sqrt(context_size + hidden_size)  # torch.nn.Linear's U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        owner.add_param("W_c", rng.uniform(-bound, bound, size=(context_size + hidden_size, hidden_size)))

    def readout(self, h, memory):
        context, c_attn = self.attention.forward(h, memory.keys, memory.states, memory.mask)  # (B, K De)
        h_tilde, combined = attentional_hidden(context, h, self.owner.params["W_c"])  # (B, Dr)
        return h_tilde, None, LuongCache(c_attn, combined, h_tilde)

    def readout_backward(self, do, dfeed, cache):
        # forward: h~_t = tanh([c_t; h_t] W_c)
        dcontext, dh, dW_c = attentional_hidden_backward(do, cache.h_tilde, cache.combined, self.owner.params["W_c"])
        self.owner.grads["W_c"] += dW_c
        # forward: c_t = attend(h_t, H_enc)
        dquery, dkeys, dvalues = self.attention.backward(dcontext, cache.attention)
        return dh + dquery, MemoryShare(dvalues, dkeys, None)  # h_t also asked the query


class LuongInputFeeding(Luong):
    """``"both"`` (Luong, Pham & Manning, 2015, input feeding): as :class:`Luong`, and h~_t also
    joins step t+1's input, so the decoder knows what it attended to before (h~_{-1} = 0).

        x_t = [...; h~_{t-1}]
    """

    def __init__(self, owner, *, context_size: int, hidden_size: int):
        super().__init__(owner, context_size=context_size, hidden_size=hidden_size)
        self.parts = {"feed": hidden_size}  # Dr

    def initial_feed(self, B, dtype):
        return np.zeros((B, self.hidden_size), dtype=dtype)  # (B, Dr) h~_{-1} = 0

    def inputs(self, state, memory):
        return {"feed": state.feed}, None  # (B, Dr) h~_{t-1}

    def inputs_backward(self, dparts, dstate, share, cache):
        return dstate._replace(feed=dparts["feed"]), share  # dh~_{t-1}, handed to step t-1's readout

    def readout(self, h, memory):
        h_tilde, _, cache = super().readout(h, memory)
        return h_tilde, h_tilde, cache  # h~_t is what the head reads and what step t+1 is fed

    def readout_backward(self, do, dfeed, cache):
        return super().readout_backward(do + dfeed, None, cache)  # h~_t was also step t+1's input


FEEDINGS = {"none": NoAttention, "input": Bahdanau, "output": Luong, "both": LuongInputFeeding}
"""The schemes, by ``RNNConfig.feeding`` (``attention_feed``, or "none" without attention)."""
