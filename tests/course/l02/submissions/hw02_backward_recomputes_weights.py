"""Task 2.3: recomputes the weights from Q and K instead of using the A it is given: right
without a mask, wrong as soon as a mask zeroed some weights."""
import math


def attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    _, A = attention_forward(Q, K, V)  # the forward again, without its mask
    dV = A.swapaxes(-1, -2) @ dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = softmax_backward(dA, A)
    dQ = dscores @ K * scale
    dK = dscores.swapaxes(-1, -2) @ Q * scale
    return dQ, dK, dV
