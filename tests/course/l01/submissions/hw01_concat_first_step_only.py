"""Task 1.3: concat's gradient taken from the first step only: h_enc is concatenated to the input
of every step, but its gradient is read from step 0's input alone (dX[:, 0, E:])."""
import numpy as np


def condition_decoder_backward(dh0, dX, h_enc, params, conditioning):
    p = params
    E = dX.shape[-1] - (h_enc.shape[1] if conditioning in ("concat", "both") else 0)
    dh_enc = np.zeros_like(h_enc)
    dW, db = np.zeros_like(p["W_bridge"]), np.zeros_like(p["b_bridge"])
    if conditioning in ("init", "both"):
        h0 = np.tanh(h_enc @ p["W_bridge"] + p["b_bridge"])
        da = dh0.sum(axis=0) * (1.0 - h0 ** 2)
        dh_enc = dh_enc + da @ p["W_bridge"].T
        dW, db = h_enc.T @ da, da.sum(axis=0)
    if conditioning in ("concat", "both"):
        dh_enc = dh_enc + dX[:, 0, E:]  # where h_enc entered the decoder
    return {"dh_enc": dh_enc, "dW_bridge": dW, "db_bridge": db}
