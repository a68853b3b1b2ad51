"""The sequence layer (BPTT over padded batches, stacked, bidirectional) and the RNN decoder's
attention (additive, dot, general): backward against float64 finite differences, and what
padding must do -- a padded step keeps the state, outputs zero and gets no gradient; the
reverse direction starts at each row's own last real step; a padded source position gets
zero attention weight, never NaN.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.gradcheck import check_gradients
from minitf.masks import MASK_VALUE
from minitf.rnn import ATTENTIONS, CELLS, LSTMState, Recurrent, RecurrentOutput
from minitf.rnn.cells import map_state

D, H = 3, 4
LENGTHS = np.array([5, 3, 1])  # one full row, one padded, one with a single real step
B, T = len(LENGTHS), int(LENGTHS.max())


def make_layer(kind: str, num_layers: int, bidirectional: bool, seed: int = 0) -> Recurrent:
    return Recurrent(kind, D, H, num_layers, bidirectional, rng=np.random.default_rng(seed), dtype=np.float64)


def random_state(layer: Recurrent, B: int, rng):
    return map_state(lambda a: 0.5 * rng.standard_normal(a.shape), layer.zero_state(B))


def parts(state) -> tuple:
    return tuple(state) if isinstance(state, LSTMState) else (state,)


# ---- BPTT against finite differences ---------------------------------------------------------------
LAYER_CASES = [(kind, L, bi) for kind in sorted(CELLS) for (L, bi) in ((1, False), (2, True))]


@pytest.mark.parametrize("kind,num_layers,bidirectional", LAYER_CASES)
def test_recurrent_backward_matches_finite_differences(kind, num_layers, bidirectional, assert_grads_ok):
    """Padded batch; upstream gradient on every output and on every final state (h and c);
    checked: x, the initial state, every cell's four weights."""
    layer = make_layer(kind, num_layers, bidirectional)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, D))
    initial = random_state(layer, B, rng)
    (outputs, final), _ = layer.forward(x, LENGTHS, initial)
    G_out = rng.standard_normal(outputs.shape)
    G_fin = map_state(lambda a: rng.standard_normal(a.shape), final)

    def f() -> float:
        (o, fin), _ = layer.forward(x, LENGTHS, initial)
        return float(np.sum(o * G_out) + sum(np.sum(a * g) for a, g in zip(parts(fin), parts(G_fin))))

    layer.zero_grad()
    _, cache = layer.forward(x, LENGTHS, initial)
    dx, dinitial = layer.backward(RecurrentOutput(G_out, G_fin), cache)
    analytic, arrays = {"x": dx}, {"x": x}
    for i, (da, a) in enumerate(zip(parts(dinitial), parts(initial))):
        analytic[f"initial{i}"], arrays[f"initial{i}"] = da, a
    for name, p in layer.parameters().items():
        analytic[name], arrays[name] = layer.gradients()[name].copy(), p
    report = check_gradients(f, analytic, arrays, max_entries=15)
    assert len(report) == 1 + len(parts(initial)) + 4 * num_layers * (2 if bidirectional else 1)
    assert_grads_ok(report)
    # the padded steps' inputs get exactly nothing
    pad = np.arange(T)[None, :] >= LENGTHS[:, None]  # (B, T)
    assert np.all(dx[pad] == 0.0) and np.abs(dx[~pad]).min() > 0


def test_final_state_gradient_alone_reaches_every_real_step():
    """No output gradient, only the final state's: BPTT carries it back to x_0."""
    layer = make_layer("lstm", 1, False)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((B, T, D))
    (outputs, final), cache = layer.forward(x, LENGTHS)
    dx, _ = layer.backward(RecurrentOutput(np.zeros_like(outputs), map_state(np.ones_like, final)), cache)
    assert np.abs(dx[:, 0]).min() > 0


