"""Parity with PyTorch autograd, in float64, to relative error 1e-10: outputs *and*
gradients of inputs and weights, for multi-head attention (self and cross, causal and
key-padding masks), LayerNorm, GELU (exact and tanh), softmax, log-softmax, Linear and
Embedding.  Skipped when torch is not installed.

Fully masked query rows: minitf gives them a zero output and a zero gradient, torch gives
NaN (softmax over a row of -inf).  They are left out of the comparison: outputs are compared
on rows with at least one visible key, and the upstream gradient is zero on the others.
"""
from __future__ import annotations

import numpy as np
import pytest

from minitf.attention import MultiHeadAttention
from minitf.gradcheck import rel_error
from minitf.layers import (Embedding, LayerNorm, Linear, gelu_backward, gelu_forward, gelu_tanh_backward,
                           gelu_tanh_forward, log_softmax, softmax, softmax_backward)
from minitf.masks import MASK_VALUE, causal_mask, key_padding_mask

torch = pytest.importorskip("torch")

TOL = 1e-10
B, T, S, D, H = 2, 4, 5, 8, 2


def t64(a, requires_grad=False):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=requires_grad)


def assert_close(name, ours, theirs, tol=TOL):
    """Relative error <= tol entry by entry.

    Entries that minitf computes as *exactly* zero are structural zeros (a query with a single
    visible key has softmax weight 1 whatever its score, so its dQ row vanishes); torch's
    different summation order leaves ~1e-16 of rounding there, which no relative measure can
    compare with 0.  Those entries must be zero in torch too, to 1e-12 absolute -- a wrong zero
    on our side (true values here are O(0.1)) still fails.
    """
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{name}: shapes {ours.shape} vs {theirs.shape}"
    zero = ours == 0
    assert np.all(np.abs(theirs[zero]) < 1e-12), \
        f"{name}: zero here, but torch has up to {np.max(np.abs(theirs[zero])):.3e}"
    err = rel_error(ours[~zero], theirs[~zero])
    assert err <= tol, \
        f"{name}: relative error {err:.3e} > {tol:.0e} (max abs diff {np.max(np.abs(ours - theirs)):.3e})"


# ---- multi-head attention --------------------------------------------------------------------------
def torch_state(mha: MultiHeadAttention) -> dict[str, np.ndarray]:
    """minitf weights in torch.nn.MultiheadAttention's layout (torch stores W^T: out x in)."""
    p = mha.params
    return {
        "in_proj_weight": np.concatenate([p["W_q"].T, p["W_k"].T, p["W_v"].T], axis=0),  # (3D, D)
        "in_proj_bias": np.concatenate([p["b_q"], p["b_k"], p["b_v"]]),  # (3D,)
        "out_proj.weight": p["W_o"].T,  # (D, D)
        "out_proj.bias": p["b_o"],  # (D,)
    }


def minitf_grads_from_torch(tmha) -> dict[str, np.ndarray]:
    """torch's parameter gradients mapped back to minitf's names and layout."""
    gw = tmha.in_proj_weight.grad.numpy()  # (3D, D)
    gb = tmha.in_proj_bias.grad.numpy()  # (3D,)
    return {
        "W_q": gw[:D].T, "W_k": gw[D:2 * D].T, "W_v": gw[2 * D:].T, "W_o": tmha.out_proj.weight.grad.numpy().T,
        "b_q": gb[:D], "b_k": gb[D:2 * D], "b_v": gb[2 * D:], "b_o": tmha.out_proj.bias.grad.numpy(),
    }


def make_pair(seed: int):
    rng = np.random.default_rng(seed)
    mha = MultiHeadAttention(D, H, rng=rng, dtype=np.float64)
    for name in ("b_q", "b_k", "b_v", "b_o"):  # non-zero biases so every bias path is compared
        mha.params[name][:] = 0.5 * rng.standard_normal(D)
    tmha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for name, value in torch_state(mha).items():
            tmha.get_parameter(name).copy_(torch.from_numpy(value))
    return mha, tmha, rng


