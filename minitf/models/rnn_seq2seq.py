"""The RNN encoder-decoder (Sutskever et al., 2014; Cho et al., 2014; Bahdanau et al., 2015;
Luong et al., 2015), forward and backward: Lesson 1.

Widths as in :mod:`minitf.rnn.config`: E embedding, H decoder hidden, He encoder hidden per
direction, K directions; B batch, S source length, T target length, V vocabulary.

    H_enc, final = Encoder(src_ids)               (B, S, K He) every source position's state; the final state
    s_0 = bridge(final)  ["init"],  else 0         every decoder layer's initial state
    for t = 0 .. T-1:                              the one loop, over target steps
        x_t      = [E y_{t-1}; final_h ["concat"]; c_t ["input"]; h~_{t-1} ["both"]]
        s_t      = cells(x_t, s_{t-1})             the decoder's stacked cells; h_t its top layer's output
        o_t      = tanh([c_t; h_t] W_c)  ["output", "both"],  else h_t
        logits_t = o_t W_U + b_U                   (B, V)

(brackets: the config choice that adds the term; c_t is the attention context, see
:mod:`minitf.rnn.config` for which query each ``attention_feed`` uses).

One step function, :meth:`RNNSeq2Seq.step_forward`, serves teacher-forced training,
scheduled sampling (:mod:`minitf.rnn.scheduled_sampling`) and free-running decoding:
:meth:`RNNSeq2Seq.start_decoding` and :meth:`RNNSeq2Seq.decode_step` are what
``minitf.decoding``'s greedy search, sampling and beam search call for this model, in
place of the transformer's KV cache.

Backward (:meth:`RNNSeq2Seq.backward`): the steps in reverse, each handing back its share of
dL/dH_enc (through the attention's keys and values) and of the conditioning vector; the
shares summed; then the bridge, the keys' projection, and the encoder's BPTT.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..checks import as_rng, check_choice, check_int, check_number, check_token_ids
from ..layers import Embedding, Linear
from ..layers.linear import affine_backward, affine_forward
from ..masks import MASK_VALUE
from ..module import Module
from ..rnn.attention import ATTENTIONS
from ..rnn.cells import CELLS, LSTMState, add_to_hidden, hidden, map_state
from ..rnn.config import RNNConfig
from ..rnn.recurrent import Recurrent, RecurrentOutput
from ..rnn.scheduled_sampling import CHOICES, ScheduledSampling, choose_tokens

__all__ = ["RNNSeq2Seq", "RNNSeq2SeqGrads", "EncoderMemory", "DecoderState", "RNNDecodingState",
           "default_rnn_config", "reversal_index"]


# ---- what flows between the parts -----------------------------------------------------------------
class EncoderMemory(NamedTuple):
    """What the decoder reads of the source: computed once per example."""
    states: np.ndarray  # (B, S, K He) H_enc, position j's state (source order, even when read reversed)
    mask: np.ndarray  # (B, S) additive: 0 at real positions, MASK_VALUE at padding
    keys: np.ndarray | None  # (B, S, *) the attention's keys, projected once; None without attention
    conditioning: Any  # (B, K He) the top layer's final h, directions concatenated; LSTMState(h, c) for the LSTM


class DecoderState(NamedTuple):
    """The decoder's state between steps (its gradient has the same structure)."""
    layers: tuple  # L_dec states, bottom first: h (B, H), or LSTMState(h, c) for the LSTM
    feed: np.ndarray | None  # (B, H) h~_{t-1}, fed to the next input ("both"); else None


class MemoryShare(NamedTuple):
    """One decoder step's share of the gradient of the memory (None: the step did not read it)."""
    dstates: np.ndarray | None  # (B, S, K He) through the attention's values
    dkeys: np.ndarray | None  # (B, S, *) through the attention's scores
    dconditioning: np.ndarray | None  # (B, K He) through "concat"


class StepCache(NamedTuple):
    embed: Any  # the target embedding's cache (the ids fed)
    attention: Any  # the attention's cache, or None
    cells: list  # one cell cache per decoder layer
    combined: np.ndarray | None  # (B, K He + H) [c_t; h_t], for dW_c ("output", "both")
    o: np.ndarray  # (B, H) what the head read: for dW_U, and tanh' when o = tanh(...)


