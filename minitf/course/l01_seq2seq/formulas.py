"""Lesson 1's formulas: the RNN, LSTM and GRU cells, backpropagation through time over a
padded batch, the cells' parameter counts, attention for an RNN decoder (Bahdanau's additive
score, Luong's dot and general scores) and scheduled sampling's decay schedules.

Every check computes the formula in NumPy from its LaTeX and compares with minitf's
:mod:`minitf.rnn` on a small random float64 input."""
from __future__ import annotations

import numpy as np

from ...rnn import (AdditiveAttention, DotAttention, ExponentialDecay, GeneralAttention, GRUCell, InverseSigmoidDecay,
                    LinearDecay, LSTMCell, LSTMState, Recurrent, RecurrentOutput, RNNCell)
from ..kit.formulas import compare, finite_differences, formula, lesson_intro

lesson_intro("1", """
The recurrent encoder–decoder of Lesson 1 (`minitf/rnn/`). The k gates of a cell sit side by side
in one packed `W_ih` (D × kDr) and `W_hh` (Dr × kDr), in PyTorch's order; here D is a cell's input
width and Dr its recurrent (hidden) width.
""")


def _sigma(a):
    return 1.0 / (1.0 + np.exp(-a))


# ---- the cells ---------------------------------------------------------------------------------
@formula("rnn-cell", lesson="1", section=1, title="The tanh RNN cell",
         latex=r"h_t = \tanh\!\left(x_t W_{ih} + b_{ih} + h_{t-1} W_{hh} + b_{hh}\right)",
         computes="minitf.rnn.cells.RNNCell.forward",
         note="One step: the new state from the input x_t (B, D) and the previous state h_{t-1} (B, Dr). "
              "The plainest f of Lesson 1 §1's h_t = f(x_t, h_{t-1}); the lessons train the LSTM below, and "
              "this cell is here because minitf has it (`RNNConfig(cell=\"rnn\")`).")
def check_rnn_cell(rng):
    cell = RNNCell(3, 4, rng=rng, dtype=np.float64)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    p = cell.params
    h_t = np.tanh(x @ p["W_ih"] + p["b_ih"] + h @ p["W_hh"] + p["b_hh"])
    return [compare("h_t", h_t, cell.forward(x, h)[0])]


def _lstm_gates(p, x, h, Dr):
    a = x @ p["W_ih"] + p["b_ih"] + h @ p["W_hh"] + p["b_hh"]  # (B, 4Dr): a_i, a_f, a_g, a_o
    return _sigma(a[:, :Dr]), _sigma(a[:, Dr:2 * Dr]), np.tanh(a[:, 2 * Dr:3 * Dr]), _sigma(a[:, 3 * Dr:])


@formula("lstm-cell", lesson="1", section=2, title="The LSTM cell",
         latex=r"""
\begin{aligned}
[a_i,\ a_f,\ a_g,\ a_o] &= x_t W_{ih} + b_{ih} + h_{t-1} W_{hh} + b_{hh} \\
i = \sigma(a_i),\quad f &= \sigma(a_f),\quad g = \tanh(a_g),\quad o = \sigma(a_o),
\qquad \sigma(a) = \frac{1}{1 + e^{-a}} \\
c_t &= f \odot c_{t-1} + i \odot g \\
h_t &= o \odot \tanh(c_t)
\end{aligned}""",
         computes=("minitf.rnn.cells.LSTMCell.forward", "minitf.rnn.cells.sigmoid"),
         note="Input, forget and output gates i, f, o and the candidate g; the cell state c_t is the "
              "additive memory, h_t the output. minitf computes σ(a) as (1 + tanh(a/2))/2, the same function.")
def check_lstm_cell(rng):
    Dr = 4
    cell = LSTMCell(3, Dr, rng=rng, dtype=np.float64)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, Dr)), rng.standard_normal((2, Dr))
    i, f, g, o = _lstm_gates(cell.params, x, h, Dr)
    c_t = f * c + i * g
    h_t = o * np.tanh(c_t)
    state, _ = cell.forward(x, LSTMState(h, c))
    return [compare("h_t", h_t, state.h), compare("c_t", c_t, state.c)]


