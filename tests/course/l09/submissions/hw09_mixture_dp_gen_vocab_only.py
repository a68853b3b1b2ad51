"""Task 9.3: dp_gen takes only the generation part's term, sum dP P_vocab, and forgets that p_gen
also weighs the copy part through (1 - p_gen)."""
import numpy as np


def copy_mixture_backward(dP, P_vocab, p_gen, a, src_ext):
    V = P_vocab.shape[-1]
    dP_src = np.take_along_axis(dP, np.broadcast_to(src_ext[:, None, :], a.shape), axis=-1)
    dp_gen = (dP[..., :V] * P_vocab).sum(axis=-1)
    return p_gen[..., None] * dP[..., :V], dp_gen, (1.0 - p_gen)[..., None] * dP_src
