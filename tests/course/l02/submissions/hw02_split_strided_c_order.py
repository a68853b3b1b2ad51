"""Task 2.4: split_heads as a zero-copy view with np.lib.stride_tricks.as_strided, its strides
computed from the shape as if x were C-ordered ("a view is cheaper than a transpose"): right
for every C-contiguous x, wrong for a Fortran-ordered (or otherwise strided) one, whose
memory is laid out differently."""
import numpy as np


def split_heads(x, H):
    B, T, D = x.shape
    Dh = D // H
    s = x.itemsize
    view = np.lib.stride_tricks.as_strided(x, shape=(B, H, T, Dh), strides=(T * D * s, Dh * s, D * s, s))
    return view
