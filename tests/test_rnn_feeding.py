"""The RNN encoder-decoder's named pieces, each backward against float64 finite differences with a
random upstream gradient: the feeding schemes (Bahdanau, Luong, Luong's input feeding, none) and
Luong's attentional hidden state (minitf.rnn.feeding); the conditioning schemes and the bridge
(minitf.rnn.conditioning); the conditioning vector; one step of stacked cells (minitf.rnn.cells);
the RNN attention's softmax, which is the transformer's masked_softmax, bit for bit; and the
model's choice of schemes and its decoding entry point.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.gradcheck import check_gradients
from minitf.layers import Linear
from minitf.layers.softmax import softmax
from minitf.masks import MASK_VALUE
from minitf.models import RNNSeq2Seq
from minitf.module import Module
from minitf.rnn import ATTENTIONS, CELLS, LSTMState, RNNConfig
from minitf.rnn.attention import make_attention
from minitf.rnn.cells import map_state, stack_backward, stack_forward
from minitf.rnn.conditioning import (CONDITIONING_SCHEMES, Bridge, IdentityBridge, conditioning_vector,
                                     conditioning_vector_backward)
from minitf.rnn.feeding import (FEEDINGS, NO_SHARE, Bahdanau, Luong, LuongInputFeeding, NoAttention,
                                attentional_hidden, attentional_hidden_backward)
from minitf.rnn.recurrent import reorder_steps, reversal_index
from minitf.rnn.state import DecoderState, EncoderMemory

B, S, Dr, KDe, A = 3, 5, 4, 6, 3
LENGTHS = np.array([5, 3, 1])  # a full row, a padded one, a single real position


def parts(state) -> tuple:
    return tuple(state) if isinstance(state, LSTMState) else (state,)


def add_checked(analytic: dict, arrays: dict, name: str, value, grad) -> None:
    """Check ``grad`` against ``value``'s numerical gradient (each array of a state: name.0, name.1)."""
    for i, (a, d) in enumerate(zip(parts(value), parts(grad))):
        analytic[f"{name}.{i}"], arrays[f"{name}.{i}"] = d, a


def add_params(analytic: dict, arrays: dict, name: str, module: Module) -> None:
    for p in module.params:
        analytic[f"{name}.{p}"], arrays[f"{name}.{p}"] = module.grads[p], module.params[p]


def random_state(cell: str, rng, width: int = Dr):
    h = rng.standard_normal((B, width))
    return LSTMState(h, rng.standard_normal((B, width))) if cell == "lstm" else h


# ---- Luong's attentional hidden state ---------------------------------------------------------------------
def test_attentional_hidden_backward_matches_finite_differences(assert_grads_ok):
    rng = np.random.default_rng(0)
    context, h = rng.standard_normal((B, KDe)), rng.standard_normal((B, Dr))
    W_c = 0.5 * rng.standard_normal((KDe + Dr, Dr))
    G = rng.standard_normal((B, Dr))

    def f() -> float:
        return float(np.sum(attentional_hidden(context, h, W_c)[0] * G))

    h_tilde, combined = attentional_hidden(context, h, W_c)
    dcontext, dh, dW_c = attentional_hidden_backward(G, h_tilde, combined, W_c)
    assert_grads_ok(check_gradients(f, {"context": dcontext, "h": dh, "W_c": dW_c},
                                    {"context": context, "h": h, "W_c": W_c}))


# ---- the feeding schemes, each place on its own ---------------------------------------------------------------
class Owner(Module):
    """What a scheme reads of its model: ``attention``, and ``W_c`` among its params."""

    def __init__(self, Feeding, attention: str, seed: int = 0):
        super().__init__(np.float64)
        rng = np.random.default_rng(seed)
        width = Dr if attention == "dot" else KDe  # c_t's: dot attention needs encoder states as wide as the query
        Feeding.add_params(self, rng, width, Dr)
        for name in self.params:  # a tanh argument of order 1, so that tanh' is not ~1 everywhere
            self.params[name] *= 3.0
        self.attention = make_attention(attention, Dr, width, A, rng=rng, dtype=np.float64)


def memory_for(owner: Owner, rng) -> EncoderMemory:
    width = owner.attention.value_size if owner.attention is not None else KDe
    states = rng.standard_normal((B, S, width))
    mask = np.where(np.arange(S)[None, :] < LENGTHS[:, None], 0.0, MASK_VALUE)  # (B, S)
    keys = None if owner.attention is None else np.array(owner.attention.project_keys(states)[0])  # its own array
    return EncoderMemory(states, mask, keys, None)


