"""Task 6.4: "the backward costs the same as the forward": each forward product has two
backward products of its size (dX and dW), so the backward is about twice the forward."""


def training_flops(config, B, S, T):
    forward = forward_flops(config, B, S, T)["total"]
    return {"forward": forward, "backward": forward, "total": 2 * forward}  # the mistake