@formula("gru-cell", lesson="1", section=2, title="The GRU cell",
         latex=r"""
\begin{aligned}
r &= \sigma\!\left(x_t W_{ir} + b_{ir} + h_{t-1} W_{hr} + b_{hr}\right), \qquad
z = \sigma\!\left(x_t W_{iz} + b_{iz} + h_{t-1} W_{hz} + b_{hz}\right) \\
n &= \tanh\!\left(x_t W_{in} + b_{in} + r \odot (h_{t-1} W_{hn} + b_{hn})\right) \\
h_t &= (1 - z) \odot n + z \odot h_{t-1}
\end{aligned}""",
         computes="minitf.rnn.cells.GRUCell.forward",
         note="No lesson uses the GRU: Lesson 1 trains only LSTMs (§2 counts its decoder cell under init and "
              "concat), and the GRU is here because minitf has it as a third cell (`RNNConfig(cell=\"gru\")`, `minitf train --model rnn --cell gru`). "
              "Reset gate r, update gate z, candidate n; W_ih = [W_ir, W_iz, W_in] and W_hh = [W_hr, W_hz, "
              "W_hn] side by side. The reset gate multiplies h_{t-1} W_hn + b_hn after the product, as in PyTorch.")
def check_gru_cell(rng):
    Dr = 4
    cell = GRUCell(3, Dr, rng=rng, dtype=np.float64)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, Dr))
    p = cell.params
    W_i = np.split(p["W_ih"], 3, axis=1)  # W_ir, W_iz, W_in
    W_h = np.split(p["W_hh"], 3, axis=1)
    b_i, b_h = np.split(p["b_ih"], 3), np.split(p["b_hh"], 3)
    r = _sigma(x @ W_i[0] + b_i[0] + h @ W_h[0] + b_h[0])
    z = _sigma(x @ W_i[1] + b_i[1] + h @ W_h[1] + b_h[1])
    n = np.tanh(x @ W_i[2] + b_i[2] + r * (h @ W_h[2] + b_h[2]))
    return [compare("h_t", (1 - z) * n + z * h, cell.forward(x, h)[0])]


@formula("rnn-cell-parameters", lesson="1", section=2, title="Parameters of a cell",
         latex=r"""
N_{\text{cell}} = k\,(D Dr + Dr^2 + 2Dr), \qquad k = 1 \text{ (RNN)},\ 4 \text{ (LSTM)},\ 3 \text{ (GRU)}""",
         computes="minitf.module.Module.num_parameters",
         note="W_ih (D × kDr), W_hh (Dr × kDr) and two biases of kDr: k blocks (the LSTM's three gates and candidate, the GRU's two gates and candidate), each a tanh RNN's worth of weights. "
              "Lesson 1 §2 counts the LSTM's (k = 4); the tanh RNN and the GRU, which no lesson trains, are "
              "checked too.")
def check_cell_parameters(rng):
    D, Dr = 5, 7
    out = []
    for name, Cell, k in (("RNN", RNNCell, 1), ("LSTM", LSTMCell, 4), ("GRU", GRUCell, 3)):
        out.append(compare(f"N ({name})", k * (D * Dr + Dr * Dr + 2 * Dr), Cell(D, Dr, rng=rng).num_parameters(), tol=0))
    return out


@formula("lstm-backward", lesson="1", section=3, title="The LSTM cell's backward",
         latex=r"""
\begin{aligned}
\delta c &= \frac{\partial L}{\partial c_t} + \frac{\partial L}{\partial h_t}
\odot o \odot \left(1 - \tanh^2 c_t\right),
\qquad \frac{\partial L}{\partial c_{t-1}} = \delta c \odot f \\
\delta a &= \Big[\, \delta c \odot g \odot i(1-i),\ \ \delta c \odot c_{t-1} \odot f(1-f),\ \
  \delta c \odot i \odot (1-g^2),\ \ \frac{\partial L}{\partial h_t} \odot \tanh c_t \odot o(1-o) \Big] \\
\frac{\partial L}{\partial x_t} &= \delta a\, W_{ih}^\top,
\qquad \frac{\partial L}{\partial h_{t-1}} = \delta a\, W_{hh}^\top,
\qquad \frac{\partial L}{\partial W_{ih}} = x_t^\top \delta a,
\qquad \frac{\partial L}{\partial W_{hh}} = h_{t-1}^\top \delta a
\end{aligned}""",
         computes="minitf.rnn.cells.LSTMCell.backward",
         note="δa is the gradient of the four pre-activations (B, 4Dr), in the gates' order. The path "
              "c_{t-1} → c_t multiplies the gradient by f alone: the LSTM's highway back in time.")
