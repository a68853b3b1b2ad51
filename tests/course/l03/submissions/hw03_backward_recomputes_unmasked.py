"""Task 3.3: the backward recomputes the weights from Q and K (as a memory-saving backward would)
and loses the mask: blocked keys get gradient."""
import math


def masked_attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    P = softmax(Q @ K.swapaxes(-1, -2) * scale)  # recomputed "to save memory": no mask here
    dV = P.swapaxes(-1, -2) @ dout
    dP = dout @ V.swapaxes(-1, -2)
    dscores = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    return (dscores @ K) * scale, (dscores.swapaxes(-1, -2) @ Q) * scale, dV
