"""Task 2.4: split_heads reshapes (B, T, D) straight to (B, H, T, Dh), no transpose: each head
gets whole positions instead of its slice of every position's features."""


def split_heads(x, H):
    B, T, D = x.shape
    return x.reshape(B, H, T, D // H)