def check_lstm_backward(rng):
    Dr, D, B = 4, 3, 2
    cell = LSTMCell(D, Dr, rng=rng, dtype=np.float64)
    p = cell.params
    x, h, c = rng.standard_normal((B, D)), rng.standard_normal((B, Dr)), rng.standard_normal((B, Dr))
    G_h, G_c = rng.standard_normal((B, Dr)), rng.standard_normal((B, Dr))  # dL/dh_t, dL/dc_t

    def step(x, h, c):  # the forward formula of lstm-cell
        i, f, g, o = _lstm_gates(p, x, h, Dr)
        c_t = f * c + i * g
        return o * np.tanh(c_t), c_t, (i, f, g, o)

    h_t, c_t, (i, f, g, o) = step(x, h, c)
    dc = G_c + G_h * o * (1 - np.tanh(c_t) ** 2)
    dc_prev = dc * f
    da = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                         G_h * np.tanh(c_t) * o * (1 - o)], axis=1)
    dx, dh_prev, dW_ih, dW_hh = da @ p["W_ih"].T, da @ p["W_hh"].T, x.T @ da, h.T @ da

    _, cache = cell.forward(x, LSTMState(h, c))
    mx, mstate = cell.backward(LSTMState(G_h, G_c), cache)

    def loss():
        h_t, c_t, _ = step(x, h, c)
        return float(np.sum(h_t * G_h) + np.sum(c_t * G_c))

    return [compare("dx_t", dx, mx), compare("dh_{t-1}", dh_prev, mstate.h), compare("dc_{t-1}", dc_prev, mstate.c),
            compare("dW_ih", dW_ih, cell.grads["W_ih"]), compare("dW_hh", dW_hh, cell.grads["W_hh"]),
            finite_differences("dx_t", dx, loss, x), finite_differences("dc_{t-1}", dc_prev, loss, c)]


# ---- backpropagation through time ------------------------------------------------------------
def _rnn_layer(rng, D=3, Dr=4):
    layer = Recurrent("rnn", D, Dr, rng=rng, dtype=np.float64)
    return layer, layer.forward_cells[0].params


@formula("bptt", lesson="1", section=3, title="Backpropagation through time (BPTT), tanh RNN",
         latex=r"""
\begin{aligned}
\delta_T &= g_T, \qquad \delta_t = g_t + \big((1 - h_{t+1}^2) \odot \delta_{t+1}\big)\, W_{hh}^\top \quad (t < T) \\
\frac{\partial L}{\partial x_t} &= \big((1 - h_t^2) \odot \delta_t\big)\, W_{ih}^\top, \qquad
\frac{\partial L}{\partial W_{hh}} = \sum_{t=1}^{T} h_{t-1}^\top \big((1 - h_t^2) \odot \delta_t\big) \\
\frac{\partial h_T}{\partial h_t} &= J_T\, J_{T-1} \cdots J_{t+1},
\qquad J_k = \frac{\partial h_k}{\partial h_{k-1}} = \operatorname{diag}(1 - h_k^2)\, W_{hh}^\top
\end{aligned}""",
         computes=("minitf.rnn.recurrent.run_direction_backward", "minitf.rnn.cells.RNNCell.backward"),
         note="g_t = ∂L/∂out_t is the loss's direct gradient at step t, δ_t = ∂L/∂h_t its total, "
              "through every later step. The last line is why the gradient reaching an early source "
              "position decays (or explodes) geometrically with the distance T − t (Lesson 1 §3).")
