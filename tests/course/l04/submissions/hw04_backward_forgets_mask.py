"""Task 4.3: the backward recomputes the forward's weights without the source padding mask
(so gradient reaches the padded source positions)."""
import math

import numpy as np



def cross_attention_backward(dY, X_q, X_kv, params, H, src_mask):
    p = params
    # the forward again, keeping what the backward needs
    Q = split_heads(X_q @ p["W_q"] + p["b_q"], H)  # (B, H, T, Dh)
    K = split_heads(X_kv @ p["W_k"] + p["b_k"], H)  # (B, H, S, Dh)
    V = split_heads(X_kv @ p["W_v"] + p["b_v"], H)  # (B, H, S, Dh)
    heads, A = _attend(Q, K, V, np.zeros_like(src_mask))  # "the mask is a constant: no gradient"
    O = merge_heads(heads)  # (B, T, D)
    Dh = Q.shape[-1]

    # forward: Y = O @ W_o + b_o
    dO = dY @ p["W_o"].T  # (B, T, D) @ (D, D) -> (B, T, D)
    dW_o = _weight_grad(O, dY)  # (D, D) = O^T dY, not dY^T O
    db_o = _sum_rows(dY)  # (D,)
    dheads = split_heads(dO, H)  # (B, H, T, Dh)
    # forward: heads = A @ V
    dA = dheads @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    dV = A.swapaxes(-1, -2) @ dheads  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: A = softmax(scores) over the keys; Jacobian diag(A) - A A^T row by row.  A is 0 at
    # padded keys (and on a whole row without source), so dscores is 0 there: padding gets nothing.
    dscores = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (B, H, T, S)
    # forward: scores = Q K^T / sqrt(Dh) + mask    (the mask is a constant)
    dscores = dscores / math.sqrt(Dh)
    dQ = dscores @ K  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = dscores.swapaxes(-1, -2) @ Q  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: Q = split(X_q @ W_q + b_q), K = split(X_kv @ W_k + b_k), V = split(X_kv @ W_v + b_v)
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)  # (B, T, D), (B, S, D), (B, S, D)
    dX_q = dQm @ p["W_q"].T  # (B, T, D): on down the decoder
    dX_kv = dKm @ p["W_k"].T + dVm @ p["W_v"].T  # (B, S, D): X_kv fed the keys AND the values
    return {
        "dX_q": dX_q, "dX_kv": dX_kv,
        "dW_q": _weight_grad(X_q, dQm), "db_q": _sum_rows(dQm),
        "dW_k": _weight_grad(X_kv, dKm), "db_k": _sum_rows(dKm),  # 0 up to rounding: softmax ignores b_k
        "dW_v": _weight_grad(X_kv, dVm), "db_v": _sum_rows(dVm),
        "dW_o": dW_o, "db_o": db_o,
    }
