"""Task 1.3 (a): "concat" starts the decoder from ``np.zeros((B, Dr))`` -- a float64 array, so a
float32 model's h0 comes back float64 (the template: the dtype of ``h_enc``)."""
import numpy as np


def condition_decoder(h_enc, embeddings, params, conditioning):
    p = params
    B, T, _ = embeddings.shape
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"] + p["b_bridge"])
    else:
        h0 = np.zeros((B, p["W_bridge"].shape[1]))  # float64, whatever h_enc's dtype
    X = embeddings
    if conditioning in ("concat", "both"):
        X = np.concatenate([embeddings, np.broadcast_to(h_enc[:, None, :], (B, T, h_enc.shape[1]))], axis=-1)
    return h0, X