def test_mha_weight_mapping_is_one_to_one():
    mha, tmha, _ = make_pair(0)
    theirs = {n: tuple(p.shape) for n, p in tmha.named_parameters()}
    ours = {n: a.shape for n, a in torch_state(mha).items()}
    assert theirs == ours == {"in_proj_weight": (3 * D, D), "in_proj_bias": (3 * D,),
                              "out_proj.weight": (D, D), "out_proj.bias": (D,)}
    assert sum(p.numel() for p in tmha.parameters()) == mha.num_parameters()
    # every minitf parameter appears exactly once in the torch layout, and round-trips
    for n, p in tmha.named_parameters():
        p.grad = torch.from_numpy(torch_state(mha)[n].copy())  # pretend the "gradient" is the weight
    back = minitf_grads_from_torch(tmha)
    assert set(back) == set(mha.params)
    for n, a in mha.params.items():
        np.testing.assert_array_equal(back[n], a, err_msg=n)


def attention_case(kind: str, masking: str):
    """(T, S, minitf mask, torch attn_mask, torch key_padding_mask, live (B, T)).

    Padding: self-attention pads batch row 0 on the *left* (so under the causal mask its first
    queries see only padding); cross-attention gives batch row 1 no real key at all.
    """
    S_ = T if kind == "self" else S
    if kind == "self":
        ids = np.array([[0, 0, 5, 6], [3, 4, 7, 0]])
        is_pad = ids == 0  # (B, S)
        pad_mask = key_padding_mask(ids, pad_id=0, dtype=np.float64)  # (B, 1, 1, S)
    else:
        is_pad = np.arange(S_)[None, :] >= np.array([3, 0])[:, None]  # (B, S)
        pad_mask = key_padding_mask(lengths=[3, 0], max_len=S_, dtype=np.float64)  # (B, 1, 1, S)
    causal = causal_mask(T, S_, dtype=np.float64)  # (T, S)
    partial_pad = np.zeros((B, S_), bool)
    partial_pad[0, -2:] = True  # some keys padded, no query fully masked
    partial_mask = np.where(partial_pad, MASK_VALUE, 0.0)[:, None, None, :]  # (B, 1, 1, S)

    if masking == "none":
        ours, am, kpm = None, None, None
    elif masking == "causal_float":  # additive float attn_mask, as minitf's
        ours, am, kpm = causal, t64(causal), None
    elif masking == "key_padding_bool":  # torch's usual bool key_padding_mask, partial padding
        ours, am, kpm = partial_mask, None, torch.from_numpy(partial_pad)
    elif masking == "causal_and_padding_float":  # fully masked rows; float masks keep torch finite
        ours = causal + pad_mask
        am, kpm = t64(causal), t64(np.where(is_pad, MASK_VALUE, 0.0))
    elif masking == "causal_and_padding_bool":  # fully masked rows; torch gives NaN there
        ours = causal + pad_mask
        am, kpm = torch.from_numpy(causal < 0), torch.from_numpy(is_pad)
    else:
        raise AssertionError(masking)
    full = np.broadcast_to(ours if ours is not None else np.zeros((T, S_)), (B, 1, T, S_))[:, 0]
    live = (full > MASK_VALUE / 2).any(axis=-1)  # (B, T) rows with at least one visible key
    return S_, ours, am, kpm, live


def run_minitf(mha, kind, x_q, x_kv, mask, G):
    mha.zero_grad()
    if kind == "self":
        y, cache = mha.forward(x_q, x_q, mask)
        dx_q, dx_kv = mha.backward(G, cache)
        return y, {"x": dx_q + dx_kv}, {k: g.copy() for k, g in mha.grads.items()}
    y, cache = mha.forward(x_q, x_kv, mask)
    dx_q, dx_kv = mha.backward(G, cache)
    return y, {"x_q": dx_q, "x_kv": dx_kv}, {k: g.copy() for k, g in mha.grads.items()}


