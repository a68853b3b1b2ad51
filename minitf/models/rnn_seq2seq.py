"""The RNN encoder-decoder (Sutskever et al., 2014; Cho et al., 2014; Bahdanau et al., 2015;
Luong et al., 2015), forward and backward: Lesson 1.

Widths as in :mod:`minitf.rnn.config`: E embedding, Dr the decoder's recurrent width, De the
encoder's per direction, K directions; B batch, S source length, T target length, V vocabulary.

    H_enc, h_enc = Encoder(src_ids)              (B, S, K De) every source position's state; its final state
    s_0 = conditioning.initial_state(h_enc)      Sutskever's bridge(h_enc) ("init", "both"), else zeros
    for t = 0 .. T-1:                            the one loop, over target steps
        x_t      = [E y_{t-1}; conditioning.inputs(h_enc); feeding.inputs(s_{t-1})]
        s_t      = cells(x_t, s_{t-1})           the decoder's stacked cells; h_t its top layer's output
        o_t      = feeding.readout(h_t)          Luong's h~_t = tanh([c_t; h_t] W_c), else h_t
        logits_t = o_t W_U + b_U                 (B, V)

The two schemes, chosen once from the config: how h_enc reaches the decoder
(:mod:`minitf.rnn.conditioning`) and where the attention's context c_t goes
(:mod:`minitf.rnn.feeding`).  One step function serves teacher-forced training, scheduled
sampling and free-running decoding (:meth:`~RNNSeq2Seq.start_decoding`,
:meth:`~RNNSeq2Seq.decode_step`: what ``minitf.decoding`` calls).  Backward: the steps in
reverse, each handing back its share of dL/dH_enc and of dL/dh_enc; then h_enc's two paths,
the keys' projection, and the encoder's BPTT.
"""
from __future__ import annotations

import numpy as np

from ..layers import Embedding, Linear
from ..layers.linear import affine_backward, affine_forward
from ..masks import key_padding_mask
from ..module import Module
from ..rnn.attention import make_attention
from ..rnn.cells import CELLS, hidden, stack_backward, stack_forward
from ..rnn.checks import (check_config, check_decoding, check_ids, check_memory, check_policy, check_same_batch,
                          check_step_ids, check_teacher_forcing, right_padded_lengths)
from ..rnn.conditioning import (CONDITIONING_SCHEMES, Bridge, IdentityBridge, conditioning_vector,
                                conditioning_vector_backward)
from ..rnn.config import RNNConfig, default_rnn_config
from ..rnn.feeding import FEEDINGS
from ..rnn.recurrent import Recurrent, RecurrentOutput, reorder_steps, reversal_index
from ..rnn.scheduled_sampling import ScheduledSampling, gold_or_own
from ..rnn.state import (DecoderCache, DecoderState, EncoderCache, EncoderMemory, MemoryShare, RNNDecodingState,
                         RNNSeq2SeqCache, RNNSeq2SeqGrads, StepCache, zeros_like_state)

__all__ = ["RNNSeq2Seq", "RNNSeq2SeqGrads", "EncoderMemory", "DecoderState", "MemoryShare", "RNNDecodingState",
           "default_rnn_config", "reversal_index"]


