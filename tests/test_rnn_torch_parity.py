"""Parity with PyTorch autograd in float64, to relative error 1e-8 (measured: at most 3e-12).

* the cells against ``torch.nn.RNNCell`` / ``LSTMCell`` / ``GRUCell``;
* the sequence layer against ``torch.nn.RNN`` / ``LSTM`` / ``GRU`` run on a
  ``pack_padded_sequence`` batch: uni- and bidirectional, one and two layers, a given initial
  state; outputs, final states (h_n, c_n), and the gradients of the input, the initial state
  and every weight;
* the whole RNN encoder-decoder with additive attention (each ``attention_feed``, LSTM and GRU,
  bidirectional, reversed source, bridge, concat conditioning) against a reference written here
  from torch primitives: ``nn.LSTM``/``nn.GRU`` on packed sequences for the encoder,
  ``nn.LSTMCell``/``nn.GRUCell`` for the decoder, the attention and the head from the papers'
  formulas, ``F.cross_entropy`` for the loss.

The weight map is the one documented in :mod:`minitf.rnn.cells`: torch's ``weight_ih_l{l}`` is
``W_ih.T`` of ``forward_cells.{l}``, ``..._reverse`` of ``reverse_cells.{l}``.  Skipped when torch
is not installed.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.gradcheck import rel_error
from minitf.loss import cross_entropy
from minitf.models import RNNSeq2Seq
from minitf.models.rnn_seq2seq import reversal_index
from minitf.rnn import CELLS, LSTMState, Recurrent, RecurrentOutput, RNNConfig
from minitf.rnn.cells import map_state

torch = pytest.importorskip("torch")
F = torch.nn.functional
nn = torch.nn

TOL = 1e-8
D, H = 3, 4
LENGTHS = np.array([5, 2, 4])
B, T = len(LENGTHS), int(LENGTHS.max())
TORCH_LAYER = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
TORCH_CELL = {"rnn": nn.RNNCell, "lstm": nn.LSTMCell, "gru": nn.GRUCell}


def t64(a, requires_grad=False):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=requires_grad)


def assert_close(name, ours, theirs, tol=TOL):
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{name}: shapes {ours.shape} vs {theirs.shape}"
    err = rel_error(ours, theirs)
    assert err <= tol, f"{name}: relative error {err:.3e} > {tol:.0e} (max abs diff {np.abs(ours - theirs).max():.3e})"


def copy_cell(torch_module, cell, suffix: str = "") -> None:
    """minitf cell weights into a torch module: weight_ih{suffix} = W_ih^T, and so on."""
    with torch.no_grad():
        for ours, theirs in (("W_ih", "weight_ih"), ("W_hh", "weight_hh")):
            getattr(torch_module, theirs + suffix).copy_(torch.from_numpy(cell.params[ours].T))
        for ours, theirs in (("b_ih", "bias_ih"), ("b_hh", "bias_hh")):
            getattr(torch_module, theirs + suffix).copy_(torch.from_numpy(cell.params[ours]))


def cell_grads(torch_module, suffix: str = "") -> dict:
    """torch's gradients in minitf's names and layout."""
    return {"W_ih": getattr(torch_module, "weight_ih" + suffix).grad.numpy().T,
            "W_hh": getattr(torch_module, "weight_hh" + suffix).grad.numpy().T,
            "b_ih": getattr(torch_module, "bias_ih" + suffix).grad.numpy(),
            "b_hh": getattr(torch_module, "bias_hh" + suffix).grad.numpy()}


# ---- cells -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_matches_torch_cell(kind):
    rng = np.random.default_rng(0)
    cell = CELLS[kind](D, H, rng=rng, dtype=np.float64)
    tcell = TORCH_CELL[kind](D, H, dtype=torch.float64)
    copy_cell(tcell, cell)
    x, h, c = rng.standard_normal((B, D)), rng.standard_normal((B, H)), rng.standard_normal((B, H))
    state = LSTMState(h, c) if kind == "lstm" else h
    new, cache = cell.forward(x, state)
    G = map_state(lambda a: rng.standard_normal(a.shape), new)
    cell.zero_grad()
    dx, dstate = cell.backward(G, cache)

    tx, th, tc = t64(x, True), t64(h, True), t64(c, True)
    if kind == "lstm":
        h1, c1 = tcell(tx, (th, tc))
        (h1 * t64(G.h) + c1 * t64(G.c)).sum().backward()
        assert_close("h", new.h, h1)
        assert_close("c", new.c, c1)
        assert_close("dh_prev", dstate.h, th.grad)
        assert_close("dc_prev", dstate.c, tc.grad)
    else:
        h1 = tcell(tx, th)
        (h1 * t64(G)).sum().backward()
        assert_close("h", new, h1)
        assert_close("dh_prev", dstate, th.grad)
    assert_close("dx", dx, tx.grad)
    for name, g in cell_grads(tcell).items():
        assert_close(name, cell.grads[name], g)


# ---- the sequence layer ----------------------------------------------------------------------------------
def torch_layer(layer: Recurrent):
    m = TORCH_LAYER[layer.cell](layer.input_size, layer.hidden_size, layer.num_layers, batch_first=True,
                                bidirectional=layer.bidirectional, dtype=torch.float64)
    for l in range(layer.num_layers):
        for d, cell in enumerate(layer.cells_of(l)):
            copy_cell(m, cell, f"_l{l}" + ("_reverse" if d else ""))
    return m


@pytest.mark.parametrize("kind", sorted(CELLS))
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (1, True), (2, False), (2, True)])
def test_recurrent_matches_torch_on_packed_padded_batch(kind, num_layers, bidirectional):
    rng = np.random.default_rng(1)
    layer = Recurrent(kind, D, H, num_layers, bidirectional, rng=rng, dtype=np.float64)
    m = torch_layer(layer)
    x = rng.standard_normal((B, T, D))
    initial = map_state(lambda a: rng.standard_normal(a.shape), layer.zero_state(B))
    (outputs, final), cache = layer.forward(x, LENGTHS, initial)
    G_out = rng.standard_normal(outputs.shape)
    G_fin = map_state(lambda a: rng.standard_normal(a.shape), final)
    layer.zero_grad()
    dx, dinitial = layer.backward(RecurrentOutput(G_out, G_fin), cache)

    tx = t64(x, True)
    t_init = tuple(t64(a, True) for a in (initial if kind == "lstm" else (initial,)))
    packed = nn.utils.rnn.pack_padded_sequence(tx, torch.tensor(LENGTHS), batch_first=True, enforce_sorted=False)
    t_out, t_fin = m(packed, t_init if kind == "lstm" else t_init[0])
    t_out, _ = nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True, total_length=T)
    t_fin = t_fin if kind == "lstm" else (t_fin,)
    ours_fin = final if kind == "lstm" else (final,)
    G_fin_parts = G_fin if kind == "lstm" else (G_fin,)
    loss = (t_out * t64(G_out)).sum() + sum((f * t64(g)).sum() for f, g in zip(t_fin, G_fin_parts))
    loss.backward()

    assert_close("outputs", outputs, t_out)
    for name, ours, theirs in zip(("h_n", "c_n"), ours_fin, t_fin):
        assert_close(name, ours, theirs)
    assert_close("dx", dx, tx.grad)
    for name, ours, theirs in zip(("dh_0", "dc_0"), dinitial if kind == "lstm" else (dinitial,), t_init):
        assert_close(name, ours, theirs.grad)
    for l in range(num_layers):
        for d, cell in enumerate(layer.cells_of(l)):
            for name, g in cell_grads(m, f"_l{l}" + ("_reverse" if d else "")).items():
                assert_close(f"layer {l} direction {d} {name}", cell.grads[name], g)


# ---- the whole encoder-decoder against a torch reference ----------------------------------------------------
class TorchReference:
    """The RNN encoder-decoder's maths written with torch primitives, holding ``model``'s weights."""

    def __init__(self, model: RNNSeq2Seq):
        self.model, c = model, model.config
        self.c = c
        P = model.parameters()
        own = [n for n in P if not n.startswith(("encoder.", "decoder_cells."))]
        self.leaf = {n: t64(P[n], True) for n in own}  # minitf layout, e.g. W_U (H, V), bridge_h.W (KHe, H)
        self.encoder = TORCH_LAYER[c.cell](c.embedding_size, c.enc_hidden, c.n_encoder_layers, batch_first=True,
                                           bidirectional=c.bidirectional, dtype=torch.float64)
        for l in range(c.n_encoder_layers):
            for d, cell in enumerate(model.encoder.cells_of(l)):
                copy_cell(self.encoder, cell, f"_l{l}" + ("_reverse" if d else ""))
        self.cells = []
        for cell in model.decoder_cells:
            tcell = TORCH_CELL[c.cell](cell.input_size, cell.hidden_size, dtype=torch.float64)
            copy_cell(tcell, cell)
            self.cells.append(tcell)

    def attend(self, q, keys, states, mask):
        """additive: e_j = v^T tanh(q W_a + h_j U_a) + mask_j;  a = softmax(e);  c = sum_j a_j h_j"""
        p = self.leaf
        e = torch.tanh((q @ p["attention.W_a"])[:, None, :] + keys) @ p["attention.v"] + mask  # (B, S)
        a = torch.softmax(e, dim=-1)
        return (a[:, :, None] * states).sum(dim=1)  # (B, KHe)

    def loss(self, src_ids, decoder_input_ids, labels):
        c, p, lstm = self.c, self.leaf, self.c.cell == "lstm"
        B, S = src_ids.shape
        lengths = (src_ids != c.pad_id).sum(axis=1)
        order = reversal_index(lengths, S) if c.reverse_source else np.tile(np.arange(S), (B, 1))
        read = np.take_along_axis(src_ids, order, axis=1)
        x = F.embedding(torch.from_numpy(read), p["src_embed.W_E"], padding_idx=c.pad_id)  # (B, S, E)
        packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
        out, fin = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=S)  # (B, S, KHe)
        states = states[torch.arange(B)[:, None], torch.from_numpy(order)]  # back to source order
        K = c.num_directions
        top = lambda f: torch.cat([f[-K + d] for d in range(K)], dim=-1)  # noqa: E731  (B, KHe)
        cond_h, cond_c = (top(fin[0]), top(fin[1])) if lstm else (top(fin), None)
        h0 = torch.tanh(cond_h @ p["bridge_h.W"] + p["bridge_h.b"])  # the bridge
        s = [(h0, cond_c @ p["bridge_c.W"] + p["bridge_c.b"]) if lstm else h0] * c.n_decoder_layers
        mask = t64(np.where(np.arange(S)[None, :] < lengths[:, None], 0.0, -1e9))
        keys = states @ p["attention.U_a"]
        feed = torch.zeros(B, c.hidden_size, dtype=torch.float64)
        tgt = p["src_embed.W_E"] if c.share_embeddings else p["tgt_embed.W_E"]
        logits = []
        for t in range(decoder_input_ids.shape[1]):
            parts = [F.embedding(torch.from_numpy(decoder_input_ids[:, t]), tgt, padding_idx=c.pad_id)]
            if c.conditioning in ("concat", "both"):
                parts.append(cond_h)
            if c.attention_feed == "input":
                parts.append(self.attend(s[-1][0] if lstm else s[-1], keys, states, mask))
            if c.attention_feed == "both":
                parts.append(feed)
            inp = torch.cat(parts, dim=-1)
            for l, tcell in enumerate(self.cells):
                s[l] = tcell(inp, s[l])
                inp = s[l][0] if lstm else s[l]
            if c.attention_feed in ("output", "both"):
                o = torch.tanh(torch.cat([self.attend(inp, keys, states, mask), inp], dim=-1) @ p["W_c"])
            else:
                o = inp
            feed = o
            logits.append(o @ p["W_U"] + p["b_U"])
        logits = torch.stack(logits, dim=1)  # (B, T, V)
        V = logits.shape[-1]
        return logits, F.cross_entropy(logits.reshape(-1, V), torch.from_numpy(labels).reshape(-1), ignore_index=-100)

    def grads(self) -> dict:
        out = {n: t.grad.numpy() for n, t in self.leaf.items()}
        c = self.c
        for l in range(c.n_encoder_layers):
            for d, prefix in enumerate(["encoder.forward_cells", "encoder.reverse_cells"][:c.num_directions]):
                for name, g in cell_grads(self.encoder, f"_l{l}" + ("_reverse" if d else "")).items():
                    out[f"{prefix}.{l}.{name}"] = g
        for l, tcell in enumerate(self.cells):
            for name, g in cell_grads(tcell).items():
                out[f"decoder_cells.{l}.{name}"] = g
        return out


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("feed", ["input", "output", "both"])
def test_model_with_additive_attention_matches_torch_reference(cell, feed):
    cfg = RNNConfig(src_vocab_size=11, tgt_vocab_size=13, cell=cell, embedding_size=4, hidden_size=5,
                    encoder_hidden_size=3, n_encoder_layers=2, n_decoder_layers=2, bidirectional=True,
                    reverse_source=True, conditioning="both", bridge="linear", attention="additive",
                    attention_feed=feed, attention_size=4, max_len=8, dtype="float64", seed=11)
    model = RNNSeq2Seq(cfg)
    src = np.array([[3, 4, 5, 6, 7], [8, 9, 0, 0, 0], [10, 3, 5, 0, 0]])
    dec_in = np.array([[1, 3, 4, 5], [1, 6, 0, 0], [1, 7, 8, 9]])
    labels = np.array([[3, 4, 5, 2], [6, 2, -100, -100], [7, 8, 9, 2]])
    logits, cache = model.forward(src, dec_in)
    loss, dlogits = cross_entropy(logits, labels)
    model.zero_grad()
    model.backward(dlogits, cache)

    ref = TorchReference(model)
    t_logits, t_loss = ref.loss(src, dec_in, labels)
    t_loss.backward()
    assert_close("logits", logits, t_logits)
    assert abs(loss - t_loss.item()) <= TOL * abs(loss)
    theirs = ref.grads()
    assert set(theirs) == set(model.parameters())
    for name, g in model.gradients().items():
        assert_close(name, g, theirs[name])
