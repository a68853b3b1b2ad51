"""Homework 8 -- Training: teacher forcing & the loss.  Reference solution.

Instructor material: not part of the installed package, never handed to students.  Each
function follows the template's contract; the comments give the derivation.  CI grades this
file and expects full marks (``minitf grade hw08 --reference --instructor tests/instructor``).
The answers to the concept check must agree with ``key.json``.

Shapes: B batch, S source length, T target length, D d_model, H heads, Dh = D / H,
V vocabulary, L_dec decoder blocks.
"""
from __future__ import annotations

import math

import numpy as np



def split_heads(x, H):
    """(B, T, D) -> (B, H, T, Dh): the heads side by side along D, moved to their own axis."""
    B, T, D = x.shape
    return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, T, H, Dh) -> (B, H, T, Dh)


def merge_heads(x):
    """(B, H, T, Dh) -> (B, T, D): the inverse of split_heads."""
    B, H, T, Dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * Dh)  # (B, T, H, Dh) -> (B, T, D)

IGNORE_INDEX = -100  # the label of a padding position: no loss, no gradient (PyTorch's ignore_index)


# =====================================================================================
# Task 8.1 -- shifted inputs: what the decoder is fed
# =====================================================================================
def shift_right(labels, start_id, pad_id):
    """Task 8.1: the decoder inputs of teacher forcing, built from the labels.

    labels (B, T) -> decoder_input_ids (B, T), the dtype of ``labels``.

        position t          0        1      ...   T-1
        labels              y_0      y_1    ...   y_{T-1}      what position t predicts
        decoder_input_ids   <start>  y_0    ...   y_{T-2}      what position t is fed

    The last label is never fed: nothing comes after it.  Feeding y_t itself at position
    t would hand the model the answer (label leakage).
    """
    labels = np.asarray(labels)
    B, T = labels.shape
    out = np.empty_like(labels)  # (B, T) a new array: the labels stay as they are
    out[:, 1:] = labels[:, :-1]  # (B, T-1) position t is fed y_{t-1}
    out[:, 0] = start_id  # position 0 has no previous token: the start token
    out[out == IGNORE_INDEX] = pad_id  # -100 is not a token id: padding goes in as <pad>
    return out


# =====================================================================================
# Task 8.2 -- the causal mask
# =====================================================================================
MASK_VALUE = -1e9  # finite: masks can be added together without -inf - -inf = nan


def causal_mask(T, dtype=np.float32):
    """Task 8.2: (T, T) additive mask, 0 where key s <= query t, MASK_VALUE where s > t.

    Added to the scores before the softmax, MASK_VALUE drives exp(score) to 0: position t
    gives no weight to the inputs after it, which are y_t, y_{t+1}, ... -- the very tokens
    it is asked to predict.
    """
    t = np.arange(T)[:, None]  # (T, 1) query positions
    s = np.arange(T)[None, :]  # (1, T) key positions
    return np.where(s > t, MASK_VALUE, 0.0).astype(dtype)  # (T, T)


# =====================================================================================
# Task 8.3 -- the loss, and its gradient p_hat - y
# =====================================================================================
def masked_cross_entropy(logits, labels, ignore_index=IGNORE_INDEX):
    """Task 8.3: logits (B, T, V), labels (B, T) -> (loss, dlogits (B, T, V)).

    For one real position with logits z and label y, p_hat = softmax(z):

        loss = -log p_hat[y] = -z[y] + log sum_v exp(z_v)
        d loss / d z_v = -[v = y] + exp(z_v) / sum_u exp(z_u) = p_hat_v - onehot(y)_v

    The mean divides the sum by n_real, so every real position's gradient is divided by
    n_real too; padding positions are multiplied by 0 in both.
    """
    logits = np.asarray(logits)
    labels = np.asarray(labels)
    real = labels != ignore_index  # (B, T) which positions count
    n_real = int(real.sum())
    y = np.where(real, labels, 0)  # (B, T) any valid id at padding: it is masked out below

    # log softmax, stably: subtracting the row maximum changes nothing and keeps exp <= 1
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (B, T, V)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (B, T, V)
    nll = -np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]  # (B, T) -log p_hat[y]
    loss = float((nll * real).sum() / n_real)  # mean over real tokens, not over B * T

    dlogits = np.exp(log_p)  # (B, T, V) p_hat
    np.put_along_axis(dlogits, y[..., None], np.take_along_axis(dlogits, y[..., None], axis=-1) - 1.0,
                      axis=-1)  # p_hat - onehot(y)
    dlogits *= (real / n_real)[..., None].astype(dlogits.dtype)  # (B, T, 1) 1/n_real, or 0 at padding
    return loss, dlogits


