"""Task 6.4: the head width written Dh = D / H, true division, so the per-head products and
every count built on them are floats (1.2e+05, not 120000): the contract asks for integer
counts (Python or NumPy ints, compared exactly), and D // H is the width of a head."""


def _attention_flops(B, Lq, Lk, D, H):
    Dh = D / H  # the mistake: a float
    projections = 2 * _matmul(B * Lq, D, D) + 2 * _matmul(B * Lk, D, D)
    per_head = _matmul(Lq, Dh, Lk) + _matmul(Lq, Lk, Dh)
    return projections + B * H * per_head
