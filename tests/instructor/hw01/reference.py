"""Homework 1 -- The sequence-to-sequence problem (the RNN encoder-decoder).  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw01 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, S source length, T steps, D a cell's input width, Dr its hidden width,
De an encoder state's width, E the embedding width, A additive attention's width, V vocabulary.
"""
from __future__ import annotations

import numpy as np



def sigmoid(x):
    """1 / (1 + exp(-x)), written as (1 + tanh(x/2)) / 2: the same function, and exp never overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def softmax(z):
    """exp(z - max z) / sum exp(z - max z) over the last axis: stable."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


MASK_VALUE = -1e9  # what an attention mask holds at padding (minitf.masks.MASK_VALUE)


def _weight_grad(x, dy):
    """sum over rows of x^T dy: x (..., D_in), dy (..., D_out) -> (D_in, D_out)."""
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])  # (D_in, N) @ (N, D_out)


# =====================================================================================
# Task 1.1 -- one LSTM step, forward and backward
# =====================================================================================
def _lstm_gates(x, h_prev, params):
    """(i, f, g, o), each (B, Dr): the gates of one step, in torch's order along the 4Dr columns."""
    p = params
    Dr = h_prev.shape[-1]
    a = x @ p["W_ih"] + p["b_ih"] + h_prev @ p["W_hh"] + p["b_hh"]  # (B, 4Dr)
    return sigmoid(a[:, :Dr]), sigmoid(a[:, Dr:2 * Dr]), np.tanh(a[:, 2 * Dr:3 * Dr]), sigmoid(a[:, 3 * Dr:])


def lstm_step_forward(x, h_prev, c_prev, params):
    """Task 1.1 (a): x (B, D), h_prev, c_prev (B, Dr) -> h, c (B, Dr)."""
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g  # (B, Dr) the additive memory
    h = o * np.tanh(c)  # (B, Dr)
    return h, c


def lstm_step_backward(dh, dc, x, h_prev, c_prev, params):
    """Task 1.1 (b): (dh, dc) (B, Dr) -> dx, dh_prev, dc_prev and the four weight gradients."""
    p = params
    i, f, g, o = _lstm_gates(x, h_prev, params)
    c = f * c_prev + i * g
    tanh_c = np.tanh(c)
    # forward: h = o * tanh(c)
    do = dh * tanh_c
    dc = dc + dh * o * (1.0 - tanh_c ** 2)  # c reaches the loss directly and through h
    # forward: c = f * c_prev + i * g
    dc_prev = dc * f  # the forget gate is the gradient's path back in time
    df, di, dg = dc * c_prev, dc * g, dc * i
    # forward: i, f, o = sigmoid(a_i, a_f, a_o); g = tanh(a_g)
    da = np.concatenate([di * i * (1.0 - i), df * f * (1.0 - f), dg * (1.0 - g ** 2), do * o * (1.0 - o)],
                        axis=1)  # (B, 4Dr), gates in the order i, f, g, o
    # forward: a = x W_ih + b_ih + h_prev W_hh + b_hh
    return {"dx": da @ p["W_ih"].T, "dh_prev": da @ p["W_hh"].T, "dc_prev": dc_prev,
            "dW_ih": x.T @ da, "dW_hh": h_prev.T @ da, "db_ih": da.sum(axis=0), "db_hh": da.sum(axis=0)}


# =====================================================================================
# Task 1.2 -- a recurrent layer over a padded batch, and BPTT
# =====================================================================================
def _live(lengths, T):
    """(T, B, 1) bool: True where step t is real for row b."""
    return (np.arange(T)[:, None] < np.asarray(lengths)[None, :])[:, :, None]


def _rnn_states(x, lengths, h0, params):
    """The forward, keeping what the backward needs: (outputs (B, T, Dr), h_final (B, Dr),
    states (T + 1, B, Dr) with states[t] the state before step t, new (T, B, Dr) the cell's output at t)."""
    p = params
    T = x.shape[1]
    live = _live(lengths, T)  # (T, B, 1)
    xW = x @ p["W_ih"] + p["b_ih"]  # (B, T, Dr): the input's share of every step, at once
    states, new = [h0], []
    for t in range(T):  # the recurrence: the one loop
        h_t = np.tanh(xW[:, t] + states[-1] @ p["W_hh"] + p["b_hh"])  # (B, Dr)
        new.append(h_t)
        states.append(np.where(live[t], h_t, states[-1]))  # a padded step keeps the state
    new = np.stack(new)  # (T, B, Dr)
    outputs = (new * live).transpose(1, 0, 2)  # (B, T, Dr): 0 at padded steps
    return outputs, states[-1], np.stack(states), new