def compare_grads(ours_in, theirs_in, ours_w, theirs_w):
    for name in ours_in:
        assert_close(f"d{name}", ours_in[name], theirs_in[name])
    for name in ours_w:
        if name == "b_k":
            # dL/db_k is exactly zero in theory (softmax ignores the constant q . b_k added to a
            # whole row of scores); both sides hold rounding noise, so compare absolutely.
            assert np.max(np.abs(ours_w[name])) < 1e-12 and np.max(np.abs(theirs_w[name])) < 1e-12
        else:
            assert_close(f"d{name}", ours_w[name], theirs_w[name])


@pytest.mark.parametrize("masking", ["none", "causal_float", "key_padding_bool", "causal_and_padding_float"])
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_mha_matches_torch(kind, masking):
    mha, tmha, rng = make_pair(1)
    S_, mask, am, kpm, live = attention_case(kind, masking)
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S_, D))
    G = rng.standard_normal((B, T, D)) * live[..., None]  # no upstream gradient on fully masked rows
    y, dins, dws = run_minitf(mha, kind, x_q, x_kv, mask, G)

    if kind == "self":
        x = t64(x_q, requires_grad=True)
        ty, _ = tmha(x, x, x, attn_mask=am, key_padding_mask=kpm, need_weights=False)
        inputs = {"x": x}
    else:
        tq, tkv = t64(x_q, True), t64(x_kv, True)
        ty, _ = tmha(tq, tkv, tkv, attn_mask=am, key_padding_mask=kpm, need_weights=False)
        inputs = {"x_q": tq, "x_kv": tkv}
    assert_close("y (live rows)", y[live], ty[torch.from_numpy(live)])
    (ty[torch.from_numpy(live)] * t64(G)[torch.from_numpy(live)]).sum().backward()
    compare_grads(dins, {k: v.grad for k, v in inputs.items()}, dws, minitf_grads_from_torch(tmha))


@pytest.mark.parametrize("kind", ["self", "cross"])
def test_mha_matches_torch_with_bool_masks_and_fully_masked_rows(kind):
    """Torch's own bool masks (True = blocked).  Its fully masked rows are NaN and poison the
    whole backward, so torch is run batch row by batch row on the live queries only (queries
    are independent given the keys); minitf runs once on everything."""
    mha, tmha, rng = make_pair(2)
    S_, mask, am, kpm, live = attention_case(kind, "causal_and_padding_bool")
    assert (~live).any() and live.any()
    x_q, x_kv = rng.standard_normal((B, T, D)), rng.standard_normal((B, S_, D))
    G = rng.standard_normal((B, T, D)) * live[..., None]
    y, dins, dws = run_minitf(mha, kind, x_q, x_kv, mask, G)
    assert np.all(np.isfinite(y))

    tq = t64(x_q, True)
    tkv = tq if kind == "self" else t64(x_kv, True)
    loss = 0.0
    for b in range(B):
        rows = torch.from_numpy(np.flatnonzero(live[b]))
        if rows.numel() == 0:
            continue
        ty_b, _ = tmha(tq[b:b + 1, rows], tkv[b:b + 1], tkv[b:b + 1], attn_mask=am[rows],
                       key_padding_mask=kpm[b:b + 1], need_weights=False)  # (1, n_live, D)
        assert_close(f"y[{b}] (live rows)", y[b, live[b]], ty_b[0])
        loss = loss + (ty_b[0] * t64(G[b])[rows]).sum()
    loss.backward()
    theirs_in = {"x": tq.grad} if kind == "self" else {"x_q": tq.grad, "x_kv": tkv.grad}
    compare_grads(dins, theirs_in, dws, minitf_grads_from_torch(tmha))


