"""Task 2.3: the backward forgets the forward's 1/sqrt(Dh): dQ and dK sqrt(Dh) times too large
(the bug Lesson 2 measures with forgotten_scale_error)."""


def attention_backward(dout, Q, K, V, A):
    dV = A.swapaxes(-1, -2) @ dout
    dA = dout @ V.swapaxes(-1, -2)
    dscores = softmax_backward(dA, A)
    dQ = dscores @ K
    dK = dscores.swapaxes(-1, -2) @ Q
    return dQ, dK, dV
