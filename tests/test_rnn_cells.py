"""The recurrent cells (tanh RNN, LSTM, GRU): each step's hand-written backward against float64
finite differences, for the input, the incoming state (h, and c for the LSTM) and all four
weights, with a random upstream gradient on every part of the new state.

Parity with torch's cells and layers is in tests/test_rnn_torch_parity.py.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from minitf.gradcheck import check_gradients
from minitf.rnn.cells import CELLS, GRUCell, LSTMCell, LSTMState, RNNCell, add_to_hidden, hidden, map_state, sigmoid

B, D, H = 3, 4, 5


def make_cell(kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    cell = CELLS[kind](D, H, rng=rng, dtype=np.float64)
    x = rng.standard_normal((B, D))
    h = 0.8 * rng.standard_normal((B, H))
    state = LSTMState(h, 1.5 * rng.standard_normal((B, H))) if kind == "lstm" else h
    return cell, x, state, rng


def cell_report(cell, x, state, rng) -> dict:
    """Finite-difference report for one step, loss = sum(new_state * G) over every part of the state."""
    new, _ = cell.forward(x, state)
    G = map_state(lambda a: rng.standard_normal(a.shape), new)  # random upstream gradient, (B, H) per part

    def loss(s) -> float:
        return float(sum(np.sum(a * g) for a, g in zip(*(
            (s, G) if isinstance(s, LSTMState) else ((s,), (G,))))))

    def f() -> float:
        return loss(cell.forward(x, state)[0])

    cell.zero_grad()
    _, cache = cell.forward(x, state)
    dx, dstate = cell.backward(G, cache)
    analytic, arrays = {"x": dx}, {"x": x}
    if isinstance(state, LSTMState):
        analytic.update(h_prev=dstate.h, c_prev=dstate.c)
        arrays.update(h_prev=state.h, c_prev=state.c)
    else:
        analytic["h_prev"], arrays["h_prev"] = dstate, state
    for name, p in cell.params.items():
        analytic[name], arrays[name] = cell.grads[name].copy(), p
    return check_gradients(f, analytic, arrays, max_entries=None)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_backward_matches_finite_differences(kind, assert_grads_ok):
    cell, x, state, rng = make_cell(kind)
    # non-zero biases of all sizes (torch-like init is already random; make them larger still)
    for name in ("b_ih", "b_hh"):
        cell.params[name][:] = 0.5 * rng.standard_normal(cell.params[name].shape)
    report = cell_report(cell, x, state, rng)
    expected = {"x", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"} | ({"c_prev"} if kind == "lstm" else set())
    assert set(report) == expected
    assert_grads_ok(report)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_backward_accumulates(kind):
    """Two backward calls add up: the gradients of a cell used at two steps are summed."""
    cell, x, state, rng = make_cell(kind, seed=3)
    new, cache = cell.forward(x, state)
    G = map_state(lambda a: rng.standard_normal(a.shape), new)
    cell.zero_grad()
    cell.backward(G, cache)
    once = {k: g.copy() for k, g in cell.grads.items()}
    cell.backward(G, cache)
    for k, g in cell.grads.items():
        np.testing.assert_allclose(g, 2 * once[k], rtol=1e-14, err_msg=k)


def test_weight_layout_and_gate_order():
    """Packed weights, gates side by side in torch's order; shapes (D, kH) / (H, kH)."""
    rng = np.random.default_rng(0)
    for Cell, k in ((RNNCell, 1), (LSTMCell, 4), (GRUCell, 3)):
        cell = Cell(D, H, rng=rng, dtype=np.float64)
        assert {n: p.shape for n, p in cell.params.items()} == {
            "W_ih": (D, k * H), "W_hh": (H, k * H), "b_ih": (k * H,), "b_hh": (k * H,)}
        bound = 1 / np.sqrt(H)
        assert all(np.abs(p).max() <= bound for p in cell.params.values())  # torch's U(-1/sqrt(H), 1/sqrt(H))


def test_lstm_step_is_the_paper_equations_gate_by_gate():
    """Column blocks i, f, g, o of the packed matrices, written out one gate at a time."""
    cell, x, (h, c), _ = make_cell("lstm", seed=5)
    p = cell.params

    def gate(k):
        cols = slice(k * H, (k + 1) * H)
        return x @ p["W_ih"][:, cols] + p["b_ih"][cols] + h @ p["W_hh"][:, cols] + p["b_hh"][cols]

    logistic = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    i, f, g, o = logistic(gate(0)), logistic(gate(1)), np.tanh(gate(2)), logistic(gate(3))
    c_new = f * c + i * g
    (h_out, c_out), _ = cell.forward(x, LSTMState(h, c))
    np.testing.assert_allclose(c_out, c_new, rtol=1e-13)
    np.testing.assert_allclose(h_out, o * np.tanh(c_new), rtol=1e-13)


def test_gru_reset_gate_scales_the_hidden_product_and_its_bias():
    """n = tanh(W_in x + b_in + r * (W_hn h + b_hn)): b_hn inside the reset gate, b_in outside."""
    cell, x, h, _ = make_cell("gru", seed=6)
    p = cell.params
    gi, gh = x @ p["W_ih"] + p["b_ih"], h @ p["W_hh"] + p["b_hh"]
    logistic = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    r, z = logistic(gi[:, :H] + gh[:, :H]), logistic(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    out, _ = cell.forward(x, h)
    np.testing.assert_allclose(out, (1 - z) * n + z * h, rtol=1e-13)


def test_sigmoid_is_the_logistic_and_never_overflows():
    a = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(sigmoid(a), 1 / (1 + np.exp(-a)), rtol=1e-12, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp overflow would warn
        np.testing.assert_array_equal(sigmoid(np.array([-1e4, 1e4], dtype=np.float32)), [0.0, 1.0])


def test_state_helpers_treat_lstm_and_plain_states_alike():
    h, c = np.ones((2, 3)), 2 * np.ones((2, 3))
    s = LSTMState(h, c)
    assert hidden(s) is h and hidden(h) is h
    doubled = map_state(lambda a: 2 * a, s)
    assert isinstance(doubled, LSTMState) and (doubled.c == 4).all()
    added = add_to_hidden(s, np.ones((2, 3)))
    assert (added.h == 2).all() and added.c is c
    assert (add_to_hidden(h, h) == 2).all()
