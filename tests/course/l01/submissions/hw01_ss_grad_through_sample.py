"""Task 1.4: gradient through the sampled token: where the model's own token was fed, the gradient
at its embedding is sent back into the logits it was chosen from, straight through a soft
embedding softmax(logits) W_E -- as if the choice were differentiable."""
import numpy as np


def scheduled_sampling_backward(dlogits, dX, logits, fed, gold, W_E):
    dW_E = np.zeros_like(W_E)
    np.add.at(dW_E, fed, dX)
    p = softmax(logits[:, :-1])  # (B, T-1, V) the distributions steps 1.. were chosen from
    dp = dX[:, 1:] @ W_E.T  # (B, T-1, V) "x_t = p_{t-1} W_E"
    dz = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    out = dlogits.copy()
    out[:, :-1] += dz * ~gold[:, 1:, None]  # only where the choice was the model's
    return {"dlogits": out, "dW_E": dW_E}
