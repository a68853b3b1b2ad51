"""Task 2.3: dK = dscores Q, the transpose of dscores missing (runs only when S == T)."""
import math


def attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dV = A.swapaxes(-1, -2) @ dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = softmax_backward(dA, A)
    dQ = dscores @ K * scale
    dK = dscores @ Q * scale  # should be dscores^T Q
    return dQ, dK, dV
