"""Tasks 4.1 and 4.3: minitf's own MultiHeadAttention.forward, reached through an object
(no source scan sees it: caught when it runs), and scaled_dot_product_attention_backward,
imported (found in the source).  No credit for either task; task 4.2 keeps its points."""
import numpy as np

from minitf.attention import MultiHeadAttention, merge_heads, scaled_dot_product_attention_backward, split_heads


def _attention(params, H):
    attn = MultiHeadAttention(params["W_q"].shape[0], H, rng=np.random.default_rng(0), dtype=params["W_q"].dtype)
    for name, value in params.items():
        attn.params[name][...] = value
    return attn


def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    Y, cache = _attention(params, H).forward(X_q, X_kv, src_mask[:, None, None, :])
    return Y, cache.attn.A


def cross_attention_backward(dY, X_q, X_kv, params, H, src_mask):
    p = params
    _, cache = _attention(params, H).forward(X_q, X_kv, src_mask[:, None, None, :])
    dQ, dK, dV, _, _ = scaled_dot_product_attention_backward(split_heads(dY @ p["W_o"].T, H), cache.attn)
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)
    D = dY.shape[-1]
    return {"dX_q": dQm @ p["W_q"].T, "dX_kv": dKm @ p["W_k"].T + dVm @ p["W_v"].T,
            "dW_q": X_q.reshape(-1, D).T @ dQm.reshape(-1, D), "db_q": dQm.sum(axis=(0, 1)),
            "dW_k": X_kv.reshape(-1, D).T @ dKm.reshape(-1, D), "db_k": dKm.sum(axis=(0, 1)),
            "dW_v": X_kv.reshape(-1, D).T @ dVm.reshape(-1, D), "db_v": dVm.sum(axis=(0, 1)),
            "dW_o": cache.o.reshape(-1, D).T @ dY.reshape(-1, D), "db_o": dY.sum(axis=(0, 1))}
