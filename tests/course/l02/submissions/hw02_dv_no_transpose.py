"""Task 2.3: dV = A dout, the transpose missing (it runs only when S == T, and is wrong there)."""
import math


def attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dV = A @ dout  # should be A^T dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = softmax_backward(dA, A)
    dQ = dscores @ K * scale
    dK = dscores.swapaxes(-1, -2) @ Q * scale
    return dQ, dK, dV
