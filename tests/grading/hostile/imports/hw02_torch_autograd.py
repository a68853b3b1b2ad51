"""Task 2.3: no backward -- torch autograd computes it.  torch is not importable in the
student's process (automatic differentiation would write the backward for the student)."""
import numpy as np


def attention_backward(dout, Q, K, V, A):
    import torch

    q, k, v = (torch.tensor(x, requires_grad=True) for x in (Q, K, V))
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    out = torch.softmax(scores, dim=-1) @ v
    out.backward(torch.tensor(dout))
    return tuple(np.asarray(t.grad.numpy()) for t in (q, k, v))
