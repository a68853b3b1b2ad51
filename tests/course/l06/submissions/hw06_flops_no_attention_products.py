"""Task 6.4: an attention counted as its four projections only, "the rest is a softmax":
the scores Q K^T and the weighted sum A V are matrix products too, in every head."""


def _attention_flops(B, Lq, Lk, D, H):
    return 2 * _matmul(B * Lq, D, D) + 2 * _matmul(B * Lk, D, D)  # the mistake: no Q K^T, no A V