def check_bptt(rng):
    B, T, D, Dr = 2, 5, 3, 4
    layer, p = _rnn_layer(rng, D, Dr)
    x, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((1, B, Dr))
    g = rng.standard_normal((B, T, Dr))  # dL/dout_t

    hs = [h0[0]]
    for t in range(T):
        hs.append(np.tanh(x[:, t] @ p["W_ih"] + p["b_ih"] + hs[-1] @ p["W_hh"] + p["b_hh"]))
    delta, dx, dW_hh = g[:, T - 1], np.zeros_like(x), np.zeros_like(p["W_hh"])
    for t in range(T, 0, -1):  # t = T .. 1, hs[t] = h_t
        da = (1 - hs[t] ** 2) * delta
        dx[:, t - 1] = da @ p["W_ih"].T
        dW_hh += hs[t - 1].T @ da
        delta = da @ p["W_hh"].T + (g[:, t - 2] if t > 1 else 0.0)
    dh0 = delta

    out, cache = layer.forward(x, initial=h0)
    mdx, mdh0 = layer.backward(RecurrentOutput(g, None), cache)
    mdW_hh = layer.forward_cells[0].grads["W_hh"].copy()
    # the decay: a gradient w at h_T alone, sent back to h_0 through J_T ... J_1
    w = rng.standard_normal((B, Dr))
    by_product = np.stack([w[b] @ _jacobian_product(hs, p, b) for b in range(B)])  # (B, Dr)
    _, cache = layer.forward(x, initial=h0)
    _, mdecay = layer.backward(RecurrentOutput(np.zeros_like(g), w[None]), cache)
    return [compare("dx_t", dx, mdx), compare("dh_0", dh0, mdh0[0]), compare("dW_hh", dW_hh, mdW_hh),
            compare("(∂L/∂h_T) J_T ... J_1", by_product, mdecay[0])]


def _jacobian_product(hs, p, b):
    """J_T J_{T-1} ... J_1 for row b, J_k = diag(1 - h_k^2) W_hh^T: (Dr, Dr)."""
    M = np.eye(p["W_hh"].shape[0])
    for k in range(len(hs) - 1, 0, -1):
        M = M @ (np.diag(1 - hs[k][b] ** 2) @ p["W_hh"].T)
    return M


@formula("bptt-padding", lesson="1", section=5, title="A padded batch: padded steps keep the state",
         latex=r"""
\begin{aligned}
m_t &= \mathbb{1}[t \le \ell], \qquad \tilde h_t = \operatorname{cell}(x_t, h_{t-1}), \qquad
h_t = m_t\, \tilde h_t + (1 - m_t)\, h_{t-1}, \qquad \mathrm{out}_t = m_t\, \tilde h_t \\
\frac{\partial L}{\partial h_{t-1}} &= m_t \Big[\big(1 - \tilde h_t^2\big) \odot (\delta_t + g_t)\Big] W_{hh}^\top +
(1 - m_t)\, \delta_t
\end{aligned}""",
         computes=("minitf.rnn.recurrent.run_direction", "minitf.rnn.recurrent.run_direction_backward"),
         note="ℓ is the row's real length (padding at the end), δ_t = ∂L/∂h_t from the later steps, g_t = "
              "∂L/∂out_t. A padded step outputs zero, keeps the state and passes the state's gradient "
              "through unchanged: the final state is each row's state after its own last real step, "
              "and padding adds nothing to any gradient.")
def check_bptt_padding(rng):
    B, T, D, Dr = 2, 5, 3, 4
    layer, p = _rnn_layer(rng, D, Dr)
    x, g, g_final = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, Dr)), rng.standard_normal((B, Dr))
    lengths = np.array([5, 3])
    m = (np.arange(1, T + 1)[None, :] <= lengths[:, None]).astype(float)[..., None]  # (B, T, 1): m_t, t = 1..T

    h, hts, outs = np.zeros((B, Dr)), [], []
    for t in range(T):
        ht = np.tanh(x[:, t] @ p["W_ih"] + p["b_ih"] + h @ p["W_hh"] + p["b_hh"])
        hts.append(ht)
        outs.append(m[:, t] * ht)
        h = m[:, t] * ht + (1 - m[:, t]) * h
    delta, dW_ih = g_final, np.zeros_like(p["W_ih"])
    for t in reversed(range(T)):
        da = m[:, t] * (1 - hts[t] ** 2) * (delta + g[:, t])
        dW_ih += x[:, t].T @ da
        delta = da @ p["W_hh"].T + (1 - m[:, t]) * delta

    out, cache = layer.forward(x, lengths)
    _, mdh0 = layer.backward(RecurrentOutput(g, g_final[None]), cache)
    return [compare("out_t", np.stack(outs, axis=1), out.outputs), compare("final state", h, out.final[0]),
            compare("dh_0", delta, mdh0[0]), compare("dW_ih", dW_ih, layer.forward_cells[0].grads["W_ih"])]


