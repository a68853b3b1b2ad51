"""Task 1.3: the bridge weights transposed: W_bridge used in torch's layout (H, He), h0 =
tanh(h_enc W^T + b), with the backward to match (dh_enc = da W, dW = da^T h_enc).  minitf stores
every linear map (D_in, D_out) for x @ W."""
import numpy as np


def condition_decoder(h_enc, embeddings, params, conditioning):
    p = params
    B, T, _ = embeddings.shape
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"].T + p["b_bridge"])  # as torch.nn.Linear: x W^T + b
    else:
        h0 = np.zeros((B, p["b_bridge"].shape[0]), dtype=h_enc.dtype)
    X = embeddings
    if conditioning in ("concat", "both"):
        X = np.concatenate([embeddings, np.broadcast_to(h_enc[:, None, :], (B, T, h_enc.shape[1]))], axis=-1)
    return h0, X


def condition_decoder_backward(dh0, dX, h_enc, params, conditioning):
    p = params
    E = dX.shape[-1] - (h_enc.shape[1] if conditioning in ("concat", "both") else 0)
    dh_enc = np.zeros_like(h_enc)
    dW, db = np.zeros_like(p["W_bridge"]), np.zeros_like(p["b_bridge"])
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"].T + p["b_bridge"])
        da = dh0.sum(axis=0) * (1.0 - h0 ** 2)
        dh_enc = dh_enc + da @ p["W_bridge"]
        dW, db = da.T @ h_enc, da.sum(axis=0)
    if conditioning in ("concat", "both"):
        dh_enc = dh_enc + dX[:, :, E:].sum(axis=1)
    return {"dh_enc": dh_enc, "dW_bridge": dW, "db_bridge": db}