# ---- padding --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_padded_rows_equal_their_unpadded_runs(kind):
    """Each row of a padded batch (2 layers, bidirectional) gives the outputs and final state of
    the same row run alone, unpadded: so padded steps keep the state, the reverse direction starts
    at the row's own last real step, and outputs at padded steps are exactly zero.  Garbage in the
    padded inputs changes nothing."""
    layer = make_layer(kind, 2, True, seed=4)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((B, T, D))
    initial = random_state(layer, B, rng)
    (outputs, final), _ = layer.forward(x, LENGTHS, initial)
    for b, n in enumerate(LENGTHS):
        row_initial = map_state(lambda a: a[:, b:b + 1], initial)
        (o, fin), _ = layer.forward(x[b:b + 1, :n], None, row_initial)
        np.testing.assert_allclose(outputs[b, :n], o[0], rtol=1e-12, atol=1e-14)
        assert np.all(outputs[b, n:] == 0.0)
        for got, want in zip(parts(final), parts(fin)):
            np.testing.assert_allclose(got[:, b], want[:, 0], rtol=1e-12, atol=1e-14)
    garbage = x.copy()
    garbage[np.arange(T)[None, :] >= LENGTHS[:, None]] = 1e3
    (outputs2, final2), _ = layer.forward(garbage, LENGTHS, initial)
    np.testing.assert_array_equal(outputs2, outputs)
    for a, b_ in zip(parts(final2), parts(final)):
        np.testing.assert_array_equal(a, b_)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_padded_steps_get_no_gradient(kind):
    """The weight gradients of a padded batch are the sum of its rows' unpadded gradients, and the
    initial state's gradient passes through the padding unchanged."""
    layer = make_layer(kind, 2, True, seed=5)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((B, T, D))
    (outputs, final), cache = layer.forward(x, LENGTHS)
    G_out = rng.standard_normal(outputs.shape)
    G_fin = map_state(lambda a: rng.standard_normal(a.shape), final)
    layer.zero_grad()
    dx, dinit = layer.backward(RecurrentOutput(G_out, G_fin), cache)
    padded = {k: g.copy() for k, g in layer.gradients().items()}

    layer.zero_grad()
    for b, n in enumerate(LENGTHS):
        _, c_b = layer.forward(x[b:b + 1, :n])
        dx_b, dinit_b = layer.backward(RecurrentOutput(G_out[b:b + 1, :n], map_state(lambda a: a[:, b:b + 1], G_fin)),
                                       c_b)
        np.testing.assert_allclose(dx[b, :n], dx_b[0], rtol=1e-11, atol=1e-14)
        for got, want in zip(parts(dinit), parts(dinit_b)):
            np.testing.assert_allclose(got[:, b], want[:, 0], rtol=1e-11, atol=1e-14)
    for k, g in layer.gradients().items():
        np.testing.assert_allclose(padded[k], g, rtol=1e-11, atol=1e-14, err_msg=k)


def test_one_layer_padded_step_is_the_identity_on_the_state():
    """Directly: after the last real step of row 1 (length 3), its state does not move."""
    layer = make_layer("lstm", 1, False, seed=7)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((B, T, D))
    (_, final_padded), _ = layer.forward(x, LENGTHS)
    (_, final_cut), _ = layer.forward(x[:, :3], np.minimum(LENGTHS, 3))
    np.testing.assert_array_equal(final_padded.h[0, 1], final_cut.h[0, 1])
    np.testing.assert_array_equal(final_padded.c[0, 1], final_cut.c[0, 1])


# ---- bad input ----------------------------------------------------------------------------------------
def test_unknown_cell_type_is_refused():
    with pytest.raises(ValueError, match=r"^cell: expected one of 'rnn', 'lstm', 'gru', got 'transformer'"):
        Recurrent("transformer", D, H, rng=np.random.default_rng(0))


@pytest.mark.parametrize("lengths,message", [
    ([5, 6, 1], r"lengths: expected each row's number of real steps, in \[1, T=5\].*got \[5, 6, 1\]"),
    ([5, 0, 1], r"lengths: expected each row's number of real steps, in \[1, T=5\].*got \[5, 0, 1\]"),
    ([5, 3], r"lengths: expected an integer array of shape \(B,\) = \(3,\)"),
    ([5.0, 3.0, 1.0], r"lengths: expected an integer array of shape \(B,\) = \(3,\), got float64"),
])
def test_bad_lengths_are_refused(lengths, message):
    layer = make_layer("gru", 1, False)
    with pytest.raises(ValueError, match=message):
        layer.forward(np.zeros((B, T, D)), np.array(lengths))


