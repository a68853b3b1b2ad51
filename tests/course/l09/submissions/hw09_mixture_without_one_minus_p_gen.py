"""Task 9.3: the copy distribution is added without its weight (1 - p_gen), in the forward and
in the backward: P = p_gen P_vocab + scatter_add(a)."""
import numpy as np


def copy_mixture_forward(P_vocab, p_gen, a, src_ext, vocab_size):
    B, T, V = P_vocab.shape
    S = a.shape[-1]
    P = np.zeros((B, T, vocab_size), dtype=P_vocab.dtype)
    idx = (np.broadcast_to(np.arange(B)[:, None, None], (B, T, S)), np.broadcast_to(np.arange(T)[None, :, None], (B, T, S)),
           np.broadcast_to(src_ext[:, None, :], (B, T, S)))
    np.add.at(P, idx, a)
    P[..., :V] += p_gen[..., None] * P_vocab
    return P


def copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext):
    V = P_vocab.shape[-1]
    dP_src = np.take_along_axis(dP, np.broadcast_to(src_ext[:, None, :], a.shape), axis=-1)
    return p_gen[..., None] * dP[..., :V], (dP[..., :V] * P_vocab).sum(-1), dP_src