# ---- attention for an RNN decoder --------------------------------------------------------------
@formula("additive-attention", lesson="1", section=6, title="Additive attention (Bahdanau)",
         latex=r"""
e_j = v^\top \tanh\!\left(s\, W_a + h_j U_a\right), \qquad a = \operatorname{softmax}(e + m),
\qquad c = \sum_{j=1}^{S} a_j\, h_j""",
         computes=("minitf.rnn.attention.AdditiveAttention.score", "minitf.rnn.attention.AdditiveAttention.forward"),
         note="s (B, Dr) is the decoder's state, h_j (B, De) the encoder states, m the additive source "
              "padding mask (−10⁹ at padded positions), c the context vector (Bahdanau, Cho & Bengio 2015).")
def check_additive_attention(rng):
    B, S, Dr, De, A = 2, 5, 3, 4, 6
    att = AdditiveAttention(Dr, De, A, rng=rng, dtype=np.float64)
    p = att.params
    s, h = rng.standard_normal((B, Dr)), rng.standard_normal((B, S, De))
    mask = np.zeros((B, S))
    mask[1, 3:] = -1e9  # row 1 has 3 real source positions
    e = np.tanh((s @ p["W_a"])[:, None, :] + h @ p["U_a"]) @ p["v"]  # (B, S)
    z = e + mask
    a = np.exp(z - z.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    c = np.einsum("bs,bsh->bh", a, h)
    keys, _ = att.project_keys(h)
    mc, cache = att.forward(s, keys, h, mask)
    return [compare("a", a, cache.a), compare("c", c, mc)]


@formula("luong-attention", lesson="1", section=6, title="Dot and general scores (Luong)",
         latex=r"""
e_j^{\text{dot}} = s \cdot h_j, \qquad e_j^{\text{general}} = s \cdot (h_j W_a)
\quad \big(= s^\top W_a^{\text{Luong}} h_j\big)""",
         computes=("minitf.rnn.attention.DotAttention.score", "minitf.rnn.attention.GeneralAttention.project_keys"),
         note="The weights and the context then follow as for the additive score. The dot score needs "
              "equal widths; the general score's W_a (De × Dr) is Luong's matrix transposed.")
def check_luong_attention(rng):
    B, S, Dr, De = 2, 5, 3, 4
    s, h, h_dot = rng.standard_normal((B, Dr)), rng.standard_normal((B, S, De)), rng.standard_normal((B, S, Dr))
    out = []
    dot = DotAttention(Dr, Dr, dtype=np.float64)
    keys, _ = dot.project_keys(h_dot)
    out.append(compare("e (dot)", np.einsum("bh,bsh->bs", s, h_dot), dot.score(s, keys)[0]))
    gen = GeneralAttention(Dr, De, rng=rng, dtype=np.float64)
    keys, _ = gen.project_keys(h)
    out.append(compare("e (general)", np.einsum("bh,bsh->bs", s, h @ gen.params["W_a"]), gen.score(s, keys)[0]))
    return out


# ---- scheduled sampling -------------------------------------------------------------------------
@formula("scheduled-sampling-decay", lesson="1", section=5, title="Scheduled sampling: the teacher-forcing probability",
         latex=r"""
\text{linear: } \epsilon_i = \max(\epsilon_{\min},\ k - c\, i), \qquad
\text{exponential: } \epsilon_i = k^{\,i}, \qquad
\text{inverse sigmoid: } \epsilon_i = \frac{k}{k + e^{\,i/k}}""",
         computes=("minitf.rnn.scheduled_sampling.LinearDecay.lr_at",
                   "minitf.rnn.scheduled_sampling.ExponentialDecay.lr_at",
                   "minitf.rnn.scheduled_sampling.InverseSigmoidDecay.lr_at"),
         note="ε_i is the probability of feeding the gold token y_{t−1} at update i = step − 1 (Bengio et "
              "al. 2015); otherwise the model's own token is fed. Also Lesson 9 §6.")
def check_scheduled_sampling(rng):
    i = np.arange(300)
    steps = i + 1
    c, k_lin, eps_min, k_exp, k_sig = 0.004, 0.9, 0.1, 0.99, 20.0
    lin, exp_, sig = LinearDecay(c, k_lin, eps_min), ExponentialDecay(k_exp), InverseSigmoidDecay(k_sig)
    return [compare("linear ε_i", np.maximum(eps_min, k_lin - c * i), [lin(s) for s in steps]),
            compare("exponential ε_i", k_exp ** i, [exp_(s) for s in steps]),
            compare("inverse sigmoid ε_i", k_sig / (k_sig + np.exp(i / k_sig)), [sig(s) for s in steps])]