def rnn_forward(x, lengths, h0, params):
    """Task 1.2 (a): x (B, T, D) -> outputs (B, T, Dr) (0 at padding), h_final (B, Dr)."""
    outputs, h_final, _, _ = _rnn_states(x, lengths, h0, params)
    return outputs, h_final


def rnn_backward(doutputs, dh_final, x, lengths, h0, params):
    """Task 1.2 (b): BPTT, from step T-1 down to 0."""
    p = params
    T = x.shape[1]
    live = _live(lengths, T)  # (T, B, 1)
    _, _, states, new = _rnn_states(x, lengths, h0, params)
    dh = dh_final  # (B, Dr) dL/d(state after step t)
    da = np.zeros_like(new)  # (T, B, Dr) the pre-activations' gradients, 0 at padded steps
    for t in reversed(range(T)):
        # forward: out_t = where(live, h_t, 0); state_t = where(live, h_t, state_{t-1})
        dnew = (dh + doutputs[:, t]) * live[t]  # (B, Dr): a padded step's cell reached nothing
        da[t] = dnew * (1.0 - new[t] ** 2)  # forward: h_t = tanh(a_t)
        dh = np.where(live[t], da[t] @ p["W_hh"].T, dh)  # padded: the state's gradient passes on unchanged
    da_bt = da.transpose(1, 0, 2)  # (B, T, Dr)
    # the weights are shared by every step: their gradients are sums over t (padded steps add 0)
    return {"dx": da_bt @ p["W_ih"].T, "dh0": dh,
            "dW_ih": _weight_grad(x, da_bt), "dW_hh": _weight_grad(states[:-1], da),
            "db_ih": da.sum(axis=(0, 1)), "db_hh": da.sum(axis=(0, 1))}


# =====================================================================================
# Task 1.3 -- the conditioning vector: initial state vs input at every step
# =====================================================================================
def condition_decoder(h_enc, embeddings, params, conditioning):
    """Task 1.3 (a): -> h0 (B, Dr), X (B, T, E [+ De])."""
    p = params
    B, T, _ = embeddings.shape
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"] + p["b_bridge"])  # (B, De) @ (De, Dr) -> (B, Dr)
    else:
        h0 = np.zeros((B, p["W_bridge"].shape[1]), dtype=h_enc.dtype)  # "concat": the decoder starts from zeros
    X = embeddings
    if conditioning in ("concat", "both"):
        X = np.concatenate([embeddings, np.broadcast_to(h_enc[:, None, :], (B, T, h_enc.shape[1]))],
                           axis=-1)  # (B, T, E + De): the same vector at every step
    return h0, X


def condition_decoder_backward(dh0, dX, h_enc, params, conditioning):
    """Task 1.3 (b): -> dh_enc (B, De), dW_bridge (De, Dr), db_bridge (Dr,)."""
    p = params
    E = dX.shape[-1] - (h_enc.shape[1] if conditioning in ("concat", "both") else 0)
    dh_enc = np.zeros_like(h_enc)  # (B, De)
    dW, db = np.zeros_like(p["W_bridge"]), np.zeros_like(p["b_bridge"])
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"] + p["b_bridge"])
        da = dh0.sum(axis=0) * (1.0 - h0 ** 2)  # every layer started from h0: their gradients add; h0 = tanh(a)
        dh_enc = dh_enc + da @ p["W_bridge"].T  # forward: a = h_enc W_bridge + b_bridge
        dW, db = h_enc.T @ da, da.sum(axis=0)
    if conditioning in ("concat", "both"):
        dh_enc = dh_enc + dX[:, :, E:].sum(axis=1)  # h_enc was in every step's input: the T shares add
    return {"dh_enc": dh_enc, "dW_bridge": dW, "db_bridge": db}