class EncoderCache(NamedTuple):
    embed: Any
    rnn: Any  # the Recurrent layer's cache
    order: np.ndarray | None  # (B, S) reversal_index when the source was read reversed, else None
    keys: Any  # the keys' projection's cache


class DecoderCache(NamedTuple):
    init: Any  # the bridge's caches (None when there is none)
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
    dH_enc: np.ndarray  # (B, S, K He) dL/dH_enc, the sum of every step's attention share (0 without attention)
    dconditioning: Any  # (B, K He) dL/d(final state) through "init" and "concat" (LSTMState for the LSTM), or None
    dsrc_embeddings: np.ndarray  # (B, S, E) dL/d(source embedding), source order: what BPTT brings to each token


class RNNDecodingState(NamedTuple):
    """Free-running decoding's state for N = B * G rows (G per example, rows b*G .. b*G+G-1 for example b)."""
    state: DecoderState  # (N, ...)
    memory: EncoderMemory  # (N, ...) each example's memory repeated for its G rows
    group_size: int  # G
    length: int  # tokens fed so far

    @property
    def batch_rows(self) -> int:
        return self.memory.mask.shape[0]

    def reorder(self, beam_idx: np.ndarray) -> "RNNDecodingState":
        """Row n continues row ``beam_idx[n]`` (beam search).  The memory needs no reordering: a
        beam stays within its example's G rows, which share one memory."""
        layers = tuple(map_state(lambda a: a[beam_idx], s) for s in self.state.layers)  # (N, H) each
        feed = None if self.state.feed is None else self.state.feed[beam_idx]
        return self._replace(state=DecoderState(layers, feed))


def reversal_index(lengths: np.ndarray, S: int) -> np.ndarray:
    """(B, S) positions that read each row's real tokens backwards, padding left in place:
    j -> lengths - 1 - j for j < lengths, j otherwise.  Its own inverse."""
    j = np.arange(S)[None, :]  # (1, S)
    return np.where(j < lengths[:, None], lengths[:, None] - 1 - j, j)  # (B, S)


def default_rnn_config(task, **overrides) -> RNNConfig:
    """A small RNN encoder-decoder sized for the toy tasks of :mod:`minitf.data.tasks`."""
    tok = task.tokenizer
    base = dict(src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, embedding_size=32, hidden_size=64,
                max_len=max(task.max_source_len, task.max_target_len) + 1,
                pad_id=tok.pad_id, bos_id=tok.bos_id, eos_id=tok.eos_id)
    base.update(overrides)
    return RNNConfig(**base)


