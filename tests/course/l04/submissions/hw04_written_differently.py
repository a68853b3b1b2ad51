"""Tasks 4.1-4.3, right but written differently from the reference: einsum instead of
matmul, a hand-written softmax, heads split by reshape and transpose, the empty source found
with np.where, the backward through one fused projection.  It must score full marks: the
tests check the numbers, not the style."""
import numpy as np


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _heads(x, H):  # (B, n, D) -> (B, H, n, Dh)
    B, n, D = x.shape
    return x.reshape(B, n, H, D // H).transpose(0, 2, 1, 3)


def _weights(Q, K, src_mask):
    scores = np.einsum("bhtd,bhsd->bhts", Q, K) / np.sqrt(Q.shape[-1]) + src_mask[:, None, None, :]
    empty = np.all(src_mask < -1e8, axis=-1)  # (B,) no real source token
    return np.where(empty[:, None, None, None], 0.0, _softmax(scores)).astype(Q.dtype)


def cross_attention_forward(X_q, X_kv, params, H, src_mask):
    B, T, D = X_q.shape
    Q = _heads(np.einsum("btd,de->bte", X_q, params["W_q"]) + params["b_q"], H)
    K = _heads(np.einsum("bsd,de->bse", X_kv, params["W_k"]) + params["b_k"], H)
    V = _heads(np.einsum("bsd,de->bse", X_kv, params["W_v"]) + params["b_v"], H)
    A = _weights(Q, K, src_mask)
    O = np.einsum("bhts,bhsd->bthd", A, V).reshape(B, T, D)
    return O @ params["W_o"] + params["b_o"], A


def encoder_keys_values(H_enc, params, H):
    return _heads(H_enc @ params["W_k"] + params["b_k"], H), _heads(H_enc @ params["W_v"] + params["b_v"], H)


def cross_attention_step(x_t, K, V, params, src_mask):
    y, _ = cross_attention_forward_from_cache(x_t[:, None, :], K, V, params, src_mask)
    return y[:, 0]


def cross_attention_forward_from_cache(X_q, K, V, params, src_mask):
    B, T, D = X_q.shape
    Q = _heads(X_q @ params["W_q"] + params["b_q"], K.shape[1])
    A = _weights(Q, K, src_mask)
    O = np.einsum("bhts,bhsd->bthd", A, V).reshape(B, T, D)
    return O @ params["W_o"] + params["b_o"], A


def cross_attention_backward(dY, X_q, X_kv, params, H, src_mask):
    B, T, D = X_q.shape
    S, Dh = X_kv.shape[1], D // H
    W_kv = np.concatenate([params["W_k"], params["W_v"]], axis=1)  # (D, 2D): K and V in one projection
    KV = X_kv @ W_kv + np.concatenate([params["b_k"], params["b_v"]])
    Q = _heads(X_q @ params["W_q"] + params["b_q"], H)
    K, V = _heads(KV[..., :D], H), _heads(KV[..., D:], H)
    A = _weights(Q, K, src_mask)
    O = np.einsum("bhts,bhsd->bthd", A, V).reshape(B, T, D)
    dO = np.einsum("bte,de->btd", dY, params["W_o"])
    dH = dO.reshape(B, T, H, Dh)  # (B, T, H, Dh)
    dA = np.einsum("bthd,bhsd->bhts", dH, V)
    dV = np.einsum("bhts,bthd->bshd", A, dH).reshape(B, S, D)
    dS = A * (dA - np.einsum("bhts,bhts->bht", dA, A)[..., None]) / np.sqrt(Dh)
    dQ = np.einsum("bhts,bhsd->bthd", dS, K).reshape(B, T, D)
    dK = np.einsum("bhts,bhtd->bshd", dS, Q).reshape(B, S, D)
    dKV = np.concatenate([dK, dV], axis=-1)  # (B, S, 2D)
    dW_kv = np.einsum("bsd,bse->de", X_kv, dKV)
    return {"dX_q": dQ @ params["W_q"].T, "dX_kv": dKV @ W_kv.T,
            "dW_q": np.einsum("btd,bte->de", X_q, dQ), "db_q": dQ.sum(axis=(0, 1)),
            "dW_k": dW_kv[:, :D], "db_k": dK.sum(axis=(0, 1)), "dW_v": dW_kv[:, D:], "db_v": dV.sum(axis=(0, 1)),
            "dW_o": np.einsum("btd,bte->de", O, dY), "db_o": dY.sum(axis=(0, 1))}
