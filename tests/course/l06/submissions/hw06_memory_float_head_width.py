"""Task 6.3: Q, K and V counted head by head with Dh = D / H, true division: B H L Dh numbers
each is right, but D / H is a float, so every byte count is a float (10368.0, not 10368): the
contract asks for integer counts (Python or NumPy ints), and a head's width is D // H."""


def _self_attention_numbers(B, L, D, H):
    Dh = D / H  # the mistake: a float
    return 3 * B * L * D + 3 * B * H * L * Dh + B * L + B * H * L * L  # x_hat, x_q, o; Q, K, V per head; rstd; A