# ---- the model ------------------------------------------------------------------------------------------
class RNNSeq2Seq(Module):
    """An RNN encoder-decoder built from :class:`~minitf.rnn.RNNConfig`.

    Parameter names (flat view): ``W_c`` (K He + H, H; with attention feeding the output),
    ``W_U`` (H, V), ``b_U`` (V,), then ``src_embed.W_E``, ``encoder.forward_cells.{l}.*`` and
    ``encoder.reverse_cells.{l}.*`` (bidirectional), ``bridge_h.W/b`` and ``bridge_c.W/b``
    (LSTM) when there is a bridge, ``tgt_embed.W_E`` (absent when shared), ``decoder_cells.{l}.*``,
    ``attention.*`` (``W_a``, ``U_a``, ``v`` additive; ``W_a`` general; none for dot).

    ``scheduled_sampling``: the teacher-forcing policy of training-mode forwards (None: always
    the gold token), see :meth:`forward`.
    """

    def __init__(self, config: RNNConfig, scheduled_sampling: ScheduledSampling | None = None):
        if not isinstance(config, RNNConfig):
            raise TypeError(f"config: expected an RNNConfig, got {type(config).__name__}")
        c = config
        super().__init__(np.dtype(c.dtype))
        self.config = c
        if scheduled_sampling is not None and not isinstance(scheduled_sampling, ScheduledSampling):
            raise TypeError(f"scheduled_sampling: expected a ScheduledSampling or None, "
                            f"got {type(scheduled_sampling).__name__}")
        self.scheduled_sampling = scheduled_sampling
        rng = np.random.default_rng(c.seed)
        dt, E, H, KHe = self.dtype, c.embedding_size, c.hidden_size, c.state_size
        feed = c.attention_feed if c.attention != "none" else None
        self.feed = feed  # where the context goes: "output", "input", "both", or None (no attention)
        # the head (and Luong's attentional hidden), the model's own parameters
        if feed in ("output", "both"):
            bound = 1.0 / np.sqrt(KHe + H)
            self.add_param("W_c", rng.uniform(-bound, bound, size=(KHe + H, H)))
        bound = 1.0 / np.sqrt(H)
        self.add_param("W_U", rng.uniform(-bound, bound, size=(H, c.tgt_vocab_size)))
        self.add_param("b_U", rng.uniform(-bound, bound, size=(c.tgt_vocab_size,)))
        # the encoder
        self.src_embed = Embedding(c.src_vocab_size, E, c.pad_id, rng=rng, dtype=dt)
        self.encoder = Recurrent(c.cell, E, c.enc_hidden, c.n_encoder_layers, c.bidirectional, rng=rng, dtype=dt)
        if c.uses_bridge:
            self.bridge_h = Linear(KHe, H, rng=rng, dtype=dt)
            if c.cell == "lstm":
                self.bridge_c = Linear(KHe, H, rng=rng, dtype=dt)
        # the decoder: what its input is made of, in order, and the parts' widths
        self.tgt_embed = self.src_embed if c.share_embeddings else \
            Embedding(c.tgt_vocab_size, E, c.pad_id, rng=rng, dtype=dt)
        self.input_parts = {"embedding": E}
        if c.conditioning in ("concat", "both"):
            self.input_parts["conditioning"] = KHe
        if feed == "input":
            self.input_parts["context"] = KHe
        if feed == "both":
            self.input_parts["feed"] = H
        Cell = CELLS[c.cell]
        D_in = sum(self.input_parts.values())
        self.decoder_cells = [Cell(D_in if l == 0 else H, H, rng=rng, dtype=dt) for l in range(c.n_decoder_layers)]
        if c.attention == "additive":
            self.attention = ATTENTIONS["additive"](H, KHe, c.attention_size or H, rng=rng, dtype=dt)
        elif c.attention == "general":
            self.attention = ATTENTIONS["general"](H, KHe, rng=rng, dtype=dt)
        elif c.attention == "dot":
            self.attention = ATTENTIONS["dot"](H, KHe, dtype=dt)
        else:
            self.attention = None

    # ---- checks at the entry points --------------------------------------------------------------
    def _check_ids(self, name: str, ids, vocab_size: int) -> np.ndarray:
        ids = check_token_ids(name, ids, vocab_size)
        if ids.ndim != 2 or ids.shape[1] < 1:
            raise ValueError(f"{name}: expected shape (B, length) with length >= 1, got {ids.shape}")
        if ids.shape[1] > self.config.max_len:
            raise ValueError(f"{name}: expected at most max_len={self.config.max_len} positions, got {ids.shape[1]}")
        return ids

    def source_lengths(self, src_ids: np.ndarray) -> np.ndarray:
        """(B,) real tokens per row of right-padded ``src_ids`` (B, S); at least one per row."""
        pad = self.config.pad_id
        real = src_ids != pad  # (B, S)
        lengths = real.sum(axis=1)  # (B,)
        if (lengths == 0).any():
            raise ValueError(f"src_ids: expected at least one real token per row, got row {int(np.argmin(lengths))} "
                             f"all padding (pad_id={pad})")
        right_padded = real == (np.arange(src_ids.shape[1])[None, :] < lengths[:, None])  # (B, S)
        if not right_padded.all():
            b = int(np.argmin(right_padded.all(axis=1)))
            raise ValueError(f"src_ids: expected right padding (pad_id={pad} only after a row's real tokens), "
                             f"got row {b} = {src_ids[b].tolist()}")
        return lengths

    # ---- the encoder -------------------------------------------------------------------------------------
    def encode(self, src_ids: np.ndarray):
        """src_ids (B, S), right-padded -> EncoderMemory, cache.  Runs once per example."""
        c = self.config
        src_ids = self._check_ids("src_ids", src_ids, c.src_vocab_size)
        B, S = src_ids.shape
        K, L = c.num_directions, c.n_encoder_layers
        lengths = self.source_lengths(src_ids)  # (B,)
        order = reversal_index(lengths, S) if c.reverse_source else None  # (B, S)
        read = np.take_along_axis(src_ids, order, axis=1) if c.reverse_source else src_ids  # (B, S) as read
        x, c_embed = self.src_embed.forward(read)  # (B, S, E)
        (states, final), c_rnn = self.encoder.forward(x, lengths)  # (B, S, K He), (L K, B, He)
        if c.reverse_source:
            states = np.take_along_axis(states, order[:, :, None], axis=1)  # (B, S, K He) back to source order
        mask = np.where(np.arange(S)[None, :] < lengths[:, None], 0.0, MASK_VALUE).astype(self.dtype)  # (B, S)
        # the conditioning vector: the top layer's final states, directions side by side
        conditioning = map_state(lambda a: a[(L - 1) * K:].transpose(1, 0, 2).reshape(B, K * c.enc_hidden),
                                 final)  # (K, B, He) -> (B, K, He) -> (B, K He)
        keys, c_keys = self.attention.project_keys(states) if self.attention is not None else (None, None)
        return EncoderMemory(states, mask, keys, conditioning), EncoderCache(c_embed, c_rnn, order, c_keys)

    def encode_backward(self, dH_enc: np.ndarray, dconditioning, cache: EncoderCache) -> np.ndarray:
        """dH_enc (B, S, K He), dconditioning (B, K He) [LSTMState] or None -> dsrc_embeddings (B, S, E),
        in source order.  Accumulates the encoder's and the source embedding's gradients."""
        c = self.config
        B, S, _ = dH_enc.shape
        K, L, He = c.num_directions, c.n_encoder_layers, c.enc_hidden
        dfinal = self.encoder.zero_state(B)  # (L K, B, He)
        if dconditioning is not None:
            # forward: conditioning = the top layer's K final states, side by side
            for dfin, dcond in zip(dfinal if isinstance(dfinal, LSTMState) else (dfinal,),
                                   dconditioning if isinstance(dconditioning, LSTMState) else (dconditioning,)):
                dfin[(L - 1) * K:] = dcond.reshape(B, K, He).transpose(1, 0, 2)  # (B, K He) -> (K, B, He)
        dstates = dH_enc
        if c.reverse_source:
            dstates = np.take_along_axis(dH_enc, cache.order[:, :, None], axis=1)  # to reading order: its own inverse
        dx, _ = self.encoder.backward(RecurrentOutput(dstates, dfinal), cache.rnn)  # (B, S, E)
        self.src_embed.backward(dx, cache.embed)
        return np.take_along_axis(dx, cache.order[:, :, None], axis=1) if c.reverse_source else dx

    # ---- the decoder's initial state -----------------------------------------------------------------
    def initial_state(self, memory: EncoderMemory):
        """s_0 for every decoder layer: the bridged conditioning vector ("init", "both"), else zeros."""
        c = self.config
        B = memory.mask.shape[0]
        cache = None
        if c.conditioning in ("init", "both"):
            s0 = memory.conditioning
            if c.uses_bridge:
                # h_0 = tanh(h_enc W + b);  the LSTM's c_0 = c_enc W' + b' (a cell state is not squashed)
                a, c_h = self.bridge_h.forward(hidden(s0))  # (B, H)
                h0 = np.tanh(a)
                if c.cell == "lstm":
                    c0, c_c = self.bridge_c.forward(s0.c)  # (B, H)
                    s0, cache = LSTMState(h0, c0), (c_h, h0, c_c)
                else:
                    s0, cache = h0, (c_h, h0, None)
            layers = (s0,) * c.n_decoder_layers  # every layer starts from it
        else:
            layers = tuple(cell.zero_state(B) for cell in self.decoder_cells)
        feed = np.zeros((B, c.hidden_size), dtype=self.dtype) if self.feed == "both" else None
        return DecoderState(layers, feed), cache

    def initial_state_backward(self, dstate: DecoderState, cache):
        """dL/ds_0 -> dL/d(conditioning vector) through "init" (None without it)."""
        c = self.config
        if c.conditioning not in ("init", "both"):
            return None
        ds0 = map_state(lambda *a: sum(a), *dstate.layers)  # every layer started from s_0: the gradients add
        if not c.uses_bridge:
            return ds0
        c_h, h0, c_c = cache
        dcond_h = self.bridge_h.backward(hidden(ds0) * (1.0 - h0 * h0), c_h)  # forward: h_0 = tanh(h_enc W + b)
        if c.cell == "lstm":
            return LSTMState(dcond_h, self.bridge_c.backward(ds0.c, c_c))  # forward: c_0 = c_enc W' + b'
        return dcond_h

    # ---- one decoder step ------------------------------------------------------------------------------
    def _attend(self, query: np.ndarray, memory: EncoderMemory):
        return self.attention.forward(query, memory.keys, memory.states, memory.mask)  # (B, K He), cache

    def step_forward(self, y_prev: np.ndarray, state: DecoderState, memory: EncoderMemory):
        """One decoder step.  y_prev (B,) the token fed, state s_{t-1} -> logits (B, V), s_t, cache."""
        p = self.params
        e, c_embed = self.tgt_embed.forward(y_prev)  # (B, E)
        parts, c_attn = {"embedding": e}, None
        if "conditioning" in self.input_parts:
            parts["conditioning"] = hidden(memory.conditioning)  # (B, K He), at every step
        if self.feed == "input":  # Bahdanau: the previous state asks, the context joins the input
            parts["context"], c_attn = self._attend(hidden(state.layers[-1]), memory)  # (B, K He)
        if self.feed == "both":
            parts["feed"] = state.feed  # (B, H) h~_{t-1}
        x = np.concatenate([parts[name] for name in self.input_parts], axis=-1)  # (B, D_in)
        layers, c_cells = [], []
        for cell, s in zip(self.decoder_cells, state.layers):
            s, c_cell = cell.forward(x, s)  # (B, H)
            layers.append(s)
            c_cells.append(c_cell)
            x = hidden(s)  # the next layer's input
        h = x  # (B, H) the top layer's output
        combined = None
        if self.feed in ("output", "both"):  # Luong: the new state asks, h~_t = tanh([c_t; h_t] W_c)
            context, c_attn = self._attend(h, memory)  # (B, K He)
            combined = np.concatenate([context, h], axis=-1)  # (B, K He + H)
            o = np.tanh(affine_forward(combined, p["W_c"], None))  # (B, K He + H) @ (K He + H, H) -> (B, H)
        else:
            o = h
        logits = affine_forward(o, p["W_U"], p["b_U"])  # (B, H) @ (H, V) -> (B, V)
        new_state = DecoderState(tuple(layers), o if self.feed == "both" else None)
        return logits, new_state, StepCache(c_embed, c_attn, c_cells, combined, o)

    def step_backward(self, dlogits: np.ndarray, dstate: DecoderState, cache: StepCache):
        """dlogits (B, V) and dL/ds_t (from step t+1) -> dL/ds_{t-1}, this step's MemoryShare."""
        c = self.config
        KHe = c.state_size
        dvalues = dkeys = dcond = None
        # forward: logits = o W_U + b_U
        do, dW_U, db_U = affine_backward(dlogits, cache.o, self.params["W_U"])  # (B, H)
        self.grads["W_U"] += dW_U
        self.grads["b_U"] += db_U
        if self.feed == "both":
            do = do + dstate.feed  # h~_t was also step t+1's input
        if self.feed in ("output", "both"):
            # forward: o = tanh([c_t; h_t] W_c)
            dz = do * (1.0 - cache.o * cache.o)  # (B, H)
            dcombined, dW_c, _ = affine_backward(dz, cache.combined, self.params["W_c"])  # (B, K He + H)
            self.grads["W_c"] += dW_c
            dquery, dkeys, dvalues = self.attention.backward(dcombined[:, :KHe], cache.attention)
            dh = dcombined[:, KHe:] + dquery  # h_t read the context's query too
        else:
            dh = do
        # the cells, top layer first: a layer's dx is the dh of the layer below
        dlayers = list(dstate.layers)
        for l in reversed(range(len(self.decoder_cells))):
            dh, dlayers[l] = self.decoder_cells[l].backward(add_to_hidden(dlayers[l], dh), cache.cells[l])
        # forward: x = [e; conditioning; context; h~_{t-1}], in the order of input_parts
        cuts = np.cumsum(list(self.input_parts.values()))[:-1]
        dparts = dict(zip(self.input_parts, np.split(dh, cuts, axis=-1)))  # name -> (B, width)
        dfeed = dparts.get("feed")  # h~_{t-1}'s gradient, or None
        if self.feed == "input":
            dquery, dkeys, dvalues = self.attention.backward(dparts["context"], cache.attention)
            dlayers[-1] = add_to_hidden(dlayers[-1], dquery)  # the query was s_{t-1}'s top h
        if "conditioning" in dparts:
            dcond = dparts["conditioning"]
        self.tgt_embed.backward(dparts["embedding"], cache.embed)  # forward: e = W_E[y_prev]
        return DecoderState(tuple(dlayers), dfeed), MemoryShare(dvalues, dkeys, dcond)

    # ---- the decoder over a whole target ----------------------------------------------------------------
    def decode(self, decoder_input_ids: np.ndarray, memory: EncoderMemory, *, teacher_forcing: float = 1.0,
               choice: str = "argmax", rng: np.random.Generator | None = None):
        """decoder_input_ids (B, T), memory -> logits (B, T, V), cache.

        Step t > 0 is fed ``decoder_input_ids[:, t]`` (the gold y_{t-1}) with probability
        ``teacher_forcing``, else the model's own token from step t-1 (``choice``: "argmax" or
        "sample", drawn with ``rng``).  1 (default): plain teacher forcing, no randomness.  The
        choice is made on integers: no gradient flows through it (see scheduled_sampling).
        """
        c = self.config
        ids = self._check_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
        teacher_forcing = check_number("teacher_forcing", teacher_forcing, 0, 1)
        check_choice("choice", choice, CHOICES)
        if teacher_forcing < 1.0:
            rng = as_rng("rng", rng)  # the coins (and the draws)
        B, T = ids.shape
        if B != memory.mask.shape[0]:
            raise ValueError(f"decoder_input_ids: expected batch size B={memory.mask.shape[0]} (as the source), "
                             f"got {B}")
        if self.attention is not None and (memory.states is None or memory.keys is None):
            raise ValueError(f"memory: attention={c.attention!r} needs the encoder states and their keys "
                             f"(memory.states, memory.keys), got None; build memory with model.encode")
        state, c_init = self.initial_state(memory)
        fed = ids.copy()  # (B, T) what each step is fed
        gold = np.ones((B, T), dtype=bool)  # (B, T)
        logits = np.empty((B, T, c.tgt_vocab_size), dtype=self.dtype)  # (B, T, V)
        steps = []
        for t in range(T):
            if t > 0 and teacher_forcing < 1.0:
                own = choose_tokens(logits[:, t - 1], choice, rng)  # (B,) integers: the gradient stops here
                gold[:, t] = rng.random(B) < teacher_forcing
                fed[:, t] = np.where(gold[:, t], ids[:, t], own)
            logits[:, t], state, c_step = self.step_forward(fed[:, t], state, memory)
            steps.append(c_step)
        return logits, DecoderCache(c_init, steps, state, fed, gold)

    # ---- forward and backward ------------------------------------------------------------------------
    def forward(self, src_ids: np.ndarray, decoder_input_ids: np.ndarray, *, teacher_forcing: float | None = None,
                choice: str = "argmax", rng=None):
        """src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V), cache.

        ``teacher_forcing`` (the probability eps of feeding the gold token, see :meth:`decode`):
        by default 1, except in training mode with a ``scheduled_sampling`` policy, which then
        gives eps (its schedule's next value), the choice and the rng -- one schedule step
        per training forward.  An explicit eps < 1 needs ``rng`` (a Generator or a seed).
        """
        if teacher_forcing is None:
            policy = self.scheduled_sampling if self.training else None
            if policy is not None:
                teacher_forcing, choice, rng = policy.next_probability(), policy.choice, policy.rng
            else:
                teacher_forcing = 1.0
        src_ids, decoder_input_ids = np.asarray(src_ids), np.asarray(decoder_input_ids)
        if src_ids.ndim == 2 and decoder_input_ids.ndim == 2 and src_ids.shape[0] != decoder_input_ids.shape[0]:
            raise ValueError(f"decoder_input_ids: expected batch size B={src_ids.shape[0]} (as src_ids), "
                             f"got {decoder_input_ids.shape[0]}")
        memory, enc_cache = self.encode(src_ids)
        logits, dec_cache = self.decode(decoder_input_ids, memory, teacher_forcing=teacher_forcing, choice=choice,
                                        rng=rng)
        return logits, RNNSeq2SeqCache(enc_cache, dec_cache, memory)

    def backward(self, dlogits: np.ndarray, cache: RNNSeq2SeqCache) -> RNNSeq2SeqGrads:
        """dlogits (B, T, V), usually (p_hat - y) / n_real from ``cross_entropy``.

        Accumulates every parameter's gradient and returns dL/dH_enc, dL/d(conditioning
        vector) and the gradient reaching each source embedding, for inspection.
        """
        enc, dec, memory = cache
        c = self.config
        # 1. the decoder steps, last to first.  Each hands back its share of the memory's gradient.
        dstate = DecoderState(tuple(map_state(np.zeros_like, s) for s in dec.final.layers),
                              None if dec.final.feed is None else np.zeros_like(dec.final.feed))  # nothing after T-1
        dH_enc = np.zeros_like(memory.states)  # (B, S, K He) the running sum over steps
        dkeys = None if memory.keys is None else np.zeros_like(memory.keys)  # (B, S, *)
        dcond_concat = np.zeros_like(hidden(memory.conditioning))  # (B, K He)
        for t in reversed(range(len(dec.steps))):
            dstate, share = self.step_backward(dlogits[:, t], dstate, dec.steps[t])
            if share.dstates is not None:
                dH_enc += share.dstates
                dkeys += share.dkeys
            if share.dconditioning is not None:
                dcond_concat += share.dconditioning
        # 2. the initial state.  forward: s_0 = bridge(conditioning) ("init"); the concat shares add to its h
        dcond = self.initial_state_backward(dstate, dec.init)
        if "conditioning" in self.input_parts:
            dcond = dcond_concat if dcond is None else add_to_hidden(dcond, dcond_concat)
            if c.cell == "lstm" and not isinstance(dcond, LSTMState):  # concat read h only: c gets nothing
                dcond = LSTMState(dcond, np.zeros_like(dcond))
        # 3. the attention's keys.  forward: keys = project_keys(H_enc), once
        if self.attention is not None:
            dH_enc += self.attention.project_keys_backward(dkeys, enc.keys)
        # 4. the encoder: BPTT from every position's state and from the final state
        dsrc = self.encode_backward(dH_enc, dcond, enc)
        return RNNSeq2SeqGrads(dH_enc, dcond, dsrc)

    # ---- inspection --------------------------------------------------------------------------------------
    @staticmethod
    def attention_weights(cache: RNNSeq2SeqCache) -> np.ndarray | None:
        """(B, T, S) the attention weights of every decoder step over the source positions
        (source order); None without attention."""
        steps = cache.decoder.steps
        if steps[0].attention is None:
            return None
        return np.stack([s.attention.a for s in steps], axis=1)  # T x (B, S) -> (B, T, S)

    # ---- free-running decoding (what minitf.decoding calls) -------------------------------------------
    def start_decoding(self, src_ids, *, group_size: int = 1, max_len: int | None = None) -> RNNDecodingState:
        """Encode ``src_ids`` (B, S) once and return the decoding state of N = B * G rows.

        ``max_len`` is accepted for the decoders' sake (a recurrent state has no capacity to size)."""
        G = check_int("group_size", group_size, low=1)
        if max_len is not None:
            check_int("max_len", max_len, 1, self.config.max_len, hint="its upper end is the model's max_len")
        memory, _ = self.encode(src_ids)
        memory = EncoderMemory(*(None if m is None else map_state(lambda a: np.repeat(a, G, axis=0), m)
                                 for m in memory))  # (N, ...): row n reads example n // G
        state, _ = self.initial_state(memory)
        return RNNDecodingState(state, memory, G, 0)

    def decode_step(self, decoder_input_ids, decoding: RNNDecodingState):
        """Feed the newest token(s) of every row: decoder_input_ids (N, T_new) -> logits (N, T_new, V),
        the advanced state.  The same :meth:`step_forward` as training, its backward caches dropped."""
        c = self.config
        ids = check_token_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size)
        N = decoding.batch_rows
        if ids.ndim != 2 or ids.shape[0] != N or ids.shape[1] < 1:
            raise ValueError(f"decoder_input_ids: expected shape (N={N}, T_new >= 1) for this state, got {ids.shape}")
        state, out = decoding.state, []
        for t in range(ids.shape[1]):
            logits, state, _ = self.step_forward(ids[:, t], state, decoding.memory)  # (N, V)
            out.append(logits)
        return np.stack(out, axis=1), decoding._replace(state=state, length=decoding.length + ids.shape[1])
