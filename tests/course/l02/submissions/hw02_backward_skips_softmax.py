"""Task 2.3: the gradient of the weights used as the gradient of the scores: the softmax
backward skipped."""
import math


def attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dV = A.swapaxes(-1, -2) @ dout
    dscores = dout @ V.swapaxes(-1, -2)  # dA, passed straight on
    dQ = dscores @ K * scale
    dK = dscores.swapaxes(-1, -2) @ Q * scale
    return dQ, dK, dV