def test_bad_inputs_and_initial_states_are_refused():
    layer = make_layer("lstm", 2, True)
    with pytest.raises(ValueError, match=r"^x: expected shape \(\*, \*, 3\)"):
        layer.forward(np.zeros((B, T, D + 1)))
    with pytest.raises(TypeError, match=r"^initial: expected an LSTMState\(h, c\) for an LSTM, got ndarray"):
        layer.forward(np.zeros((B, T, D)), initial=np.zeros((4, B, H)))
    with pytest.raises(ValueError, match=r"^initial.h: expected shape \(4, 3, 4\)"):
        layer.forward(np.zeros((B, T, D)), initial=LSTMState(np.zeros((2, B, H)), np.zeros((4, B, H))))


# ---- attention over the encoder states -------------------------------------------------------------------
S, Hq, He, A = 5, 4, 6, 3
SRC_LENGTHS = np.array([5, 2, 3])


def make_attention(kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if kind == "additive":
        attn = ATTENTIONS[kind](Hq, He, A, rng=rng, dtype=np.float64)
    elif kind == "general":
        attn = ATTENTIONS[kind](Hq, He, rng=rng, dtype=np.float64)
    else:
        attn = ATTENTIONS[kind](Hq, Hq, dtype=np.float64)
    values = rng.standard_normal((B, S, attn.value_size))
    s = rng.standard_normal((B, Hq))
    mask = np.where(np.arange(S)[None, :] < SRC_LENGTHS[:, None], 0.0, MASK_VALUE)  # (B, S)
    return attn, s, values, mask, rng


@pytest.mark.parametrize("kind", sorted(ATTENTIONS))
def test_attention_backward_matches_finite_differences(kind, assert_grads_ok):
    """Keys projected once from the values; the values' gradient is the sum of their two paths."""
    attn, s, values, mask, rng = make_attention(kind)
    G = rng.standard_normal((B, values.shape[-1]))

    def run():
        keys, c_keys = attn.project_keys(values)
        context, c_att = attn.forward(s, keys, values, mask)
        return context, c_keys, c_att

    def f() -> float:
        return float(np.sum(run()[0] * G))

    attn.zero_grad()
    _, c_keys, c_att = run()
    ds, dkeys, dvalues = attn.backward(G, c_att)
    dvalues = dvalues + attn.project_keys_backward(dkeys, c_keys)
    analytic, arrays = {"s": ds, "values": dvalues}, {"s": s, "values": values}
    for name, p in attn.params.items():
        analytic[name], arrays[name] = attn.grads[name].copy(), p
    report = check_gradients(f, analytic, arrays, max_entries=None)
    assert set(report) == {"s", "values"} | set(attn.params)
    assert_grads_ok(report)
    pad = np.arange(S)[None, :] >= SRC_LENGTHS[:, None]
    assert np.all(dvalues[pad] == 0.0)  # a padded state is never read: no gradient


@pytest.mark.parametrize("kind", sorted(ATTENTIONS))
def test_padded_positions_get_zero_weight_never_nan(kind):
    attn, s, values, mask, _ = make_attention(kind, seed=1)
    keys, _ = attn.project_keys(1e4 * values)  # enormous scores
    _, cache = attn.forward(1e4 * s, keys, 1e4 * values, mask)
    pad = np.arange(S)[None, :] >= SRC_LENGTHS[:, None]
    assert np.all(np.isfinite(cache.a))
    assert np.all(cache.a[pad] == 0.0)
    np.testing.assert_allclose(cache.a.sum(axis=1), 1.0, rtol=1e-12)


def test_additive_score_is_bahdanaus_formula():
    attn, s, values, mask, _ = make_attention("additive", seed=2)
    p = attn.params
    keys, _ = attn.project_keys(values)
    _, cache = attn.forward(s, keys, values, np.zeros((B, S)))
    e = np.tanh((s @ p["W_a"])[:, None, :] + values @ p["U_a"]) @ p["v"]  # (B, S)
    np.testing.assert_allclose(cache.a, np.exp(e) / np.exp(e).sum(1, keepdims=True), rtol=1e-12)


def test_dot_attention_needs_equal_widths():
    with pytest.raises(ValueError, match=r"^value_size: dot attention needs encoder states as wide as the query"):
        ATTENTIONS["dot"](4, 6)