# =====================================================================================
# Task 8.4 -- the gradient's journey: through cross-attention into the encoder
# =====================================================================================
def cross_attention_backward(attn, dy, cache):
    """Task 8.4 (a): dy (B, T, D) -> (dx_q (B, T, D), dH_enc (B, S, D)).

    The forward in reverse.  Queries come from the decoder stream x_q, keys and values
    both from H_enc, so H_enc's gradient has two terms, one through K and one through V.
    """
    p, H = attn.params, attn.n_heads
    Q, K, V, A = cache.attn  # (B, H, T, Dh), (B, H, S, Dh), (B, H, S, Dh), (B, H, T, S)
    Dh = Q.shape[-1]

    # forward: y = o @ W_o + b_o
    do = dy @ p["W_o"].T  # (B, T, D) @ (D, D) -> (B, T, D)
    dheads = split_heads(do, H)  # (B, H, T, Dh)
    # forward: heads = A @ V
    dA = dheads @ V.swapaxes(-1, -2)  # (B, H, T, Dh) @ (B, H, Dh, S) -> (B, H, T, S)
    dV = A.swapaxes(-1, -2) @ dheads  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: A = softmax(scores) over the keys; its Jacobian is diag(A) - A A^T, row by row
    dscores = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (B, H, T, S)
    # forward: scores = Q K^T / sqrt(Dh) + mask    (the mask is a constant)
    dscores /= math.sqrt(Dh)
    dQ = dscores @ K  # (B, H, T, S) @ (B, H, S, Dh) -> (B, H, T, Dh)
    dK = dscores.swapaxes(-1, -2) @ Q  # (B, H, S, T) @ (B, H, T, Dh) -> (B, H, S, Dh)
    # forward: Q = split(x_q @ W_q + b_q),  K = split(H_enc @ W_k + b_k),  V = split(H_enc @ W_v + b_v)
    dx_q = merge_heads(dQ) @ p["W_q"].T  # (B, T, D) @ (D, D) -> (B, T, D)
    dH_enc = merge_heads(dK) @ p["W_k"].T + merge_heads(dV) @ p["W_v"].T  # (B, S, D): through K and V
    return dx_q, dH_enc


def encoder_output_gradient(cross_attns, douts, caches):
    """Task 8.4 (b): dL/dH_enc (B, S, D) = sum over decoder blocks l of block l's share.

    H_enc feeds every decoder block's cross-attention, so by the multivariable chain rule
    its gradient is the sum of what each use hands back.  (This is also why layers
    *accumulate* gradients with +=.)
    """
    dH_enc = None
    for attn, dy, cache in zip(cross_attns, douts, caches):
        _, share = cross_attention_backward(attn, dy, cache)  # (B, S, D) block l's share
        dH_enc = share if dH_enc is None else dH_enc + share
    return dH_enc


# =====================================================================================
# Task 8.5 -- training vs inference: the gap that matters
# =====================================================================================
def free_running_decode(model, src_ids, start_id, eos_id, max_len):
    """Task 8.5 (a): src_ids (B, S) -> generated (B, T' <= max_len), the model feeding itself.

    Training feeds y_{t-1}; generation has no y, so it feeds y-hat_{t-1}, the model's own
    previous choice.  The encoder runs once; the decoder once per generated token.
    """
    src_ids = np.asarray(src_ids)
    B = src_ids.shape[0]
    H_enc, _ = model.encode(src_ids)  # (B, S, D) once per example
    src_mask = model.source_mask(src_ids)  # (B, 1, 1, S)
    prefix = np.full((B, 1), start_id, dtype=np.int64)  # (B, 1) the start token
    done = np.zeros(B, dtype=bool)  # (B,) rows that have produced <eos>
    for _ in range(max_len):
        logits, _ = model.decode(prefix, H_enc, src_mask)  # (B, t, V)
        next_id = logits[:, -1].argmax(axis=-1)  # (B,) the model's own prediction
        next_id = np.where(done, model.config.pad_id, next_id)  # finished rows: nothing more, padding
        prefix = np.concatenate([prefix, next_id[:, None]], axis=1)  # (B, t+1) fed back next step
        done |= next_id == eos_id
        if done.all():
            break
    return prefix[:, 1:]  # (B, T') without the start token


def exposure_bias(model, batch, start_id, eos_id):
    """Task 8.5 (b): teacher-forced and free-running token accuracy of one model, and the gap."""
    labels = np.asarray(batch.labels)
    B, T = labels.shape
    real = labels != IGNORE_INDEX  # (B, T)
    n_real = real.sum()

    # teacher-forced: the true prefix, all T positions in one pass (exactly as in training)
    logits, _ = model.forward(batch.input_ids, batch.decoder_input_ids)  # (B, T, V)
    tf_correct = (logits.argmax(axis=-1) == labels) & real  # (B, T)

    # free-running: the model's own prefix, one token at a time
    generated = free_running_decode(model, batch.input_ids, start_id, eos_id, max_len=T)  # (B, T')
    pred = np.full((B, T), -1, dtype=np.int64)  # (B, T) -1 where nothing was generated
    pred[:, :generated.shape[1]] = generated
    fr_correct = (pred == labels) & real  # (B, T)

    tf_acc = float(tf_correct.sum() / n_real)
    fr_acc = float(fr_correct.sum() / n_real)
    return {"teacher_forced_accuracy": tf_acc, "free_running_accuracy": fr_acc, "gap": tf_acc - fr_acc}


# =====================================================================================
# Task 8.6 -- concept check
# =====================================================================================
ANSWERS = {
    "8.6.1": "b",  # y_{t-1}; feeding y_t is label leakage
    "8.6.2": "c",  # there is no teacher at generation time
    "8.6.3": "a",  # teacher forcing changes the inputs, not the loss
    "8.6.4": "d",  # not a regulariser
    "8.6.5": "c",  # exposure bias: evaluate free-running too
    "8.6.6": "b",  # divide by the real tokens
}