def memory_arrays(memory: EncoderMemory, share) -> tuple[dict, dict]:
    """(analytic, arrays) for the memory's states and keys, from the scheme's share."""
    if memory.keys is None:
        return {}, {}
    return {"states": share.dstates, "keys": share.dkeys}, {"states": memory.states, "keys": memory.keys}


SCHEMES = [(Feeding, attention) for Feeding in (Bahdanau, Luong, LuongInputFeeding) for attention in sorted(ATTENTIONS)]


@pytest.mark.parametrize("Feeding,attention", SCHEMES + [(NoAttention, "none")],
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_feeding_inputs_backward_matches_finite_differences(Feeding, attention, cell, assert_grads_ok):
    """Before the cells: what joins x_t, as a function of s_{t-1} (its h, and c for the LSTM), of
    h~_{t-1} and of the memory; inputs_backward's dL/ds_{t-1}, share and attention gradients."""
    owner = Owner(Feeding, attention)
    scheme = Feeding(owner, context_size=owner.attention.value_size if owner.attention else KDe, hidden_size=Dr)
    rng = np.random.default_rng(1)
    memory = memory_for(owner, rng)
    layers = (random_state(cell, rng), random_state(cell, rng))  # two decoder layers: the query is the top one's
    feed = rng.standard_normal((B, Dr))
    state = DecoderState(layers, feed)
    fed, _ = scheme.inputs(state, memory)
    assert list(fed) == list(scheme.parts) and all(fed[n].shape == (B, w) for n, w in scheme.parts.items())
    G = {name: rng.standard_normal(a.shape) for name, a in fed.items()}
    dstate_in = DecoderState(tuple(map_state(lambda a: rng.standard_normal(a.shape), s) for s in layers), None)

    def f() -> float:  # the inputs' share of the loss, plus a fixed share that already reached s_{t-1}
        got, _ = scheme.inputs(state, memory)
        fixed = sum(np.sum(a * d) for s, ds in zip(layers, dstate_in.layers) for a, d in zip(parts(s), parts(ds)))
        return float(sum(np.sum(got[n] * G[n]) for n in got) + fixed)

    owner.zero_grad()
    _, cache = scheme.inputs(state, memory)
    dstate, share = scheme.inputs_backward(G, dstate_in, NO_SHARE, cache)
    analytic, arrays = memory_arrays(memory, share) if Feeding is Bahdanau else ({}, {})
    for l, (s, ds) in enumerate(zip(layers, dstate.layers)):
        add_checked(analytic, arrays, f"layer{l}", s, ds)
    if Feeding is LuongInputFeeding:
        analytic["feed"], arrays["feed"] = dstate.feed, feed
    else:
        assert dstate.feed is None
    if Feeding is not Bahdanau:
        assert share is NO_SHARE  # only Bahdanau's attention reads the memory before the cells
    for name, g in owner.gradients().items():
        analytic[name], arrays[name] = g, owner.parameters()[name]
    assert_grads_ok(check_gradients(f, analytic, arrays))


@pytest.mark.parametrize("Feeding,attention", SCHEMES + [(NoAttention, "none")],
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_feeding_readout_backward_matches_finite_differences(Feeding, attention, assert_grads_ok):
    """After the cells: o_t (what the head reads) and the feed kept for step t+1, as functions of
    h_t, of the memory and of W_c; readout_backward's dh_t, share, dW_c and attention gradients."""
    owner = Owner(Feeding, attention)
    scheme = Feeding(owner, context_size=owner.attention.value_size if owner.attention else KDe, hidden_size=Dr)
    rng = np.random.default_rng(2)
    memory = memory_for(owner, rng)
    h = rng.standard_normal((B, Dr))
    o, feed, _ = scheme.readout(h, memory)
    G_o = rng.standard_normal(o.shape)
    G_feed = None if feed is None else rng.standard_normal(feed.shape)

    def f() -> float:
        o, feed, _ = scheme.readout(h, memory)
        return float(np.sum(o * G_o) + (0.0 if feed is None else np.sum(feed * G_feed)))

    owner.zero_grad()
    _, _, cache = scheme.readout(h, memory)
    dh, share = scheme.readout_backward(G_o, G_feed, cache)
    analytic, arrays = memory_arrays(memory, share) if Feeding is not Bahdanau else ({}, {})
    analytic["h"], arrays["h"] = dh, h
    for name, g in owner.gradients().items():
        analytic[name], arrays[name] = g, owner.parameters()[name]
    if Feeding in (Luong, LuongInputFeeding):
        assert "W_c" in analytic and (feed is None) == (Feeding is Luong)
    else:
        assert share is NO_SHARE and feed is None and o is h  # the head reads h_t itself
    assert_grads_ok(check_gradients(f, analytic, arrays))


def test_feedings_are_named_as_the_config_names_them():
    assert FEEDINGS == {"none": NoAttention, "input": Bahdanau, "output": Luong, "both": LuongInputFeeding}


# ---- the conditioning schemes and the bridge ---------------------------------------------------------------
def make_bridge(cell: str, kind: str, rng):
    if kind == "identity":
        return IdentityBridge(), KDe  # s_0 = h_enc: the widths match
    bridge_h = Linear(KDe, Dr, rng=rng, dtype=np.float64)
    bridge_c = Linear(KDe, Dr, rng=rng, dtype=np.float64) if cell == "lstm" else None
    return Bridge(bridge_h, bridge_c), Dr


@pytest.mark.parametrize("conditioning", sorted(CONDITIONING_SCHEMES))
@pytest.mark.parametrize("cell,bridge", [("lstm", "linear"), ("gru", "linear"), ("lstm", "identity")])
def test_conditioning_backward_matches_finite_differences(conditioning, cell, bridge, assert_grads_ok):
    """The initial state of L = 2 layers and T = 3 steps' inputs, as functions of h_enc (and c_enc):
    initial_state_backward, each step's inputs_backward summed, and gradient() adding the two."""
    rng = np.random.default_rng(3)
    bridge_, width = make_bridge(cell, bridge, rng)
    scheme = CONDITIONING_SCHEMES[conditioning](bridge_, width=KDe, cell_state=cell == "lstm")
    cond = random_state(cell, rng, KDe)
    zeros = tuple(map_state(np.zeros_like, random_state(cell, rng, width)) for _ in range(2))
    G_layers = tuple(map_state(lambda a: rng.standard_normal(a.shape), z) for z in zeros)
    G_steps = [{n: rng.standard_normal((B, w)) for n, w in scheme.parts.items()} for _ in range(3)]

    def f() -> float:
        layers, _ = scheme.initial_state(cond, zeros)
        total = sum(np.sum(a * g) for s, gs in zip(layers, G_layers) for a, g in zip(parts(s), parts(gs)))
        for G in G_steps:
            x = scheme.inputs(cond)
            total += sum(np.sum(x[n] * G[n]) for n in x)
        return float(total)

    modules = [m for m in (getattr(bridge_, "bridge_h", None), getattr(bridge_, "bridge_c", None)) if m is not None]
    for m in modules:
        m.zero_grad()
    layers, cache = scheme.initial_state(cond, zeros)
    assert len(layers) == 2 and list(scheme.inputs(cond)) == list(scheme.parts)
    dinit = scheme.initial_state_backward(G_layers, cache)
    dinputs = np.zeros((B, KDe))
    for G in G_steps:
        share = scheme.inputs_backward(G)
        if share is not None:
            dinputs += share
    dcond = scheme.gradient(dinit, dinputs)
    if conditioning == "none":
        assert dcond is None and all(np.all(a == 0) for s in layers for a in parts(s))
        return
    analytic, arrays = {}, {}
    add_checked(analytic, arrays, "cond", cond, dcond)
    for j, m in enumerate(modules):
        add_params(analytic, arrays, f"bridge{j}", m)
    assert_grads_ok(check_gradients(f, analytic, arrays))


@pytest.mark.parametrize("cell", ["lstm", "rnn"])
@pytest.mark.parametrize("K", [1, 2])
def test_conditioning_vector_backward_matches_finite_differences(cell, K, assert_grads_ok):
    """h_enc = the top layer's K final states side by side, from final (L K, B, De), L = 2."""
    rng = np.random.default_rng(4)
    De = KDe // K
    final = map_state(lambda a: rng.standard_normal((2 * K, B, De)), random_state(cell, rng))
    G = map_state(lambda a: rng.standard_normal((B, KDe)), final)

    def f() -> float:
        return float(sum(np.sum(a * g) for a, g in zip(parts(conditioning_vector(final, K)), parts(G))))

    analytic, arrays = {}, {}
    add_checked(analytic, arrays, "final", final, conditioning_vector_backward(G, map_state(np.zeros_like, final)))
    assert_grads_ok(check_gradients(f, analytic, arrays))


# ---- one step of stacked cells ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_stack_backward_matches_finite_differences(cell, assert_grads_ok):
    rng = np.random.default_rng(5)
    Dx = 3
    cells = [CELLS[cell](Dx if l == 0 else Dr, Dr, rng=rng, dtype=np.float64) for l in range(3)]
    x = rng.standard_normal((B, Dx))
    states = tuple(random_state(cell, rng) for _ in cells)
    G = tuple(map_state(lambda a: rng.standard_normal(a.shape), s) for s in states)

    def f() -> float:
        new, _ = stack_forward(cells, x, states)
        return float(sum(np.sum(a * g) for s, gs in zip(new, G) for a, g in zip(parts(s), parts(gs))))

    for c in cells:
        c.zero_grad()
    _, caches = stack_forward(cells, x, states)
    G_top_h = rng.standard_normal((B, Dr))  # a gradient at the top layer's output h as well

    def f_total() -> float:
        new, _ = stack_forward(cells, x, states)
        return f() + float(np.sum(parts(new[-1])[0] * G_top_h))

    dx, dstates = stack_backward(cells, G_top_h, G, caches)
    analytic, arrays = {"x": dx}, {"x": x}
    for l, (s, ds, c) in enumerate(zip(states, dstates, cells)):
        add_checked(analytic, arrays, f"state{l}", s, ds)
        add_params(analytic, arrays, f"cell{l}", c)
    assert_grads_ok(check_gradients(f_total, analytic, arrays))


# ---- reading backwards --------------------------------------------------------------------------------------
def test_reversal_reads_real_steps_backwards_and_is_its_own_inverse():
    order = reversal_index(LENGTHS, S)
    np.testing.assert_array_equal(order, [[4, 3, 2, 1, 0], [2, 1, 0, 3, 4], [0, 1, 2, 3, 4]])
    x = np.arange(B * S * 2).reshape(B, S, 2)
    np.testing.assert_array_equal(reorder_steps(reorder_steps(x, order), order), x)
    assert reorder_steps(x, None) is x


# ---- the RNN attention's softmax is the transformer's ------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(ATTENTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rnn_attention_weights_are_the_old_formula_bit_for_bit(kind, dtype):
    """a = masked_softmax(e + mask, mask) equals what rnn/attention.py computed itself before it
    called minitf.attention.masked_softmax: softmax(e + mask), then zero rows with nothing to attend to."""
    rng = np.random.default_rng(6)
    attn = make_attention(kind, Dr, Dr, A, rng=rng, dtype=dtype)
    values = rng.standard_normal((B + 1, S, Dr)).astype(dtype)
    lengths = np.array([5, 3, 1, 0])  # the last row has no real position at all
    mask = np.where(np.arange(S)[None, :] < lengths[:, None], 0.0, MASK_VALUE).astype(dtype)
    s = rng.standard_normal((B + 1, Dr)).astype(dtype)
    keys, _ = attn.project_keys(values)
    _, cache = attn.forward(s, keys, values, mask)
    e, _ = attn.score(s, keys)
    old = softmax(e + mask)
    row_alive = mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2
    old *= row_alive
    np.testing.assert_array_equal(cache.a, old)
    assert np.all(cache.a[-1] == 0.0) and np.all(cache.a[~(np.arange(S)[None, :] < lengths[:, None])] == 0.0)


# ---- the model picks its schemes once; its decoding entry point ------------------------------------------
def test_the_model_builds_the_schemes_its_config_names():
    for conditioning, attention, feed, Feeding in [("init", "none", "output", NoAttention),
                                                   ("concat", "additive", "input", Bahdanau),
                                                   ("both", "general", "output", Luong),
                                                   ("none", "dot", "both", LuongInputFeeding)]:
        model = RNNSeq2Seq(RNNConfig(conditioning=conditioning, attention=attention, attention_feed=feed,
                                     hidden_size=8, embedding_size=4))
        assert type(model.conditioning) is CONDITIONING_SCHEMES[conditioning] and type(model.feeding) is Feeding
        assert ("W_c" in model.parameters()) == (Feeding in (Luong, LuongInputFeeding))


def test_start_decoding_refuses_coverage():
    model = RNNSeq2Seq(RNNConfig(attention="additive", hidden_size=8, embedding_size=4))
    src = np.array([[3, 4, 5], [6, 0, 0]])
    with pytest.raises(ValueError, match=r"^coverage: expected False for a RNNSeq2Seq \(the coverage vector sums an "
                                         r"encoder-decoder's cross-attention weights\), got True"):
        model.start_decoding(src, coverage=True)
    state = model.start_decoding(src, group_size=3, coverage=False)
    assert state.batch_rows == 6 and state.memory.mask.shape == (6, 3)
