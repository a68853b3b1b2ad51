"""Task 3.3: the softmax backward keeps only the Jacobian's diagonal: dscores = A * dA."""
import math


def masked_attention_backward(dout, Q, K, V, A):
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dV = A.swapaxes(-1, -2) @ dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = A * dA  # "the derivative of a softmax is p (1 - p)", applied elementwise
    return (dscores @ K) * scale, (dscores.swapaxes(-1, -2) @ Q) * scale, dV
