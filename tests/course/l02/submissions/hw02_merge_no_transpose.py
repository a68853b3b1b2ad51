"""Task 2.4: merge_heads reshapes (B, H, T, Dh) straight to (B, T, D), without transposing back."""


def merge_heads(x):
    B, H, T, Dh = x.shape
    return x.reshape(B, T, H * Dh)
