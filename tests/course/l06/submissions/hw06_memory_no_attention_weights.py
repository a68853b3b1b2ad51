"""Task 6.3: the attention sub-layers counted as their (B, L, D) arrays only: the attention
weights A, (B, H, queries, keys), forgotten -- the only terms quadratic in the lengths."""


def _self_attention_numbers(B, L, D, H):
    return 6 * B * L * D + B * L  # the mistake: no B H L^2 for A


def _cross_attention_numbers(B, T, S, D, H):
    return 4 * B * T * D + B * T + 2 * B * S * D  # the mistake: no B H T S for A
