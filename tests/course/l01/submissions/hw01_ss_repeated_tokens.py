"""Task 1.4: repeated tokens lose their gradients: dW_E[fed] += dX with fancy indexing writes each
row once, so a token fed n times keeps one of its n gradients (np.add.at adds them all)."""
import numpy as np


def scheduled_sampling_backward(dlogits, dX, logits, fed, gold, W_E):
    dW_E = np.zeros_like(W_E)
    dW_E[fed.reshape(-1)] += dX.reshape(-1, dX.shape[-1])
    return {"dlogits": dlogits.copy(), "dW_E": dW_E}