# ---- LayerNorm ---------------------------------------------------------------------------------------
def test_layernorm_matches_torch():
    rng = np.random.default_rng(3)
    ln = LayerNorm(D, dtype=np.float64)
    ln.params["gamma"][:] = rng.uniform(0.5, 1.5, D)
    ln.params["beta"][:] = rng.standard_normal(D)
    x = 2.0 * rng.standard_normal((B, T, D)) + 0.5
    G = rng.standard_normal((B, T, D))
    y, cache = ln.forward(x)
    dx = ln.backward(G, cache)

    tln = torch.nn.LayerNorm(D, eps=ln.eps, dtype=torch.float64)
    with torch.no_grad():
        tln.weight.copy_(t64(ln.params["gamma"]))
        tln.bias.copy_(t64(ln.params["beta"]))
    tx = t64(x, True)
    ty = tln(tx)
    (ty * t64(G)).sum().backward()
    assert_close("y", y, ty)
    assert_close("dx", dx, tx.grad)
    assert_close("dgamma", ln.grads["gamma"], tln.weight.grad)
    assert_close("dbeta", ln.grads["beta"], tln.bias.grad)


# ---- activations, softmax ------------------------------------------------------------------------------
@pytest.mark.parametrize("ours, approximate", [((gelu_forward, gelu_backward), "none"),
                                               ((gelu_tanh_forward, gelu_tanh_backward), "tanh")])
def test_gelu_matches_torch(ours, approximate):
    rng = np.random.default_rng(4)
    x = 2.0 * rng.standard_normal((B, T, 16))
    G = rng.standard_normal(x.shape)
    fwd, bwd = ours
    y, cache = fwd(x)
    tx = t64(x, True)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    (ty * t64(G)).sum().backward()
    assert_close("y", y, ty)
    assert_close("dx", bwd(G, cache), tx.grad)


def test_softmax_and_its_backward_match_torch():
    rng = np.random.default_rng(5)
    z = 4.0 * rng.standard_normal((B, T, 7))
    z[0, 0, 3] = 800.0  # a huge logit: it must stay finite
    G = rng.standard_normal(z.shape)
    out = softmax(z)
    dz = softmax_backward(G, out)
    tz = t64(z, True)
    tout = torch.softmax(tz, dim=-1)
    (tout * t64(G)).sum().backward()
    assert_close("softmax", out, tout)
    assert_close("dsoftmax", dz, tz.grad)


def test_log_softmax_matches_torch():
    z = 4.0 * np.random.default_rng(6).standard_normal((B, T, 7))
    z[0, 0, 3] = 800.0
    assert_close("log_softmax", log_softmax(z), torch.log_softmax(t64(z), dim=-1))


# ---- Linear, Embedding -----------------------------------------------------------------------------------
def test_linear_matches_torch():
    rng = np.random.default_rng(6)
    lin = Linear(D, 5, rng=rng, dtype=np.float64)
    x, G = rng.standard_normal((B, T, D)), rng.standard_normal((B, T, 5))
    y, cache = lin.forward(x)
    dx = lin.backward(G, cache)
    tlin = torch.nn.Linear(D, 5, dtype=torch.float64)
    with torch.no_grad():
        tlin.weight.copy_(t64(lin.params["W"].T))  # torch stores W^T
        tlin.bias.copy_(t64(lin.params["b"]))
    tx = t64(x, True)
    ty = tlin(tx)
    (ty * t64(G)).sum().backward()
    assert_close("y", y, ty)
    assert_close("dx", dx, tx.grad)
    assert_close("dW", lin.grads["W"], tlin.weight.grad.T)
    assert_close("db", lin.grads["b"], tlin.bias.grad)


def test_embedding_with_padding_idx_matches_torch():
    rng = np.random.default_rng(7)
    V, pad = 10, 1
    emb = Embedding(V, D, padding_idx=pad, rng=rng, dtype=np.float64)
    ids = np.array([[2, pad, 2, 9], [pad, 4, 5, 2]])
    G = rng.standard_normal((B, T, D))
    x, cache = emb.forward(ids)
    emb.backward(G, cache)
    temb = torch.nn.Embedding(V, D, padding_idx=pad, dtype=torch.float64)
    with torch.no_grad():
        temb.weight.copy_(t64(emb.params["W_E"]))
    tx = temb(torch.from_numpy(ids))
    (tx * t64(G)).sum().backward()
    assert_close("x", x, tx)
    assert_close("dW_E", emb.grads["W_E"], temb.weight.grad)