# =====================================================================================
# Task 1.4 -- scheduled sampling
# =====================================================================================
def scheduled_sampling_inputs(labels, own_tokens, coins, eps, bos_id):
    """Task 1.4 (a): -> fed (B, T), gold (B, T)."""
    B = labels.shape[0]
    start = np.full((B, 1), bos_id, dtype=labels.dtype)
    teacher = np.concatenate([start, labels[:, :-1]], axis=1)  # (B, T) step t: the gold y_{t-1}
    own = np.concatenate([start, own_tokens[:, :-1]], axis=1)  # (B, T) step t: the model's token from step t-1
    gold = coins < eps  # (B, T) one coin per row and step
    gold[:, 0] = True  # step 0 reads the start token, always
    return np.where(gold, teacher, own), gold


def scheduled_sampling_backward(dlogits, dX, logits, fed, gold, W_E):
    """Task 1.4 (b): the choice is an integer: no gradient reaches the logits it came from."""
    dW_E = np.zeros_like(W_E)  # (V, E)
    np.add.at(dW_E, fed, dX)  # forward: x_t = W_E[fed_t]; repeated tokens add up
    return {"dlogits": dlogits.copy(), "dW_E": dW_E}


# =====================================================================================
# Task 1.5 -- additive attention over the encoder states
# =====================================================================================
def _additive(s, H_enc, params, mask):
    """(context (B, De), a (B, S), u (B, S, A)): the forward, keeping tanh's output for the backward."""
    p = params
    u = np.tanh((s @ p["W_a"])[:, None, :] + H_enc @ p["U_a"])  # (B, 1, A) + (B, S, A) -> (B, S, A)
    e = u @ p["v"]  # (B, S, A) @ (A,) -> (B, S)
    a = softmax(e + mask)  # (B, S) over each row's S positions; exactly 0 at padding
    a = a * (mask.max(axis=-1, keepdims=True) > MASK_VALUE / 2)  # a row with no real position: zero weights
    context = (a[:, None, :] @ H_enc)[:, 0]  # (B, 1, S) @ (B, S, De) -> (B, De)
    return context, a, u


def additive_attention_forward(s, H_enc, params, mask):
    """Task 1.5 (a): -> context (B, De), a (B, S)."""
    context, a, _ = _additive(s, H_enc, params, mask)
    return context, a


def additive_attention_backward(dcontext, s, H_enc, params, mask):
    """Task 1.5 (b): -> ds, dH_enc (values and keys), dW_a, dU_a, dv."""
    p = params
    _, a, u = _additive(s, H_enc, params, mask)
    # forward: c = sum_j a_j h_j
    da = (H_enc @ dcontext[:, :, None])[:, :, 0]  # (B, S, De) @ (B, De, 1) -> (B, S)
    dH_values = a[:, :, None] * dcontext[:, None, :]  # (B, S, De)
    # forward: a = softmax(e + mask)
    de = a * (da - (da * a).sum(axis=-1, keepdims=True))  # (B, S); 0 where a = 0
    # forward: e = u v
    dv = _weight_grad(u, de[:, :, None])[:, 0]  # (A,)
    dpre = de[:, :, None] * p["v"] * (1.0 - u ** 2)  # (B, S, A); forward: u = tanh(s W_a + h_j U_a)
    dq = dpre.sum(axis=1)  # (B, A): the query's projection was added at every position
    return {"ds": dq @ p["W_a"].T, "dH_enc": dH_values + dpre @ p["U_a"].T,  # values + keys
            "dW_a": s.T @ dq, "dU_a": _weight_grad(H_enc, dpre), "dv": dv}


# =====================================================================================
# Task 1.6 -- concept check
# =====================================================================================
ANSWERS = {
    "1.6.1": "c",  # the fixed vector: 2 d numbers (h and c) whatever the source length
    "1.6.2": "b",  # reversal shortens dependencies (BPTT), it does not change what can be represented
    "1.6.3": "a",  # greedy maximises each conditional, not the sequence
    "1.6.4": "d",  # encoder depth is paid once, decoder depth per emitted symbol
    "1.6.5": "b",  # no teacher at generation: the decoder reads its own previous token
    "1.6.6": "c",  # scheduled sampling's gradient ignores the dependence through the sampled inputs
}