class RNNSeq2Seq(Module):
    """An RNN encoder-decoder built from :class:`~minitf.rnn.RNNConfig`; ``scheduled_sampling``: the
    teacher-forcing policy of training-mode forwards (None: always the gold token), see :meth:`forward`.

    Parameter names (flat view): ``W_c`` (K De + Dr, Dr; Luong's feeding), ``W_U`` (Dr, V), ``b_U``
    (V,), ``src_embed.W_E``, ``encoder.forward_cells.{l}.*`` and ``encoder.reverse_cells.{l}.*``
    (bidirectional), ``bridge_h.W/b`` and ``bridge_c.W/b`` (LSTM) when there is a bridge,
    ``tgt_embed.W_E`` (absent when shared), ``decoder_cells.{l}.*``, ``attention.*`` (``W_a``,
    ``U_a``, ``v`` additive; ``W_a`` general; none for dot).
    """

    def __init__(self, config: RNNConfig, scheduled_sampling: ScheduledSampling | None = None):
        c = self.config = check_config(config)
        super().__init__(np.dtype(c.dtype))
        self.scheduled_sampling = check_policy(scheduled_sampling)
        rng = np.random.default_rng(c.seed)  # every draw below, in this order
        dt, E, Dr, KDe = self.dtype, c.embedding_size, c.hidden_size, c.state_size
        Feeding = FEEDINGS[c.feeding]
        Feeding.add_params(self, rng, KDe, Dr)  # Luong's W_c: the model's own, as the head is
        bound = 1.0 / np.sqrt(Dr)
        self.add_param("W_U", rng.uniform(-bound, bound, size=(Dr, c.tgt_vocab_size)))
        self.add_param("b_U", rng.uniform(-bound, bound, size=(c.tgt_vocab_size,)))
        self.src_embed = Embedding(c.src_vocab_size, E, c.pad_id, rng=rng, dtype=dt)
        self.encoder = Recurrent(c.cell, E, c.enc_hidden, c.n_encoder_layers, c.bidirectional, rng=rng, dtype=dt)
        if c.uses_bridge:
            self.bridge_h = Linear(KDe, Dr, rng=rng, dtype=dt)
            self.bridge_c = Linear(KDe, Dr, rng=rng, dtype=dt) if c.cell == "lstm" else None
        self.tgt_embed = self.src_embed if c.share_embeddings else \
            Embedding(c.tgt_vocab_size, E, c.pad_id, rng=rng, dtype=dt)
        # the two schemes: how h_enc reaches the decoder, where the context goes
        bridge = Bridge(self.bridge_h, self.bridge_c) if c.uses_bridge else IdentityBridge()
        self.conditioning = CONDITIONING_SCHEMES[c.conditioning](bridge, width=KDe, cell_state=c.cell == "lstm")
        self.feeding = Feeding(self, context_size=KDe, hidden_size=Dr)  # it calls self.attention, reads W_c
        self.input_parts = {"embedding": E, **self.conditioning.parts, **self.feeding.parts}  # x_t, in order: widths
        D_in = sum(self.input_parts.values())
        self.decoder_cells = [CELLS[c.cell](D_in if l == 0 else Dr, Dr, rng=rng, dtype=dt)
                              for l in range(c.n_decoder_layers)]
        self.attention = make_attention(c.attention, Dr, KDe, c.attention_size or Dr, rng=rng, dtype=dt)

    # ---- the encoder -------------------------------------------------------------------------------------
    def source_lengths(self, src_ids: np.ndarray) -> np.ndarray:
        """(B,) real tokens per row of right-padded ``src_ids`` (B, S); at least one per row."""
        return right_padded_lengths(src_ids, self.config.pad_id)

    def encode(self, src_ids: np.ndarray):
        """src_ids (B, S), right-padded -> EncoderMemory, cache.  Runs once per example."""
        c = self.config
        src_ids = check_ids("src_ids", src_ids, c.src_vocab_size, c.max_len)
        S = src_ids.shape[1]
        lengths = self.source_lengths(src_ids)  # (B,)
        order = reversal_index(lengths, S) if c.reverse_source else None  # (B, S) Sutskever's reversed reading
        x, c_embed = self.src_embed.forward(reorder_steps(src_ids, order))  # (B, S, E) in reading order
        (states, final), c_rnn = self.encoder.forward(x, lengths)  # (B, S, K De), (L K, B, De)
        states = reorder_steps(states, order)  # (B, S, K De) back in source order (the reversal is its own inverse)
        mask = key_padding_mask(lengths=lengths, max_len=S, dtype=self.dtype)[:, 0, 0]  # (B, 1, 1, S) -> (B, S)
        keys, c_keys = self.attention.project_keys(states) if self.attention is not None else (None, None)
        memory = EncoderMemory(states, mask, keys, conditioning_vector(final, c.num_directions))  # h_enc (B, K De)
        return memory, EncoderCache(c_embed, c_rnn, order, c_keys)

    def encode_backward(self, dH_enc: np.ndarray, dconditioning, cache: EncoderCache) -> np.ndarray:
        """dH_enc (B, S, K De), dconditioning (B, K De) [LSTMState] or None -> dsrc_embeddings (B, S, E),
        in source order.  Accumulates the encoder's and the source embedding's gradients."""
        dfinal = self.encoder.zero_state(dH_enc.shape[0])  # (L K, B, De)
        if dconditioning is not None:  # forward: h_enc = the top layer's K final states, side by side
            dfinal = conditioning_vector_backward(dconditioning, dfinal)
        dstates = reorder_steps(dH_enc, cache.order)  # (B, S, K De) in reading order
        dx, _ = self.encoder.backward(RecurrentOutput(dstates, dfinal), cache.rnn)  # (B, S, E)
        self.src_embed.backward(dx, cache.embed)
        return reorder_steps(dx, cache.order)  # (B, S, E) in source order

    # ---- the decoder: its initial state, one step, a whole target ---------------------------------------
    def initial_state(self, memory: EncoderMemory):
        """s_0 for every decoder layer: the bridged h_enc ("init", "both"), else zeros; h~_{-1} = 0."""
        B = memory.mask.shape[0]
        zeros = tuple(cell.zero_state(B) for cell in self.decoder_cells)
        layers, cache = self.conditioning.initial_state(memory.conditioning, zeros)
        return DecoderState(layers, self.feeding.initial_feed(B, self.dtype)), cache

    def initial_state_backward(self, dstate: DecoderState, cache):
        """dL/ds_0 -> dL/dh_enc through "init" (None without it)."""
        return self.conditioning.initial_state_backward(dstate.layers, cache)

    def step_forward(self, y_prev: np.ndarray, state: DecoderState, memory: EncoderMemory):
        """One decoder step.  y_prev (B,) the token fed, state s_{t-1} -> logits (B, V), s_t, cache."""
        e, c_embed = self.tgt_embed.forward(y_prev)  # (B, E)
        fed, c_inputs = self.feeding.inputs(state, memory)  # Bahdanau: c_t, asked by h_{t-1}; input feeding: h~_{t-1}
        parts = {"embedding": e, **self.conditioning.inputs(memory.conditioning), **fed}  # Cho: h_enc
        x = np.concatenate([parts[name] for name in self.input_parts], axis=-1)  # (B, D_in)
        layers, c_cells = stack_forward(self.decoder_cells, x, state.layers)  # s_t, bottom layer first
        o, feed, c_readout = self.feeding.readout(hidden(layers[-1]), memory)  # Luong: h~_t, asked by h_t; else h_t
        logits = affine_forward(o, self.params["W_U"], self.params["b_U"])  # (B, Dr) @ (Dr, V) -> (B, V)
        return logits, DecoderState(layers, feed), StepCache(c_embed, c_inputs, c_cells, c_readout, o)

    def step_backward(self, dlogits: np.ndarray, dstate: DecoderState, cache: StepCache):
        """dlogits (B, V) and dL/ds_t (from step t+1) -> dL/ds_{t-1}, this step's MemoryShare."""
        # forward: logits = o W_U + b_U
        do, dW_U, db_U = affine_backward(dlogits, cache.o, self.params["W_U"])  # (B, Dr)
        self.grads["W_U"] += dW_U
        self.grads["b_U"] += db_U
        # forward: o, feed = feeding.readout(h_t)
        dh, share = self.feeding.readout_backward(do, dstate.feed, cache.readout)  # (B, Dr)
        # forward: s_t = cells(x_t, s_{t-1}), top layer first
        dx, dlayers = stack_backward(self.decoder_cells, dh, dstate.layers, cache.cells)  # (B, D_in), s_{t-1}-shaped
        # forward: x = [e; the conditioning's inputs; the feeding's inputs], in the order of input_parts
        cuts = np.cumsum(list(self.input_parts.values()))[:-1]
        dparts = dict(zip(self.input_parts, np.split(dx, cuts, axis=-1)))  # name -> (B, width)
        dprev, share = self.feeding.inputs_backward(dparts, DecoderState(dlayers, None), share, cache.inputs)
        self.tgt_embed.backward(dparts["embedding"], cache.embed)  # forward: e = W_E[y_prev]
        return dprev, share._replace(dconditioning=self.conditioning.inputs_backward(dparts))

    def decode(self, decoder_input_ids: np.ndarray, memory: EncoderMemory, *, teacher_forcing: float = 1.0,
               choice: str = "argmax", rng: np.random.Generator | None = None):
        """decoder_input_ids (B, T), memory -> logits (B, T, V), cache.

        Step t > 0 is fed the gold y_{t-1} (``decoder_input_ids[:, t]``) with probability
        ``teacher_forcing``, else the model's own token from step t-1 (``choice``: "argmax" or
        "sample", drawn with ``rng``): an integer, no gradient flows through it.  1: teacher forcing.
        """
        c = self.config
        ids = check_ids("decoder_input_ids", decoder_input_ids, c.tgt_vocab_size, c.max_len)
        teacher_forcing, rng = check_teacher_forcing(teacher_forcing, choice, rng)
        B, T = ids.shape
        check_memory(memory, B, c.attention)
        state, c_init = self.initial_state(memory)
        fed, gold = ids.copy(), np.ones((B, T), dtype=bool)  # (B, T) what each step is fed; where it is the gold
        logits = np.empty((B, T, c.tgt_vocab_size), dtype=self.dtype)  # (B, T, V)
        steps = []
        for t in range(T):
            if t > 0 and teacher_forcing < 1.0:  # scheduled sampling: a coin per row
                fed[:, t], gold[:, t] = gold_or_own(ids[:, t], logits[:, t - 1], teacher_forcing, choice, rng)
            logits[:, t], state, c_step = self.step_forward(fed[:, t], state, memory)
            steps.append(c_step)
        return logits, DecoderCache(c_init, steps, state, fed, gold)

    # ---- forward and backward ------------------------------------------------------------------------
    def forward(self, src_ids: np.ndarray, decoder_input_ids: np.ndarray, *, teacher_forcing: float | None = None,
                choice: str = "argmax", rng=None):
        """src_ids (B, S), decoder_input_ids (B, T) -> logits (B, T, V), cache.

        ``teacher_forcing`` eps (see :meth:`decode`): by default 1, except in training mode with a
        ``scheduled_sampling`` policy, which gives eps (its schedule's next value, one step per
        training forward), the choice and the rng.  An explicit eps < 1 needs ``rng``.
        """
        if teacher_forcing is None:
            policy = self.scheduled_sampling if self.training else None
            teacher_forcing, choice, rng = (1.0, choice, rng) if policy is None else policy.next_forward()
        src_ids, decoder_input_ids = np.asarray(src_ids), np.asarray(decoder_input_ids)
        check_same_batch(src_ids, decoder_input_ids)
        memory, enc_cache = self.encode(src_ids)
        logits, dec_cache = self.decode(decoder_input_ids, memory, teacher_forcing=teacher_forcing, choice=choice,
                                        rng=rng)
        return logits, RNNSeq2SeqCache(enc_cache, dec_cache, memory)

    def backward(self, dlogits: np.ndarray, cache: RNNSeq2SeqCache) -> RNNSeq2SeqGrads:
        """dlogits (B, T, V), usually (p_hat - y) / n_real from ``cross_entropy``.  Accumulates every
        parameter's gradient; returns dL/dH_enc, dL/dh_enc and each source embedding's, for inspection."""
        enc, dec, memory = cache
        # 1. the decoder steps, last to first.  Each hands back its share of the memory's gradient.
        dstate = zeros_like_state(dec.final)  # nothing reaches s_{T-1} from after it
        dH_enc = np.zeros_like(memory.states)  # (B, S, K De) the running sums
        dkeys = None if memory.keys is None else np.zeros_like(memory.keys)  # (B, S, *)
        dinputs = np.zeros_like(hidden(memory.conditioning))  # (B, K De) through every step's input
        for t in reversed(range(len(dec.steps))):
            dstate, share = self.step_backward(dlogits[:, t], dstate, dec.steps[t])
            if share.dstates is not None:
                dH_enc += share.dstates
                dkeys += share.dkeys
            if share.dconditioning is not None:
                dinputs += share.dconditioning
        # 2. h_enc.  forward: s_0 = bridge(h_enc) ["init"];  x_t = [...; h_enc; ...] ["concat"]
        dcond = self.conditioning.gradient(self.initial_state_backward(dstate, dec.init), dinputs)
        # 3. the attention's keys.  forward: keys = project_keys(H_enc), once
        if self.attention is not None:
            dH_enc += self.attention.project_keys_backward(dkeys, enc.keys)
        # 4. the encoder: BPTT from every position's state and from the final state
        dsrc = self.encode_backward(dH_enc, dcond, enc)
        return RNNSeq2SeqGrads(dH_enc, dcond, dsrc)

    @staticmethod
    def attention_weights(cache: RNNSeq2SeqCache) -> np.ndarray | None:
        """(B, T, S) the attention weights of every decoder step over the source positions
        (source order); None without attention."""
        steps = cache.decoder.steps
        return None if steps[0].attention is None else np.stack([s.attention.a for s in steps], axis=1)  # (B, T, S)

    # ---- free-running decoding (what minitf.decoding calls) -------------------------------------------
    def start_decoding(self, src_ids, *, group_size: int = 1, max_len: int | None = None,
                       coverage: bool = False) -> RNNDecodingState:
        """Encode ``src_ids`` (B, S) once and return the decoding state of N = B * G rows (``max_len``:
        accepted, a recurrent state has no capacity to size; ``coverage``: False, no cross-attention)."""
        G = check_decoding(self, group_size, max_len, coverage)
        memory = self.encode(src_ids)[0].repeat_rows(G)  # (N, ...): row n reads example n // G
        return RNNDecodingState(self.initial_state(memory)[0], memory, G, 0)

    def decode_step(self, decoder_input_ids, decoding: RNNDecodingState):
        """Feed the newest token(s) of every row: decoder_input_ids (N, T_new) -> logits (N, T_new, V),
        the advanced state.  The same :meth:`step_forward` as training, its backward caches dropped."""
        ids = check_step_ids(decoder_input_ids, self.config.tgt_vocab_size, decoding.batch_rows)  # (N, T_new)
        state, out = decoding.state, []
        for t in range(ids.shape[1]):
            logits, state, _ = self.step_forward(ids[:, t], state, decoding.memory)  # (N, V)
            out.append(logits)
        return np.stack(out, axis=1), decoding._replace(state=state, length=decoding.length + ids.shape[1])
